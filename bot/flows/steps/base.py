"""What every step kind shares: the turn a step runs in (:class:`StepTurn`) and what the engine
lends it (:class:`StepHost`: the pack, the models, the knowledge and the tools, with the rules
for which of them a step may reach)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.extend.email import EmailTransport
from bot.extend.provider import ModelCall, ModelProvider
from bot.extend.tool import ToolRegistry, ToolRunner, identity_context
from bot.flows.model import BUILTIN_MODS, Flow, Step
from bot.flows.outcome import answer
from bot.flows.state import context_for
from bot.packs import Pack
from bot.turn.act import Acted
from bot.turn.decide import Decision
from bot.turn.turn import ConversationState, Turn, TurnRecord

#: Why a step cannot reach a changes tool it names (what the record says when one is asked for).
DRY_RUN_REMOVED = "dry-run mod: changes tools are removed from this step"


@dataclass
class StepTurn:
    """One turn of a flow as its steps see it. ``acted`` gathers what the steps say to the
    customer and, for a model-worded reply, its gate, facts and model calls."""

    flow: Flow
    progress: dict[str, Any]  # the run's progress (the conversation's state["flow"])
    turn: Turn
    acted: Acted = field(default_factory=lambda: Acted([]))
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def state(self) -> ConversationState:
        return self.turn.state

    @property
    def record(self) -> TurnRecord:
        return self.turn.record

    @property
    def calls(self) -> list[ModelCall]:
        """The turn's model calls so far; a step's calls join them in order."""
        return self.turn.model_calls

    @property
    def text(self) -> str:
        return self.turn.text

    @property
    def seq(self) -> int:
        return self.turn.seq

    @property
    def conversation_id(self) -> str:
        return self.turn.conversation.id

    @property
    def replies(self) -> list[dict[str, Any]]:
        return self.acted.replies

    def context(self, text: str | None = None) -> dict[str, Any]:
        """The run's state as declarations see it (``text`` defaults to the message), and
        whether the conversation has a verified identity (``identity.verified``; never the id)."""
        ctx = context_for(self.progress, self.state["values"], self.text if text is None else text)
        ctx["identity"] = {"verified": bool(self.turn.conversation.verified_user_id)}
        return ctx

    def answered(self, step: Step) -> Decision:
        """The move of a step that said something and needs nothing back."""
        return answer(self.flow.name, step.id, step.type)


class StepHost:
    """What steps use beyond their turn. The app binds tools and step models at build."""

    def __init__(self, pack: Pack, provider: ModelProvider, retriever: Any = None) -> None:
        self.pack, self.provider, self.retriever = pack, provider, retriever
        self.tools: ToolRegistry | None = None
        self.runner_for: Any = None  # conversation id -> ToolRunner
        #: Providers for steps that override the model (``model: anthropic:MODEL``), by spec.
        self.step_models: dict[str, ModelProvider] = {}
        #: One-time codes by email before a change an email owns (bot.flows.steps.emailcode):
        #: the transport and GATEBOT_EMAIL_CODES, bound at app build.
        self.email: EmailTransport | None = None
        self.email_codes = False
        #: When codes were last sent to each address (a hash of it), for the per-address cap.
        self.code_sends: dict[str, list[float]] = {}

    def provider_for(self, step: Step) -> ModelProvider:
        """The step's own model when it names one (bound at app build), else the app's."""
        return self.step_models.get(step.model or "", self.provider)

    def system(self, step: Step) -> str:
        """The role's persona, then each mod's rules, in the order they stack."""
        role = self.pack.roles.get(step.role)
        parts = [role.prompt if role else ""]
        mods = {**BUILTIN_MODS, **self.pack.mods}
        parts += [f"Rule ({m}): {mods[m].rules}" for m in step.mods if m in mods]
        return "\n".join(p for p in parts if p)

    def reachable(self, step: Step) -> tuple[list[str], list[str]]:
        """The tools a step may reach, and those ``dry-run`` took away from it."""
        if "dry-run" not in step.mods:
            return list(step.tools), []
        changes = {t.name for t in self.tools or [] if t.changes or t.repeat}
        return [n for n in step.tools if n not in changes], [n for n in step.tools if n in changes]

    def resolvable(self, t: StepTurn) -> set[str]:
        """What a contract's references may name: values, step outputs, the pack's facts."""
        return (
            set(t.state["values"])
            | set(t.progress["outputs"])
            | {f.key for f in getattr(self.retriever, "facts", [])}
        )

    def runner(self, t: StepTurn) -> ToolRunner:
        if self.runner_for is None:
            return ToolRunner(self.tools or ToolRegistry())
        runner: ToolRunner = self.runner_for(t.conversation_id)
        return runner

    def tool_context(self, t: StepTurn) -> dict[str, Any]:
        return {
            "conversation_id": t.conversation_id,
            "owned": t.state.setdefault("owned", {}),  # a lookup's grant outlives the call
            "values": t.context("")["values"],
            **identity_context(t.turn.conversation.verified_user_id),
        }


def worded(pack: Pack, language: str | None, name: str, default: str, **values: Any) -> str:
    """A fixed line of a step: the pack's template ``name`` in the run's ``language`` (else the
    pack's) when the pack words it, else ``default`` (English), values filled in."""
    if name in pack.templates.get(pack.language, {}):
        return pack.template(name, language, **{k: str(v) for k, v in values.items()})
    return default.format(**values)
