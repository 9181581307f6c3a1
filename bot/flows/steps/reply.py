"""A reply step: a template (the first variant whose condition holds), or a model-worded reply
drafted and gated by :mod:`bot.turn.drafting` exactly as an answer is (stricter under the
``cite-only`` mod). A reply no draft passed for hands off; what drafting came to goes into the
turn's ``acted`` (:func:`bot.turn.act.take_draft`), so the record shows its gate, attempts and
facts."""

from __future__ import annotations

from typing import Any

from bot.flows.model import Step
from bot.flows.outcome import StepResult, handoff
from bot.flows.state import holds, render
from bot.flows.steps.base import StepHost, StepTurn
from bot.turn import replygate
from bot.turn.act import take_draft, text_reply
from bot.turn.decide import LEADS, Decision
from bot.turn.drafting import draft


async def run(host: StepHost, t: StepTurn, step: Step) -> StepResult:
    ctx = t.context()
    template = step.template
    for variant in step.variants:
        if holds(variant.when, ctx):
            template = variant.template
            break
    if step.lead and host.pack.helpdesk_for("lead") is None:
        # Nobody would receive the lead: never promise that the team will reach out.
        contact = host.pack.booking.get("contact", "")
        template = host.pack.template("propose_contact", contact=contact)
    if template:
        text = render(template, ctx)
        t.replies.append(text_reply(text))
        return StepResult(output={"text": text}, decision=_closing(t, step))
    return await _drafted(host, t, step, ctx)


def _closing(t: StepTurn, step: Step) -> Decision:
    """A reply that closes a lead proposes its outcome, which delivers the lead to the help desk
    that takes leads (as the playbook's proposal does); any other reply just answers."""
    if step.lead not in LEADS:
        return t.answered(step)
    rule = f"flow {t.flow.name} step {step.id}: a qualified {step.lead} lead"
    return Decision(["propose"], rule, move="propose", why=rule, outcome=step.lead)


async def _drafted(host: StepHost, t: StepTurn, step: Step, ctx: dict[str, Any]) -> StepResult:
    prompt = render(step.prompt, ctx)
    facts = await host.retriever.search(prompt, k=3) if host.retriever else []
    provider = host.provider_for(step)
    drafted = await draft(
        provider,
        prompt,
        facts,
        host.system(step),
        host.pack.excluded_names,
        require_citations="cite-only" in step.mods,
        allow=replygate.allowances(host.pack),
        # What the run's tool steps did this turn: only that may be told as done.
        effects=replygate.effects_of(t.record["tools"], host.tools),
    )
    take_draft(t.acted, drafted)
    if drafted.failed:
        return StepResult(decision=handoff(drafted.why))
    return StepResult(
        output={"text": drafted.text, "cited": drafted.cited},
        decision=t.answered(step),
        model=provider.model,
    )
