"""A one-time code by email before a change on something the conversation owns only by a typed
email (``GATEBOT_EMAIL_CODES``).

An anonymous visitor owns an order by knowing its email (the lookup answers only for it), which
anyone who knows the address can do. With codes on, before the read-back of a ``changes`` tool
with an ownership rule, the flow sends a 6-digit code to the conversation's email value (the one
the lookup matched) and asks for it; the change is read back and made only after the right code.
A wrong code is refused, at most :data:`MAX_TRIES` times, then a person takes over; a code lasts
:data:`TTL_S` seconds. A conversation with a verified identity (a signed widget visitor, a Slack
or Discord user) needs none: its ownership came from who it is.

Only a salted hash of the code is kept (in the conversation's state), never the code: not in a
record, a checkpoint, a log or a prompt.

A flow that is started again asks a fresh code, so codes sent are capped: at most
:data:`MAX_SENDS` per conversation (its state) and per email address (the flows' host, in this
process's memory, keyed by a hash of the address) in :data:`SEND_WINDOW_S` seconds. Past the cap
the customer is told so and handed to a person: guesses stay few, and the owner's inbox is not
flooded.

What the customer reads and the email are the pack's templates (``email_code_*``) in the
conversation's language, as every template a flow says is: fixed pack text, not a model's draft,
so it needs no reply gate. A pack without them falls back to the English in :data:`DEFAULTS`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import time
from typing import Any

from bot.errors import GatebotError
from bot.extend.tool import Tool
from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.state import render_arguments
from bot.flows.steps.base import StepHost, StepTurn
from bot.turn.act import text_reply
from bot.turn.decide import Decision

log = logging.getLogger(__name__)

DIGITS = 6
MAX_TRIES = 3
TTL_S = 600
_CODE = re.compile(rf"(?<!\d)(\d{{{DIGITS}}})(?!\d)")

MAX_SENDS = 3
SEND_WINDOW_S = 3600
#: The email addresses (hashed) the per-address cap follows at once; the oldest is forgotten.
MAX_TRACKED_EMAILS = 10_000

#: The texts when the pack has no ``email_code_*`` templates.
DEFAULTS = {
    "email_code_sent": (
        "To keep your account safe, I've sent a {digits}-digit code to the email on file. "
        "Please type it here and I'll go ahead."
    ),
    "email_code_wrong": (
        "That code isn't right. Please check the email and type the {digits}-digit code "
        "({left} tries left)."
    ),
    "email_code_expired": (
        "That code has expired, so I've sent a new one to the same email. Please type it here."
    ),
    "email_code_limit": (
        "I've already sent as many codes as I safely can for now, so I won't send another."
    ),
    "email_code_subject": "Your {company} verification code",
    "email_code_body": (
        "Your code is {code}. Type it in the chat to confirm the change.\n"
        "It expires in {minutes} minutes. If you did not ask for this, ignore this email."
    ),
}


def text(host: StepHost, t: StepTurn, name: str, **values: Any) -> str:
    """A code template in the conversation's language (else the pack's, else the default)."""
    pack = host.pack
    if name in pack.templates.get(pack.language, {}):
        return pack.template(name, t.turn.conversation.language, **values)
    return DEFAULTS[name].format(company=pack.company, **values)


def _digest(salt: str, code: str) -> str:
    return hashlib.sha256(f"{salt}:{code}".encode()).hexdigest()


def _key(tool: Tool, step: Step, ctx: dict[str, Any]) -> str | None:
    value = render_arguments(step.arguments, ctx).get(tool.ownership)
    return None if value is None else f"{tool.ownership}:{value}"


async def gate(host: StepHost, t: StepTurn, step: Step, tool: Tool | None) -> StepResult | None:
    """None when the change may go on to its read-back (codes off, a verified identity, nothing
    owned by email, or the right code given); else what the turn says and waits on."""
    if not host.email_codes or tool is None or tool.ownership == "any":
        return None
    if t.turn.conversation.verified_user_id:
        return None
    key = _key(tool, step, t.context())
    if key is None:
        return None  # no owned value: the ownership check refuses it anyway
    codes = t.state.setdefault("email_codes", {})
    entry = codes.get(key)
    if entry is not None and entry.get("run") != t.progress["run"]:
        entry = None  # each run of a flow asks its own code
    if entry is not None and entry.get("verified"):
        return None
    rule = f"flow {t.flow.name} step {step.id}: {step.tools[0]} changes what an email owns"
    if entry is None:
        return await _send(host, t, codes, key, rule, "email_code_sent")
    if time.time() > entry["expires"]:
        return await _send(host, t, codes, key, rule, "email_code_expired", tries=entry["tries"])
    found = _CODE.search(t.text)
    given = found.group(1) if found else ""
    if given and hmac.compare_digest(_digest(entry["salt"], given), entry["digest"]):
        codes[key] = {"verified": True, "run": t.progress["run"], "seq": t.seq}
        t.record["tools"].append(_event("verified", key))
        return None
    entry["tries"] += 1
    t.record["tools"].append(_event("code_refused", key, tries=entry["tries"]))
    if entry["tries"] >= MAX_TRIES:
        codes.pop(key, None)
        return StepResult(decision=handoff(f"{rule}; the code was wrong {MAX_TRIES} times"))
    left = str(MAX_TRIES - entry["tries"])
    t.replies.append(text_reply(text(host, t, "email_code_wrong", digits=str(DIGITS), left=left)))
    return _waiting(rule)


async def _send(
    host: StepHost,
    t: StepTurn,
    codes: dict[str, dict[str, Any]],
    key: str,
    rule: str,
    say: str,
    tries: int = 0,
) -> StepResult:
    slot = t.state["values"].get("email")
    email = slot.get("value") if slot else None
    if not email or host.email is None:
        return StepResult(decision=handoff(f"{rule}; no email to send a code to"))
    if capped := _capped(host, t.state, str(email), time.time()):
        t.record["tools"].append(_event("code_limit", key, limit=capped))
        t.replies.append(text_reply(text(host, t, "email_code_limit")))
        return StepResult(decision=handoff(f"{rule}; {MAX_SENDS} codes sent {capped} this hour"))
    code = f"{secrets.randbelow(10**DIGITS):0{DIGITS}d}"
    salt = secrets.token_hex(8)
    try:
        await host.email.send(
            str(email),
            text(host, t, "email_code_subject"),
            text(host, t, "email_code_body", code=code, minutes=str(TTL_S // 60)),
        )
    except GatebotError as exc:
        log.warning("a one-time code could not be sent: %s", type(exc).__name__)
        t.record["tools"].append(_event("code_not_sent", key, error=type(exc).__name__))
        return StepResult(decision=handoff(f"{rule}; the code could not be sent"))
    codes[key] = {
        "digest": _digest(salt, code),
        "salt": salt,
        "tries": tries,
        "expires": time.time() + TTL_S,
        "run": t.progress["run"],
    }
    _count_send(host, t.state, str(email), time.time())
    t.record["tools"].append(_event("code_sent", key))
    t.replies.append(text_reply(text(host, t, say, digits=str(DIGITS))))
    return _waiting(rule)


def _address(email: str) -> str:
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()


def _recent(times: list[float], now: float) -> list[float]:
    return [when for when in times if now - when < SEND_WINDOW_S]


def _capped(host: StepHost, state: Any, email: str, now: float) -> str | None:
    """Which cap a new code would pass: "in this conversation", "to this email", or None."""
    if len(_recent(state.get("email_code_sends", []), now)) >= MAX_SENDS:
        return "in this conversation"
    if len(_recent(host.code_sends.get(_address(email), []), now)) >= MAX_SENDS:
        return "to this email"
    return None


def _count_send(host: StepHost, state: Any, email: str, now: float) -> None:
    state["email_code_sends"] = [*_recent(state.get("email_code_sends", []), now), now]
    address = _address(email)
    sent = host.code_sends
    sent[address] = [*_recent(sent.pop(address, []), now), now]  # last in: the newest
    while len(sent) > MAX_TRACKED_EMAILS:
        sent.pop(next(iter(sent)))  # the address sent to longest ago


def _waiting(rule: str) -> StepResult:
    decision = Decision(["answer", "handoff"], rule, move="answer", why=f"{rule}: code asked")
    return StepResult(decision=decision, note={"email_code": "asked"})


def _event(event: str, key: str, **detail: Any) -> Any:
    return {"tool": "email.code", "event": event, "detail": {"owned": key, **detail}}
