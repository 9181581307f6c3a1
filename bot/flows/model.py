"""Flows as the runtime reads them: plain dataclasses built only from validated declarations.

A flow is a DAG of steps (``ask``, ``tool_call``, ``llm_call``, ``router``, ``reply``) joined by
``prevStepIds``, plus bounded loop-back edges. Roles and mods specialise a step: exactly one role
(a persona's system prompt) and any stack of compatible mods (rules added to the system prompt;
a few also change what the executor does, listed in ``RUNTIME_MODS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STEP_TYPES = ("ask", "tool_call", "llm_call", "router", "reply")
#: A router route may end the loop it sits in early instead of naming a step.
EXIT_LOOP = "exit_loop"
MAX_PASSES = 50
DEFAULT_CORRECTIONS = 2
DEFAULT_CONTRACT_RETRIES = 2
#: What "not done" looks like in an output, whatever model wrote it.
STUB_MARKERS = ("TODO", "TBD", "FIXME", "placeholder", "lorem ipsum", "XXX")


@dataclass(frozen=True)
class Mod:
    name: str
    rules: str
    incompatible: tuple[str, ...] = ()


#: The built-in mods. ``dry-run``, ``cite-only`` and ``test-driven`` are enforced by the executor,
#: not only asked for in the prompt; the others are prompt rules.
BUILTIN_MODS: dict[str, Mod] = {
    m.name: m
    for m in (
        Mod(
            "dry-run",
            "Change nothing: you cannot call a tool that changes anything; say what would happen.",
        ),
        Mod("cite-only", "Every sentence must cite a retrieved fact as [key]."),
        Mod(
            "test-driven",
            "Your output is checked against the step's contract; complete every required part.",
        ),
        Mod("concise", "Keep it to at most two short sentences.", ("detailed",)),
        Mod("detailed", "Give every relevant detail, step by step.", ("concise",)),
        Mod("formal", "Use a formal, courteous register.", ("friendly",)),
        Mod("friendly", "Use a warm, informal register.", ("formal",)),
    )
}
RUNTIME_MODS = ("dry-run", "cite-only", "test-driven")


@dataclass(frozen=True)
class Role:
    name: str
    prompt: str
    title: str = ""


@dataclass
class Condition:
    """A declared test on the run's state: ``path`` (``values.order_id``, ``outputs.lookup.
    result.eligible``) and one of equals / in / exists / matches."""

    path: str
    equals: Any = None
    one_of: list[Any] | None = None
    exists: bool | None = None
    matches: str | None = None
    has_equals: bool = False


@dataclass
class Route:
    to: str
    when: Condition


@dataclass
class Variant:
    template: str
    when: Condition


@dataclass
class Contract:
    requires: list[str] = field(default_factory=list)  # output keys that must be non-empty
    patterns: dict[str, str] = field(default_factory=dict)  # output key -> regex it must match
    no_stubs: bool = True
    citations_resolve: bool = False  # every [key] in the output names a fact or a state value
    tool_status: str | None = None  # a tool_call's outcome status must be this ("ok")
    retries: int = DEFAULT_CONTRACT_RETRIES


@dataclass
class Step:
    id: str
    type: str
    role: str
    prev: list[str] = field(default_factory=list)
    prompt: str = ""
    template: str = ""
    tools: list[str] = field(default_factory=list)
    mods: list[str] = field(default_factory=list)
    contract: Contract | None = None
    model: str | None = None
    optional: bool = False
    repeat: bool = False
    when: Condition | None = None  # an optional step's declared reason to be taken
    slot: str | None = None  # ask: the slot it collects
    arguments: dict[str, Any] = field(default_factory=dict)  # tool_call: templated arguments
    fills: dict[str, str] = field(default_factory=dict)  # result key -> slot (source: system)
    correct: list[str] = field(default_factory=list)  # slots a correction may change
    choices: dict[str, list[str]] = field(default_factory=dict)  # slot -> values read verbatim
    corrections: int = DEFAULT_CORRECTIONS
    routes: list[Route] = field(default_factory=list)
    default: str | None = None  # router: where to go when no route matches
    variants: list[Variant] = field(default_factory=list)  # reply: templates by condition
    output: str | None = None  # llm_call: the output key its text is kept under
    items: dict[str, list[str]] = field(default_factory=dict)  # repeat: item -> names it goes by
    records: dict[str, str] = field(default_factory=dict)  # repeat: start / result paths
    question: str = ""  # repeat: what the step asks for
    #: reply: the lead it closes ("demo", "engineer"): delivered to the help desk that takes leads.
    lead: str | None = None
    #: Texts declared per language (bot.flows.texts): field -> language -> text.
    texts: dict[str, dict[str, str]] = field(default_factory=dict)


@dataclass
class Loop:
    source: str  # after this step completes, control returns to ``target``
    target: str
    max_passes: int
    body: list[str] = field(default_factory=list)  # every step from target to source


@dataclass
class Trigger:
    intents: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    #: Customer lines that start the flow: trained into the pack's intent head as lines of the
    #: flow's intent (its first trigger intent), and compared with the message when no intent
    #: is sure.
    examples: list[str] = field(default_factory=list)

    @property
    def intent(self) -> str | None:
        """The intent the flow's examples train: its first trigger intent."""
        return self.intents[0] if self.intents else None


@dataclass
class Flow:
    name: str
    title: str
    version: str
    steps: list[Step]
    trigger: Trigger = field(default_factory=Trigger)
    loops: list[Loop] = field(default_factory=list)
    description: str = ""
    tags: list[str] = field(default_factory=list)
    author: str = ""
    status: str = "active"  # active | draft (a draft never starts)
    source: str = ""  # the file it came from, for errors
    raw: dict[str, Any] = field(default_factory=dict, repr=False)  # the declaration, for export

    def step(self, step_id: str) -> Step:
        return next(s for s in self.steps if s.id == step_id)

    def successors(self, step_id: str) -> list[str]:
        return sorted(s.id for s in self.steps if step_id in s.prev)

    def loop_of(self, step_id: str) -> Loop | None:
        return next((lp for lp in self.loops if step_id in lp.body), None)

    @property
    def tool_names(self) -> list[str]:
        return sorted({t for s in self.steps for t in s.tools})
