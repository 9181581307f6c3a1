"""Chat shorthand read as the words a corpus writes: "PRs" as "pull requests", "MS Teams" as
"Microsoft Teams". Customers abbreviate; help pages spell out. Without this, "will pipelines show
the build result on my github PRs?" searched for a word no passage holds, and the pack-fit rule
read "PRs" as a name the pack never mentions (a question about something else) and refused an
answer the GitHub entry gives.

A word is written out only where the corpus lacks it and holds every word of its long form, so a
pack that uses the short form itself ("repo") keeps it, and no expansion brings in a word the
pack never says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: Common shorthand in software customers' messages and its long form (lower case).
SHORTHAND: dict[str, str] = {
    "pr": "pull request",
    "prs": "pull requests",
    "ms": "microsoft",
    "repo": "repository",
    "repos": "repositories",
    "env": "environment",
    "envs": "environments",
    "var": "variable",
    "vars": "variables",
    "k8s": "kubernetes",
    "2fa": "two-factor authentication",
    "sso": "single sign-on",
    "org": "organization",
    "orgs": "organizations",
    "acct": "account",
    "pwd": "password",
    "pw": "password",
    "passwd": "password",
    "mfa": "two-factor authentication",
    "perms": "permissions",
    "prod": "production",
    "sha": "commit",
    "shas": "commits",
    "dind": "docker",
    "gh": "github",
    "auth": "authentication",
    "creds": "credentials",
    "idp": "identity provider",
    "idps": "identity providers",
    "infra": "infrastructure",
    "deps": "dependencies",
    "admins": "administrators",
    "b4": "before",
    "asap": "immediately",
    # Words customers use for what help pages word otherwise, written out on the same terms.
    "mandatory": "required",
    "compulsory": "required",
    "config": "configuration",
    "db": "database",
    "notifs": "notifications",
    "msgs": "messages",
    "ack": "acknowledge",
    "acks": "acknowledges",
    "acked": "acknowledged",
    "unacked": "not acknowledged",
}

_WORD = re.compile(r"[A-Za-z0-9]+")
#: Phrases customers use for what help pages word otherwise ("two-step verification" for
#: "two-factor authentication"), written out on the same terms as a word: where the corpus lacks
#: a word of the phrase and holds every word of its long form.
PHRASES: dict[str, str] = {
    "two-step verification": "two-factor authentication",
    "two step verification": "two-factor authentication",
    "2-step verification": "two-factor authentication",
    "two-factor auth": "two-factor authentication",
    "multi-factor authentication": "two-factor authentication",
}
_PHRASE = re.compile("|".join(re.escape(p) for p in PHRASES), re.IGNORECASE)
#: Phrases of words every corpus may hold, meant as one thing a help page words otherwise: "is
#: there a free version" asks for the free tier, and, read word by word, drew the trial entry
#: ("the trial version"). Written out where the corpus never says the phrase itself (``says``)
#: and holds every word of the long form.
SAID_OTHERWISE: dict[str, str] = {
    "free version": "free tier",
    "free edition": "free tier",
    "free account": "free tier",
    "freemium": "free tier",
    "free option": "free tier",
    "free plan": "free tier",
    "free package": "free tier",
    "free level": "free tier",
    "free offering": "free tier",
    "free forever": "free tier",
    "zero-cost option": "free tier",
    "zero cost option": "free tier",
    "no-cost option": "free tier",
    "no cost option": "free tier",
    "no-cost plan": "free tier",
    "no cost plan": "free tier",
}
_SAID_OTHERWISE = re.compile(
    r"\b(?:" + "|".join(re.escape(p) for p in SAID_OTHERWISE) + r")\b", re.IGNORECASE
)


#: "ping our website", "does it ping our sites": a check of them, in a monitoring pack's words.
#: Only of a site, a service or an address: "ping me on slack" asks to be told, not checked.
_PINGED = re.compile(
    r"\bping(s|ed|ing)?\b(?=\s+(?:(?:our|my|the|your|their|a|an|each|every|all)\s+)?"
    r"(?:[\w-]+\s+)?(?:sites?|websites?|apis?|endpoints?|servers?|urls?|apps?|services?"
    r"|homepages?|pages?|domains?)\b"
    # (the noun ends what is pinged: not "ping the app team", "the website manager by sms")
    r"(?=\s*(?:[?.!,;:]|$|(?:from|every|each|with|and|or|to|in|on|at|for|when|if|so|how|too"
    r"|also|regularly|often)\b)))",
    re.IGNORECASE,
)


def written_out(
    query: str, known: Callable[[str], bool], says: Callable[[str], bool] | None = None
) -> str:
    """``query`` with each shorthand word and phrase (:data:`PHRASES`) written out where
    ``known`` (is this word in the corpus?) says no for the short form and yes for every word of
    the long one; with ``says`` (does the corpus hold this phrase?), each of
    :data:`SAID_OTHERWISE` too, where the corpus never says it."""
    if says is not None:

        def otherwise(match: re.Match[str]) -> str:
            said = match.group(0)
            long_form = SAID_OTHERWISE[said.lower()]
            if says(said.lower()) or not all(known(w) for w in _WORD.findall(long_form)):
                return said
            return long_form

        query = _SAID_OTHERWISE.sub(otherwise, query)

    def phrase(match: re.Match[str]) -> str:
        said = match.group(0)
        long_form = PHRASES[said.lower()]
        if all(known(w) for w in _WORD.findall(said)):
            return said
        return long_form if all(known(w) for w in _WORD.findall(long_form)) else said

    query = _PHRASE.sub(phrase, query)
    if known("check"):  # (a pack may say "ping" of alerts: "will downtime pings show up")
        query = _PINGED.sub(lambda m: "check" + (m.group(1) or ""), query)

    def expand(match: re.Match[str]) -> str:
        word = match.group(0)
        long_form = SHORTHAND.get(word.lower())
        if long_form is None or known(word):
            return word
        if not all(known(w) for w in _WORD.findall(long_form)):
            return word
        return long_form

    return _WORD.sub(expand, query)
