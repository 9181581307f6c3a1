"""Chat shorthand written out as the corpus writes it, before retrieval (gatebot_knowledge)."""

from __future__ import annotations

from collections.abc import Callable

from gatebot_knowledge.shorthand import written_out


def _corpus(*words: str) -> Callable[[str], bool]:
    held = set(words)
    return lambda w: w.lower() in held


def test_shorthand_is_written_out_where_the_corpus_spells_it_out() -> None:
    known = _corpus("pull", "requests", "microsoft", "teams")
    assert written_out("status on my PRs?", known) == "status on my pull requests?"
    assert written_out("alerts in MS Teams", known) == "alerts in microsoft Teams"


def test_a_corpus_that_uses_the_short_form_keeps_it() -> None:
    assert written_out("is my repo private", _corpus("repo", "repository")) == "is my repo private"


def test_no_word_the_corpus_lacks_is_brought_in() -> None:
    # "k8s" stays: the corpus never says "kubernetes", so writing it out would find nothing.
    assert written_out("do you run on k8s", _corpus("run")) == "do you run on k8s"


def test_a_password_and_two_factor_are_written_out() -> None:
    known = _corpus("password", "two", "factor", "authentication")
    assert written_out("forgot my pw", known) == "forgot my password"
    assert written_out("force MFA for all", known) == "force two-factor authentication for all"


def test_a_phrase_and_a_word_help_pages_write_otherwise_are_written_out() -> None:
    known = _corpus("two", "factor", "authentication", "required", "make")
    assert written_out("make two-step verification compulsory", known) == (
        "make two-factor authentication required"
    )
    # The corpus that says it the customer's way keeps it.
    assert written_out("two-step verification", _corpus("two", "step", "verification")) == (
        "two-step verification"
    )
