"""The flow executor: while a flow is active, its next step decides the turn's move.

A run's progress lives in the conversation's state (``state["flow"]``) and, after every step, in an
append-only checkpoint. One turn walks the recorded schedule from where the run stands, running
steps until one needs the customer (a question, a read-back) or the flow ends. Everything that
keeps a tool safe stays in the executor (here, :mod:`bot.flows.change` and :mod:`bot.flows.repeat`)
and in :class:`bot.extend.tool.ToolRunner`, never in a model's hands: a ``changes`` tool runs
only after
a confident yes to its read-back, a repeat step's changes are checked and read back after, a
``dry-run`` step cannot reach a changes tool at all, and a fork runs changes dry unless an operator
allowed side effects.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.errors import GatebotError, ProviderError
from bot.extend.provider import ModelProvider, Prompt, call
from bot.extend.tool import ToolOutcome, ToolRegistry, ToolRunner
from bot.flows import contracts
from bot.flows.change import ChangeTurn, ReadBack
from bot.flows.model import BUILTIN_MODS, EXIT_LOOP, Flow, Step
from bot.flows.outcome import StepResult as _Result
from bot.flows.outcome import answer
from bot.flows.outcome import handoff as _handoff
from bot.flows.repeat import Repeat, RepeatTurn, arguments_for
from bot.flows.schedule import schedule
from bot.flows.state import context_for, holds, render, render_arguments
from bot.packs import Pack
from bot.store import Store
from bot.text import matching, normalise
from bot.turn import gates
from bot.turn.act import Acted, text_reply
from bot.turn.decide import Decision

#: A bound on steps in one turn, so no declaration can spin a turn forever.
MAX_STEPS_PER_TURN = 200


@dataclass
class FlowTurn:
    """What the flow decided this turn: the move (for the record) and the replies."""

    decision: Decision
    acted: Acted | None  # None: the Actor words the move (ask, value check)
    record: dict[str, Any]


@dataclass
class _Turn:
    flow: Flow
    progress: dict[str, Any]
    state: dict[str, Any]
    text: str
    seq: int
    record: dict[str, Any]
    calls: list[dict[str, Any]]
    conversation_id: str
    replies: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)


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


class FlowEngine:
    def __init__(
        self, pack: Pack, store: Store, provider: ModelProvider, retriever: Any = None
    ) -> None:
        self.pack, self.store, self.provider, self.retriever = pack, store, provider, retriever
        self.tools: ToolRegistry | None = None
        self.runner_for: Any = None  # conversation id -> ToolRunner
        #: Flows an app could not enable (a tool it does not have), with the reason.
        self.disabled: dict[str, str] = {}
        #: Providers for steps that override the model (``model: anthropic:MODEL``), by spec.
        self.step_models: dict[str, ModelProvider] = {}

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
        from bot.flows.load import check_tools

        self.tools, self.runner_for = registry, runner_for
        changes = {t.name for t in registry if t.changes}
        for flow in self.pack.flows.values():
            problems = check_tools(flow, set(registry.tools), changes)
            if problems:
                self.disabled[flow.name] = "; ".join(problems)

    # -- starting ------------------------------------------------------------------------------

    def trigger(self, intent_read: dict[str, Any], text: str) -> Flow | None:
        """The flow a confident intent (and, where declared, a keyword) selects; ties by name."""
        norm = normalise(text)
        confident = intent_read["answer"] if intent_read["outcome"] == "act" else None
        for flow in sorted(self.pack.flows.values(), key=lambda f: f.name):
            if flow.status != "active" or flow.name in self.disabled:
                continue
            t = flow.trigger
            if t.intents and confident not in t.intents:
                continue
            if t.keywords and not matching(norm, t.keywords):
                continue
            return flow
        return None

    async def turn(
        self,
        conversation_id: str,
        state: dict[str, Any],
        intent_read: dict[str, Any],
        text: str,
        seq: int,
        record: dict[str, Any],
        calls: list[dict[str, Any]],
    ) -> FlowTurn | None:
        """Run the active flow (or start one) as far as this message allows. None: no flow."""
        progress = state.get("flow")
        if progress is not None and self._preempted(intent_read, progress):
            self.store.set_flow_run_status(progress["run"], "abandoned")
            state.pop("flow", None)
            progress = None
        if progress is None:
            flow = self.trigger(intent_read, text)
            if flow is None:
                return None
            run = self.store.create_flow_run(
                conversation_id, flow.name, flow.version, [str(e) for e in schedule(flow)]
            )
            progress = state["flow"] = start_progress(flow, run.id)
        flow_ = self.pack.flows.get(progress["name"])
        if flow_ is None:  # the pack changed under a running flow: end it honestly
            state.pop("flow", None)
            return None
        t = _Turn(flow_, progress, state, text, seq, record, calls, conversation_id)
        decision = await self._walk(t)
        record["flow"] = {
            "name": flow_.name,
            "run": progress["run"],
            "step": t.steps[-1]["step"] if t.steps else None,
            "status": self._status(progress, decision),
            "steps": t.steps,
        }
        acted: Acted | None = Acted(t.replies)
        if decision.move == "handoff":
            # Said honestly, after whatever the flow already said this turn.
            t.replies.append(text_reply(self.pack.template("handoff")))
        elif decision.move in ("ask", "confirm") and not t.replies:
            acted = None  # a question for a slot or a value check: the Actor words it
        return FlowTurn(decision, acted, record["flow"])

    def _status(self, progress: dict[str, Any], decision: Decision) -> str:
        if decision.move == "handoff":
            status = "handed_off"
        elif all(e[2] != "pending" for e in progress["entries"]):
            status = "done"
        else:
            return "active"
        self.store.set_flow_run_status(progress["run"], status)
        return status

    @staticmethod
    def _preempted(intent_read: dict[str, Any], progress: dict[str, Any]) -> bool:
        """A request for a person always wins; a "no thanks" ends the flow unless it answers the
        flow's own yes/no question."""
        if intent_read["outcome"] != "act":
            return False
        answer = intent_read["answer"]
        if answer == "human":
            return True
        return answer in ("decline_offer", "goodbye") and progress.get("waiting") is None

    # -- walking the schedule ------------------------------------------------------------------

    async def _walk(self, t: _Turn) -> Decision:
        last = Decision(["answer", "handoff"], f"flow {t.flow.name}", move="answer")
        for _ in range(MAX_STEPS_PER_TURN):
            entry = next((e for e in t.progress["entries"] if e[2] == "pending"), None)
            if entry is None:
                t.state.pop("flow", None)
                last.why = f"flow {t.flow.name} finished"
                return last
            step = t.flow.step(entry[0])
            if not self._ready(t, step, entry):
                entry[2] = "skipped"
                continue
            before = context_for(t.progress, t.state["values"], t.text)
            result = await self._run_step(t, step, entry[1])
            if result.decision is not None and result.output is None:
                t.steps.append(
                    {
                        "step": step.id,
                        "pass": entry[1],
                        "type": step.type,
                        "status": result.decision.move,
                        **result.note,
                    }
                )
                if result.decision.move == "handoff":
                    t.state.pop("flow", None)
                return result.decision
            entry[2] = "done"
            t.progress["outputs"][step.id] = result.output
            self._checkpoint(t, step, entry[1], before, result.output or {}, result.model)
            t.steps.append(
                {
                    "step": step.id,
                    "pass": entry[1],
                    "type": step.type,
                    "status": "done",
                    **result.note,
                }
            )
            if result.decision is not None:
                last = result.decision
            self._after_step(t, step, entry, result.output or {})
        return Decision(
            ["handoff"],
            "flow step bound reached",
            move="handoff",
            why=f"flow {t.flow.name} ran {MAX_STEPS_PER_TURN} steps in one turn",
        )

    def _ready(self, t: _Turn, step: Step, entry: list[Any]) -> bool:
        """A step runs when some step it follows completed (or it follows none)."""
        if not step.prev:
            return True
        status = {e[0]: e[2] for e in t.progress["entries"] if e[2] != "pending"}
        return any(status.get(p) == "done" for p in step.prev)

    def _after_step(self, t: _Turn, step: Step, entry: list[Any], output: dict[str, Any]) -> None:
        """A router's choice skips the branches not taken; an exit ends its loop's later passes."""
        if step.type != "router":
            return
        chosen = output.get("route")
        pass_no = entry[1]
        loop = t.flow.loop_of(step.id)
        for e in t.progress["entries"]:
            if e[2] != "pending":
                continue
            if (chosen == EXIT_LOOP and loop and e[0] in loop.body) or (
                e[0] in t.flow.successors(step.id)
                and e[0] != chosen
                and (loop is None or e[0] not in loop.body or e[1] == pass_no)
            ):
                e[2] = "skipped"

    def _checkpoint(
        self,
        t: _Turn,
        step: Step,
        pass_no: int,
        seen: dict[str, Any],
        output: dict[str, Any],
        model: str | None,
    ) -> None:
        idx = t.progress["checkpoints"]
        t.progress["checkpoints"] = idx + 1
        snapshot = json.loads(json.dumps({**t.progress, "values": t.state["values"]}))
        self.store.add_checkpoint(
            t.progress["run"], idx, step.id, pass_no, seen, output, model, snapshot
        )

    # -- the steps ------------------------------------------------------------------------------

    async def _run_step(self, t: _Turn, step: Step, pass_no: int) -> _Result:
        if step.optional and not self._optional_taken(t, step):
            return _Result(output={"status": "not_taken"}, note={"optional": "not taken"})
        if step.type == "ask":
            return self._ask(t, step)
        if step.type == "router":
            return self._route(t, step)
        if step.type == "reply":
            return await self._reply(t, step)
        if step.type == "llm_call":
            return await self._llm(t, step)
        if step.repeat:
            return await self._repeat(t, step)
        return await self._tool(t, step)

    def _optional_taken(self, t: _Turn, step: Step) -> bool:
        """An optional step is taken on a confident policy reading; its declared reason is the
        reading (certain when it holds). A change leaned toward is offered by its read-back."""
        ctx = context_for(t.progress, t.state["values"], t.text)
        confidence = 1.0 if step.when is not None and holds(step.when, ctx) else 0.0
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

    def _ask(self, t: _Turn, step: Step) -> _Result:
        slot = step.slot or ""
        known = t.state["values"].get(slot)
        if known is not None:
            return _Result(output={slot: known["value"]})
        check = t.state.get("check")
        rule = f"flow {t.flow.name}: step {step.id} needs {slot}"
        if check:
            from bot.turn.decide import _check

            return _Result(decision=_check(check).choose(), note={"slot": slot})
        misses = t.state.get("slot_misses", {}).get(slot, 0)
        if misses >= 2:
            return _Result(decision=_handoff(f"{rule}; still missing after asking twice"))
        decision = Decision(
            ["ask", "handoff"], rule, slot=slot, template="ask_again" if misses == 1 else "ask"
        ).choose()
        decision.why = f"flow {t.flow.name} step {step.id}: ask for {slot}"
        return _Result(decision=decision, note={"slot": slot})

    def _route(self, t: _Turn, step: Step) -> _Result:
        ctx = context_for(t.progress, t.state["values"], t.text)
        chosen, why = step.default, "default"
        for k, route in enumerate(step.routes):
            if holds(route.when, ctx):
                chosen, why = route.to, f"routes[{k}]: {route.when.path}"
                break
        # A declared condition is certain; it still passes the policy gate like any reading.
        t.record["reads"].append(
            gates.read(
                f"router:{step.id}", "declared", chosen, 1.0, "policy", self.pack.gates["policy"]
            )
        )
        return _Result(output={"route": chosen, "why": why}, note={"route": chosen})

    async def _reply(self, t: _Turn, step: Step) -> _Result:
        ctx = context_for(t.progress, t.state["values"], t.text)
        template = step.template
        for variant in step.variants:
            if holds(variant.when, ctx):
                template = variant.template
                break
        if template:
            text = render(template, ctx)
            t.replies.append(text_reply(text))
            return _Result(output={"text": text}, decision=_answer(t, step))
        return await self._gated_reply(t, step, ctx)

    async def _gated_reply(self, t: _Turn, step: Step, ctx: dict[str, Any]) -> _Result:
        """A model-worded reply: facts retrieved, the reply gate (stricter under cite-only)."""
        from bot.turn import replygate

        prompt_text = render(step.prompt, ctx)
        facts = await self.retriever.search(prompt_text, k=3) if self.retriever else []
        keys = {f.key for f in facts}
        reasons: list[str] = []
        strict = "cite-only" in step.mods
        for attempt in (1, 2):
            system = (
                self._system(step)
                + "\n\nFacts:\n"
                + "\n".join(f"[{f.key}] {f.text}" for f in facts)
            )
            if reasons:
                system += "\n\nYour previous draft was refused because it " + "; ".join(reasons)
            prompt = Prompt(
                "reply",
                system,
                [{"role": "user", "content": prompt_text}],
                {
                    "move": "answer",
                    "question": prompt_text,
                    "facts": [
                        {"key": f.key, "text": f.text, "title": f.title, "source": f.source}
                        for f in facts
                    ],
                },
            )
            try:
                draft = (await call(self._provider_for(step), prompt, t.calls)).text
            except ProviderError as exc:
                return _Result(decision=_handoff(f"model provider failed: {exc}"))
            result = replygate.check(
                draft, keys, self.pack.excluded_names, require_citations=strict
            )
            t.record["reply"]["gate"] = {"passed": result.passed, "reasons": result.reasons}
            t.record["reply"]["attempts"] = attempt
            if result.passed:
                text = replygate.strip_citations(draft)
                t.replies.append(text_reply(text))
                return _Result(
                    output={"text": text, "cited": result.citations},
                    decision=_answer(t, step),
                    model=self._provider_for(step).model,
                )
            reasons = result.reasons
        return _Result(decision=_handoff("reply gate refused two drafts: " + "; ".join(reasons)))

    def _system(self, step: Step) -> str:
        """The role's persona, then each mod's rules, in the order they stack."""
        role = self.pack.roles.get(step.role)
        parts = [role.prompt if role else ""]
        mods = {**BUILTIN_MODS, **self.pack.mods}
        parts += [f"Rule ({m}): {mods[m].rules}" for m in step.mods if m in mods]
        return "\n".join(p for p in parts if p)

    def _reachable(self, step: Step) -> tuple[list[str], list[str]]:
        """The tools a step may reach, and those ``dry-run`` took away from it."""
        if "dry-run" not in step.mods:
            return list(step.tools), []
        changes = {t.name for t in self.tools or [] if t.changes or t.repeat}
        return [n for n in step.tools if n not in changes], [n for n in step.tools if n in changes]

    async def _llm(self, t: _Turn, step: Step) -> _Result:
        """A model call whose output joins the state. The model may ask for tools, only those
        the step can reach; a contract, when there is one, decides whether the output is done."""
        ctx = context_for(t.progress, t.state["values"], t.text)
        reachable, removed = self._reachable(step)
        contract = step.contract or (contracts.DEFAULT if "test-driven" in step.mods else None)
        attempts: list[dict[str, Any]] = []
        feedback = ""
        tries = 1 + (contract.retries if contract else 0)
        output: dict[str, Any] = {}
        for attempt in range(1, tries + 1):
            system = self._system(step) + "\n\nState:\n" + json.dumps(ctx, sort_keys=True)
            if reachable:
                system += "\n\nTools you may ask for: " + ", ".join(reachable)
            user = render(step.prompt, ctx) + ("\n\n" + feedback if feedback else "")
            prompt = Prompt(
                "flow",
                system,
                [{"role": "user", "content": user}],
                {
                    "flow": t.flow.name,
                    "step": step.id,
                    "tools": reachable,
                    "feedback": feedback,
                    "attempt": attempt,
                },
            )
            try:
                text = (await call(self._provider_for(step), prompt, t.calls)).text
            except ProviderError as exc:
                return _Result(
                    decision=_handoff(f"model provider failed: {exc}"), note={"attempts": attempts}
                )
            output = _parse_output(text, step.output or "text")
            output["tool_results"] = await self._requested_tools(
                t, step, output.pop("tool_calls", []), reachable, removed
            )
            problems = contracts.check(contract, output, self._resolvable(t)) if contract else []
            attempts.append({"attempt": attempt, "passed": not problems, "problems": problems})
            if not problems:
                break
            feedback = contracts.feedback(problems)
        note: dict[str, Any] = {"tools_removed": removed}
        if contract:
            note["contract"] = {"passed": not attempts[-1]["problems"], "attempts": attempts}
            if attempts[-1]["problems"]:
                return _Result(
                    decision=_handoff(
                        f"flow {t.flow.name} step {step.id}: contract still failing after "
                        f"{len(attempts)} attempt(s)"
                    ),
                    note=note,
                )
        return _Result(output=output, note=note, model=self._provider_for(step).model)

    def _provider_for(self, step: Step) -> ModelProvider:
        """The step's own model when it names one (bound at app build), else the app's."""
        return self.step_models.get(step.model or "", self.provider)

    def _resolvable(self, t: _Turn) -> set[str]:
        return (
            set(t.state["values"])
            | set(t.progress["outputs"])
            | {f.key for f in getattr(self.retriever, "facts", [])}
        )

    async def _requested_tools(
        self, t: _Turn, step: Step, requested: Any, reachable: list[str], removed: list[str]
    ) -> list[dict[str, Any]]:
        """Tool calls a model asked for: refused unless the step can reach the tool; a change
        is never confirmed from a model's text, so the wrapper refuses it too."""
        out: list[dict[str, Any]] = []
        for req in requested if isinstance(requested, list) else []:
            name = str(req.get("tool", "")) if isinstance(req, dict) else ""
            args = req.get("arguments", {}) if isinstance(req, dict) else {}
            if name not in reachable:
                why = (
                    "dry-run mod: changes tools are removed from this step"
                    if name in removed
                    else "not a tool this step can reach"
                )
                t.record["tools"].append(
                    {"tool": name, "event": "refused", "detail": {"reason": why}}
                )
                out.append({"tool": name, "status": "refused", "reason": why})
                continue
            outcome = await self._runner(t).call(
                name, args, self._tool_context(t), events=t.record["tools"]
            )
            out.append(
                {
                    "tool": name,
                    "status": outcome.status,
                    "result": outcome.result,
                    "reason": outcome.reason,
                }
            )
        return out

    def _runner(self, t: _Turn) -> ToolRunner:
        if self.runner_for is None:
            return ToolRunner(self.tools or ToolRegistry())
        runner: ToolRunner = self.runner_for(t.conversation_id)
        return runner

    def _tool_context(self, t: _Turn) -> dict[str, Any]:
        return {
            "conversation_id": t.conversation_id,
            "owned": t.state.setdefault("owned", {}),  # a lookup's grant outlives the call
            "values": context_for(t.progress, t.state["values"], "")["values"],
        }

    def _fill(self, t: _Turn, step: Step, result: dict[str, Any] | None) -> None:
        """Values a tool's result provides, marked as coming from the system."""
        for key, slot in step.fills.items():
            if isinstance(result, dict) and result.get(key) is not None:
                value = result[key]
                t.state["values"][slot] = {"value": value, "source": "system", "seq": t.seq}
                t.record["values"].append(
                    {
                        "slot": slot,
                        "value": value,
                        "source": "system",
                        "outcome": "act",
                        "rejected": [],
                    }
                )

    async def _tool(self, t: _Turn, step: Step) -> _Result:
        name = step.tools[0]
        removed = self._reachable(step)[1]
        ctx = context_for(t.progress, t.state["values"], t.text)
        if name in removed:
            why = "dry-run mod: changes tools are removed from this step"
            t.record["tools"].append({"tool": name, "event": "refused", "detail": {"reason": why}})
            return _Result(
                output={"status": "refused", "reason": why}, note={"tools_removed": removed}
            )
        tool = self.tools.get(name) if self.tools else None
        if tool is not None and tool.changes:
            return await self._change(t, step, name, ctx)
        args = render_arguments(step.arguments, ctx)
        outcome = await self._runner(t).call(
            name, args, self._tool_context(t), events=t.record["tools"]
        )
        if not outcome.ok:
            return _Result(
                decision=_handoff(
                    f"flow {t.flow.name} step {step.id}: {name} {outcome.status}: {outcome.reason}"
                )
            )
        self._fill(t, step, outcome.result)
        output = {"status": outcome.status, "result": outcome.result}
        return self._contracted(t, step, output)

    def _contracted(self, t: _Turn, step: Step, output: dict[str, Any]) -> _Result:
        contract = step.contract or (contracts.DEFAULT_TOOL if "test-driven" in step.mods else None)
        if contract is None:
            return _Result(output=output)
        problems = contracts.check(contract, output, self._resolvable(t))
        note = {
            "contract": {
                "passed": not problems,
                "attempts": [{"attempt": 1, "passed": not problems, "problems": problems}],
            }
        }
        if problems:
            return _Result(
                decision=_handoff(
                    f"flow {t.flow.name} step {step.id}: contract failed: " + "; ".join(problems)
                ),
                note=note,
            )
        return _Result(output=output, note=note)

    async def _change(self, t: _Turn, step: Step, name: str, ctx: dict[str, Any]) -> _Result:
        """A ``changes`` tool (bot.flows.change): read back, then made only on a confident yes."""

        async def make(args: dict[str, Any]) -> _Result:
            dry = not t.progress.get("allow_side_effects", True)
            outcome = await self._runner(t).call(
                name,
                args,
                self._tool_context(t),
                confirmed=True,
                dry_run=dry,
                events=t.record["tools"],
            )
            if outcome.status not in ("ok", "dry_run"):
                return _Result(
                    decision=_handoff(
                        f"flow {t.flow.name} step {step.id}: {name} {outcome.status}: "
                        f"{outcome.reason}; nothing was confirmed to the customer"
                    )
                )
            self._fill(t, step, outcome.result)
            return self._contracted(
                t, step, {"status": outcome.status, "result": outcome.result, "arguments": args}
            )

        turn = ChangeTurn(
            t.flow.name,
            step,
            self.pack,
            t.progress,
            t.state["values"],
            t.text,
            t.seq,
            t.record,
            lambda text: t.replies.append(text_reply(text)),
            make,
        )
        return await ReadBack(turn).run(ctx)

    async def _repeat(self, t: _Turn, step: Step) -> _Result:
        """A customer building something up (bot.flows.repeat): each change made at once, read
        back after, undoable, checked for a wrong or missing record."""
        ctx = context_for(t.progress, t.state["values"], t.text)
        dry = not t.progress.get("allow_side_effects", True)

        async def call(change: dict[str, Any]) -> ToolOutcome:
            args = arguments_for(step, ctx, change["item"], change["quantity"])
            return await self._runner(t).call(
                step.tools[0], args, self._tool_context(t), dry_run=dry, events=t.record["tools"]
            )

        turn = RepeatTurn(
            t.flow.name,
            step,
            t.progress,
            ctx,
            self.pack.gates,
            t.record["reads"],
            call,
            lambda text: t.replies.append(text_reply(text)),
            t.seq,
        )
        return await Repeat(turn).run(t.text)


def _parse_output(text: str, key: str) -> dict[str, Any]:
    """A model's output: a JSON object when it wrote one, else its text under ``key``."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
            if isinstance(data, dict):
                return data
        except json.JSONDecodeError:
            pass
    return {key: text}


def _answer(t: _Turn, step: Step) -> Decision:
    return answer(t.flow.name, step.id, step.type)
