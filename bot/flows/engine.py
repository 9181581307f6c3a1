"""The flow engine: while a flow is active, its next step decides the turn's move.

A run's progress lives in the conversation's state (``state["flow"]``) and, after every step, in an
append-only checkpoint. One turn walks the recorded schedule from where the run stands, running
steps (:mod:`bot.flows.steps`) until one needs the customer (a question, a read-back) or the flow
ends. Everything that keeps a tool safe stays in the steps (:mod:`bot.flows.steps.change`,
:mod:`bot.flows.steps.repeat`) and in :class:`bot.extend.tool.ToolRunner`, never in a model's
hands: a ``changes`` tool runs only after a confident yes to its read-back, a repeat step's changes
are checked and read back after, a ``dry-run`` step cannot reach a changes tool at all, and a fork
runs changes dry unless an operator allowed side effects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.errors import GatebotError
from bot.extend.provider import ModelProvider
from bot.extend.tool import ToolRegistry
from bot.flows.load import check_tools
from bot.flows.model import Flow, Step
from bot.flows.outcome import StepResult
from bot.flows.schedule import schedule, skip_untaken
from bot.flows.state import holds
from bot.flows.steps import ask, llm_call, repeat, reply, router, tool
from bot.flows.steps.base import StepHost, StepTurn
from bot.flows.texts import in_language
from bot.flows.trigger import Nearest, Signals, signals, starts, weight
from bot.packs import Pack
from bot.preflight.language import reply_language
from bot.store import Store
from bot.store.runner import StoreRunner
from bot.turn import gates
from bot.turn.act import Acted, text_reply
from bot.turn.decide import Decision
from bot.turn.turn import Read, Turn

#: A bound on steps in one turn, so no declaration can spin a turn forever.
MAX_STEPS_PER_TURN = 200


@dataclass
class FlowTurn:
    """What the flow decided this turn: the move (for the record) and what was done: its replies
    and, for a model-worded reply, the gate, attempts, facts and model calls."""

    decision: Decision
    acted: Acted | None  # None: the Actor words the move (ask, value check)
    record: dict[str, Any] | None  # the record's ``flow`` part


def start_progress(flow: Flow, run_id: str, allow_side_effects: bool = True) -> dict[str, Any]:
    return {
        "name": flow.name,
        "version": flow.version,
        "run": run_id,
        "entries": [[e.step, e.pass_no, "pending"] for e in schedule(flow)],
        "outputs": {},
        "waiting": None,
        "checkpoints": 0,
        "allow_side_effects": allow_side_effects,
    }


class FlowEngine(StepHost):
    def __init__(
        self,
        pack: Pack,
        store: Store,
        provider: ModelProvider,
        retriever: Any = None,
        db: StoreRunner | None = None,
    ) -> None:
        super().__init__(pack, provider, retriever)
        self.store = store
        #: Where the runs' and checkpoints' writes go, off the event loop (the app binds its own).
        self.db = db or StoreRunner(store)
        #: Flows an app could not enable (a tool it does not have), with the reason.
        self.disabled: dict[str, str] = {}

    def bind_models(self, provider_for: Any) -> None:
        """At app build: a provider for every step's model override, from the app's registered
        providers (``provider_for(spec)``); a flow naming one the app cannot make is disabled."""
        for flow in self.pack.flows.values():
            for step in flow.steps:
                spec = step.model
                if not spec or spec in self.step_models:
                    continue
                try:
                    self.step_models[spec] = provider_for(spec)
                except GatebotError as exc:
                    why = f"step {step.id}: model {spec!r}: {exc}"
                    self.disabled[flow.name] = "; ".join(
                        x for x in (self.disabled.get(flow.name), why) if x
                    )

    async def aclose(self) -> None:
        for provider in self.step_models.values():
            await provider.aclose()

    def bind_tools(self, registry: ToolRegistry, runner_for: Any) -> None:
        """At app build: check every flow's tools against the registry; a flow naming a tool the
        app lacks is disabled (it never starts) and says why."""
        self.tools, self.runner_for = registry, runner_for
        changes = {t.name for t in registry if t.changes}
        for flow in self.pack.flows.values():
            problems = check_tools(flow, set(registry.tools), changes)
            if problems:
                self.disabled[flow.name] = "; ".join(problems)

    # -- starting ------------------------------------------------------------------------------

    def trigger(
        self, intent_read: Read, text: str, near: Nearest | None = None
    ) -> tuple[Flow, Signals] | None:
        """The flow the message starts and what started it (see :mod:`bot.flows.trigger`), or
        None. Where several would start, the one with the weightiest signals
        (:func:`bot.flows.trigger.weight`: "I accidentally purchased 20 extra seats ..., can you
        refund the 18 I didn't need?" names seats and a count, and asks for a refund, which the
        head leans to); ties by name."""
        confident = intent_read["answer"] if intent_read["outcome"] == "act" else None
        started: list[tuple[Flow, Signals]] = []
        for flow in sorted(self.pack.flows.values(), key=lambda f: f.name):
            if flow.status != "active" or flow.name in self.disabled:
                continue
            found = signals(flow, self.pack, intent_read, text, near)
            if starts(flow, self.pack, found, confident):
                started.append((flow, found))
        if not started:
            return None
        return max(started, key=lambda pair: weight(pair[1]))  # max keeps the first of a tie

    async def turn(
        self,
        turn: Turn,
        intent_read: Read,
        near: Nearest | None = None,
        started: tuple[Flow, Signals] | None = None,
    ) -> FlowTurn | None:
        """Run the active flow (or start one) as far as this message allows. None: no flow.
        ``near``: the pack line nearest the message, for starting one; ``started``: what
        :meth:`trigger` already read for this message, where the caller read it."""
        state, record = turn.state, turn.record
        progress = await self._progress(turn, intent_read, near, started)
        if progress is None:
            return None
        flow_ = self.pack.flows.get(progress["name"])
        if flow_ is None:  # the pack changed under a running flow: end it honestly
            state.pop("flow", None)
            return None
        progress["language"] = self._language(turn, progress)
        t = StepTurn(flow_, progress, turn)
        decision = await self._walk(t)
        part: dict[str, Any] = {
            "name": flow_.name,
            "run": progress["run"],
            "step": t.steps[-1]["step"] if t.steps else None,
            "status": await self._status(progress, decision),
            "steps": t.steps,
        }
        if progress.get("started_by", {}).get("seq") == turn.seq:
            part["started_by"] = progress["started_by"]["signals"]  # what started it: this turn
        record["flow"] = part
        acted: Acted | None = t.acted
        if decision.move == "handoff":
            # Said honestly, after whatever the flow already said this turn.
            said = self.pack.template("handoff", turn.conversation.language)
            t.replies.append(text_reply(said))
        elif decision.move in ("ask", "confirm") and not t.replies:
            acted = None  # a question for a slot or a value check: the Actor words it
        return FlowTurn(decision, acted, record["flow"])

    def _language(self, turn: Turn, progress: dict[str, Any]) -> str:
        """The language the run speaks: this message's when it is surely one the pack has
        templates for, else the run's so far (a bare email or "yes" keeps it), else the
        conversation's."""
        pack = self.pack
        current = progress.get("language") or turn.conversation.language
        return reply_language(turn.text, current, pack.language, [*pack.templates])

    async def _progress(
        self,
        turn: Turn,
        intent_read: Read,
        near: Nearest | None,
        started: tuple[Flow, Signals] | None = None,
    ) -> dict[str, Any] | None:
        """The run this message continues: the active one unless preempted, else a new run of the
        flow the message triggers, else None."""
        state, text = turn.state, turn.text
        progress = state.get("flow")
        if progress is not None and self._preempted(intent_read, progress):
            await self.db.call(self.store.set_flow_run_status, progress["run"], "abandoned")
            state.pop("flow", None)
            progress = None
        if progress is None:
            started = started or self.trigger(intent_read, text, near)
            if started is None:
                return None
            flow, found = started
            entries = [str(e) for e in schedule(flow)]
            create = self.store.create_flow_run
            run = await self.db.call(create, turn.conversation.id, flow.name, flow.version, entries)
            progress = state["flow"] = start_progress(flow, run.id)
            # What started it, and a change the message already asked for ("drop two seats"),
            # which the repeat step makes when the flow reaches it instead of asking.
            progress["started_by"] = {"seq": turn.seq, "signals": found.as_dict()}
            if found.change is not None:
                progress["opening"] = {"step": found.change["step"], "text": text}
        return progress

    async def _status(self, progress: dict[str, Any], decision: Decision) -> str:
        if decision.move == "handoff":
            status = "handed_off"
        elif all(e[2] != "pending" for e in progress["entries"]):
            status = "done"
        else:
            return "active"
        await self.db.call(self.store.set_flow_run_status, progress["run"], status)
        return status

    @staticmethod
    def _preempted(intent_read: Read, progress: dict[str, Any]) -> bool:
        """A request for a person always wins; a "no thanks" ends the flow unless it answers the
        flow's own yes/no question."""
        if intent_read["outcome"] != "act":
            return False
        answer = intent_read["answer"]
        if answer == "human":
            return True
        return answer in ("decline_offer", "goodbye") and progress.get("waiting") is None

    # -- walking the schedule ------------------------------------------------------------------

    async def _walk(self, t: StepTurn) -> Decision:
        last = Decision(["answer", "handoff"], f"flow {t.flow.name}", move="answer")
        for _ in range(MAX_STEPS_PER_TURN):
            entry = next((e for e in t.progress["entries"] if e[2] == "pending"), None)
            if entry is None:
                t.state.pop("flow", None)
                last.why = f"flow {t.flow.name} finished"
                return last
            step = t.flow.step(entry[0])
            if not self._ready(t, step):
                entry[2] = "skipped"
                continue
            before = t.context()
            result = await self._run_step(t, step)
            if result.decision is not None and result.output is None:
                t.steps.append(_step_note(step, entry, result.decision.move, result))
                if result.decision.move == "handoff":
                    t.state.pop("flow", None)
                return result.decision
            entry[2] = "done"
            t.progress["outputs"][step.id] = result.output
            await self._checkpoint(t, step, entry[1], before, result.output or {}, result.model)
            t.steps.append(_step_note(step, entry, "done", result))
            if result.decision is not None:
                last = result.decision
            self._after_step(t, step, entry, result.output or {})
        return Decision(
            ["handoff"],
            "flow step bound reached",
            move="handoff",
            why=f"flow {t.flow.name} ran {MAX_STEPS_PER_TURN} steps in one turn",
        )

    @staticmethod
    def _ready(t: StepTurn, step: Step) -> bool:
        """A step runs when some step it follows completed (or it follows none)."""
        if not step.prev:
            return True
        status = {e[0]: e[2] for e in t.progress["entries"] if e[2] != "pending"}
        return any(status.get(p) == "done" for p in step.prev)

    @staticmethod
    def _after_step(t: StepTurn, step: Step, entry: list[Any], output: dict[str, Any]) -> None:
        """A router's choice skips the branches not taken; an exit ends its loop's later passes;
        a change refused and explained ends the flow (nothing after it may word success)."""
        if output.get("ends_flow"):
            for e in t.progress["entries"]:
                e[2] = "skipped" if e[2] == "pending" else e[2]
            return
        if step.type == "router":
            skip_untaken(t.flow, t.progress["entries"], step.id, entry[1], output.get("route"))

    async def _checkpoint(
        self,
        t: StepTurn,
        step: Step,
        pass_no: int,
        seen: dict[str, Any],
        output: dict[str, Any],
        model: str | None,
    ) -> None:
        idx = t.progress["checkpoints"]
        t.progress["checkpoints"] = idx + 1
        snapshot = json.loads(json.dumps({**t.progress, "values": t.state["values"]}))
        await self.db.call(
            self.store.add_checkpoint,
            t.progress["run"],
            idx,
            step.id,
            pass_no,
            seen,
            output,
            model,
            snapshot,
        )

    async def _run_step(self, t: StepTurn, step: Step) -> StepResult:
        step = in_language(step, t.progress.get("language", self.pack.language))
        if step.optional and not self._optional_taken(t, step):
            return StepResult(output={"status": "not_taken"}, note={"optional": "not taken"})
        if step.type == "ask":
            return ask.run(t, step)
        if step.type == "router":
            return router.run(self, t, step)
        if step.type == "reply":
            return await reply.run(self, t, step)
        if step.type == "llm_call":
            return await llm_call.run(self, t, step)
        if step.repeat:
            return await repeat.run(self, t, step)
        return await tool.run(self, t, step)

    def _optional_taken(self, t: StepTurn, step: Step) -> bool:
        """An optional step is taken on a confident policy reading; its declared reason is the
        reading (certain when it holds). A change leaned toward is offered by its read-back."""
        confidence = 1.0 if step.when is not None and holds(step.when, t.context()) else 0.0
        read = gates.read(
            f"policy:{step.id}",
            "declared",
            "take" if confidence else None,
            confidence,
            "policy",
            self.pack.gates["policy"],
        )
        t.record["reads"].append(read)
        return read["outcome"] == "act"


def _step_note(step: Step, entry: list[Any], status: str, result: StepResult) -> dict[str, Any]:
    """A step's entry in the turn record's ``flow.steps``."""
    return {"step": step.id, "pass": entry[1], "type": step.type, "status": status, **result.note}
