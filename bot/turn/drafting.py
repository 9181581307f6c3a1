"""Gated drafting: a model words a reply from the facts found this turn, the reply gate
(:mod:`bot.turn.replygate`) checks it, and a refused draft is retried once with the reasons.

Answers (:mod:`bot.turn.act`) and a flow's model-worded reply step
(:mod:`bot.flows.steps.reply`) both draft here, so they gate, retry and record alike; what the
customer hears when no draft passes stays each caller's (an answer queues the question, a flow
hands off). :func:`bot.turn.act.take_draft` puts a result into what the act stage records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.errors import ProviderError
from bot.extend.provider import ModelCall, ModelProvider, Prompt, call
from bot.extend.retriever import Fact
from bot.extend.tool import ToolEvent, ToolRunner
from bot.turn import replygate
from bot.turn.knowledge_tools import FactLedger
from bot.turn.toolloop import run_tool_loop
from bot.turn.turn import GateResult

#: Why no draft passed (``Drafted.failed``).
PROVIDER_FAILED = "provider_failed"
REFUSED_TWICE = "refused_twice"
NOTHING_FOUND = "nothing_found"


@dataclass
class ToolLoop:
    """Drafting through the bounded tool loop (:mod:`bot.turn.toolloop`): the runner the
    model's calls go through, and the rounds it may take for the whole reply, retry included."""

    runner: ToolRunner
    steps: int
    #: The tool context: core-set entries only (the verified identity), never the model's.
    context: dict[str, Any] = field(default_factory=dict)


@dataclass
class Drafted:
    """What drafting came to. ``text`` (citations stripped) is set only when a draft passed."""

    question: str  # what was asked: the question a failed draft leaves for a person
    text: str | None = None
    cited: list[str] = field(default_factory=list)  # the keys the passing draft cited
    citations: list[dict[str, str]] = field(default_factory=list)  # their key, title, source
    facts: list[Fact] = field(default_factory=list)  # what the record lists as used
    passed: bool | None = None  # None: no draft reached the gate
    reasons: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # the gate rule of each reason
    attempts: int = 0
    model_calls: list[ModelCall] = field(default_factory=list)
    tools: list[ToolEvent] = field(default_factory=list)  # the tool loop's events
    failed: str | None = None  # PROVIDER_FAILED, REFUSED_TWICE or NOTHING_FOUND
    why: str = ""  # the failure in words, for the help desk

    @property
    def gate(self) -> GateResult:
        return {"passed": self.passed, "reasons": list(self.reasons), "rules": list(self.rules)}


async def draft(
    provider: ModelProvider,
    question: str,
    facts: FactLedger | list[Fact],
    system: str,
    excluded_names: list[str],
    *,
    history: list[dict[str, str]] | None = None,
    require_citations: bool = False,
    tools: ToolLoop | None = None,
    grounded: bool = False,
    allow: replygate.Allowances | None = None,
    effects: Iterable[str] = (),
) -> Drafted:
    """Draft, gate, retry once. ``system`` is the caller's instruction; the facts and a refused
    draft's reasons are added to it. ``facts`` as a ledger is live: a tool loop's searches add to
    it, and citations resolve against whatever it holds. ``require_citations`` is a flow step's
    ``cite-only`` mod; ``grounded``: a draft with no fact found behind it is no answer.
    ``allow``: what the pack vouches for (:func:`bot.turn.replygate.allowances`); ``effects``:
    what tools that finished earlier this turn did, so a draft may say it was done."""
    ledger = facts if isinstance(facts, FactLedger) else _ledger_of(facts)
    out = Drafted(question)
    messages: list[dict[str, Any]] = [*(history or []), {"role": "user", "content": question}]
    reasons: list[str] = []
    for attempt in (1, 2):
        out.attempts = attempt
        prompt = _prompt(question, system, ledger.ordered(), reasons, messages)
        try:
            if tools is None:
                text = (await call(provider, prompt, out.model_calls)).text
            else:
                text, messages = await _through_tools(provider, prompt, tools, out)
        except ProviderError as exc:
            # Honest fallback: nothing pretends to be an answer; the caller says so.
            out.passed, out.reasons = False, [f"provider failed: {exc}"]
            out.rules = ["provider"]
            out.failed, out.why = PROVIDER_FAILED, f"model provider failed: {exc}"
            return out
        if grounded and not ledger:
            out.failed, out.why = NOTHING_FOUND, "nothing was found to answer from"
            return out
        result = _gate(text, ledger, out, tools, system, excluded_names, require_citations,
                       allow, effects)  # fmt: skip
        out.passed, out.reasons, out.rules = result.passed, result.reasons, result.rules
        if result.passed:
            return _accepted(out, text, result.citations, ledger.ordered())
        reasons = result.reasons
    out.facts = ledger.ordered()
    out.failed = REFUSED_TWICE
    out.why = "reply gate refused two drafts: " + "; ".join(reasons)
    return out


def _gate(
    text: str,
    ledger: FactLedger,
    out: Drafted,
    tools: ToolLoop | None,
    system: str,
    excluded_names: list[str],
    require_citations: bool,
    allow: replygate.Allowances | None,
    effects: Iterable[str],
) -> replygate.GateResult:
    """The reply gate over one draft: against this turn's facts, the effects of the tools that
    finished this turn (before drafting or in its own tool loop) and the instruction it was
    written under."""
    done = {*effects, *replygate.effects_of(out.tools, tools.runner.registry if tools else None)}
    return replygate.check(
        text,
        ledger.keys,
        excluded_names,
        require_citations,
        facts=ledger.ordered(),
        effects=done,
        allow=allow,
        instructions=system,
    )


def _ledger_of(facts: list[Fact]) -> FactLedger:
    ledger = FactLedger()
    ledger.add(facts)
    return ledger


def _accepted(out: Drafted, draft_text: str, cited: list[str], facts: list[Fact]) -> Drafted:
    used = [f for f in facts if f.key in cited]
    out.text = replygate.strip_citations(draft_text)
    out.cited = cited
    out.facts = used or facts
    out.citations = [{"key": f.key, "title": f.title, "source": f.source} for f in used]
    return out


def _prompt(
    question: str,
    system: str,
    facts: list[Fact],
    reasons: list[str],
    messages: list[dict[str, Any]],
) -> Prompt:
    fact_lines = "\n".join(f"[{f.key}] {f.text}" for f in facts) or "(none found yet)"
    text = f"{system}\n\nFacts:\n{fact_lines}"
    if reasons:
        text += "\n\nYour previous draft was refused because it " + "; ".join(reasons) + "."
    context = {
        "move": "answer",
        "question": question,
        "reasons": reasons,
        "facts": [
            {"key": f.key, "text": f.text, "title": f.title, "source": f.source} for f in facts
        ],
    }
    return Prompt(purpose="reply", system=text, messages=messages, context=context)


async def _through_tools(
    provider: ModelProvider, prompt: Prompt, tools: ToolLoop, out: Drafted
) -> tuple[str, list[dict[str, Any]]]:
    """One draft through the bounded loop. Returns the draft and the messages with the exchange
    so far: a retry carries on from them rather than searching again, and the rounds it used
    come off ``tools.steps``."""
    loop = await run_tool_loop(
        provider,
        prompt,
        tools.runner,
        model_calls=out.model_calls,
        events=out.tools,
        context=tools.context,
        max_steps=tools.steps,
    )
    tools.steps -= loop.steps
    return loop.response.text, loop.messages
