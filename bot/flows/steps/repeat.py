"""A repeat step: a customer building something up, change by change.

Each change a message calls for is made at once (a repeat tool can never be a ``changes`` tool,
so nothing here needs a read-back first), then read back after, and the next message can undo it.
One message may call for several changes; each phrase's pick must pass the repeat gate
(:mod:`bot.flows.steps.phrases`). After the calls, the self-check
(:mod:`bot.flows.steps.selfcheck`) asks whether any record is wrong or anything is missing; at
or above ``readBackAt`` the step reads everything back and asks "Is that right?", and reads the
reply as yes, no (the message's changes are taken back) or a correction (taken back, then the
correction is made).

The records are what the tool says they are: the step's ``records.start`` path names them in the
run's state (a lookup's result) and ``records.result`` in each call's result. Without those the
step counts its own changes from zero.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from bot.extend.tool import ToolOutcome
from bot.flows.model import Step
from bot.flows.outcome import StepResult, answer, handoff
from bot.flows.state import lookup, render, render_arguments
from bot.flows.steps import emailcode
from bot.flows.steps.base import StepHost, StepTurn, worded
from bot.flows.steps.phrases import ACTIONS, VERSION, Reading, read_message
from bot.flows.steps.refusal import change_limit, declared, explainable, service_words
from bot.flows.steps.selfcheck import Made, check
from bot.text import has_phrase, normalise
from bot.turn import gates as gating
from bot.turn import yesno
from bot.turn.act import text_reply
from bot.turn.decide import Decision
from bot.turn.turn import Read

DEFAULT_READ_BACK_AT = 0.3
#: At most this many changes from one message: a pasted list cannot fan out into a flood of calls.
MAX_CHANGES_PER_MESSAGE = 8
_ACTS = ("add", "remove", "change")


@dataclass
class RepeatTurn:
    """What the step needs from the turn; :func:`run` builds it."""

    flow: str
    step: Step
    progress: dict[str, Any]
    context: dict[str, Any]  # the run's state as steps see it
    gates: dict[str, float]
    reads: list[Read]  # the turn record's reads
    call: Callable[[dict[str, Any]], Awaitable[ToolOutcome]]  # the step's tool, arguments ready
    say: Callable[[str], None]
    seq: int
    #: What the tool declares about the argument the count goes in (its minimum and maximum).
    limit: dict[str, Any] = field(default_factory=dict)
    #: A fixed line by template name, in the run's language: (name, English default, values).
    word: Callable[..., str] = lambda name, default, **values: default.format(**values)


def name_of(step: Step, item: str, count: int) -> str:
    """How an item reads: its first declared name for one, its id in words for more."""
    names = step.items.get(item) or []
    return names[0] if abs(count) == 1 and names else item.replace("_", " ")


def question_of(step: Step) -> str:
    first = next(iter(step.items), "items")
    return step.question or (
        f"What should I change? For example 'add 2 {first.replace('_', ' ')}', or say 'done'."
    )


class Repeat:
    def __init__(self, t: RepeatTurn) -> None:
        self.t, self.step = t, t.step

    @property
    def w(self) -> dict[str, Any]:
        waiting: dict[str, Any] = self.t.progress["waiting"]
        return waiting

    async def run(self, text: str) -> StepResult:
        waiting = self.t.progress.get("waiting")
        if not waiting or waiting.get("step") != self.step.id:
            # The message that reached this step answered the step before: ask, read nothing.
            self.t.progress["waiting"] = {
                "step": self.step.id,
                "changes": [],
                "records": self._start_records(),
                "last": None,
                "checking": None,
                "rounds": 0,
            }
            opening = self.t.progress.pop("opening", None)
            if opening and opening.get("step") == self.step.id:
                # The message that started the flow already asked for a change ("drop two
                # seats"): it is made now, as if said here, instead of asking for it again.
                return await self._message(opening["text"])
            return self._ask(question_of(self.step))
        if self.w.get("checking"):
            return await self._answer_check(text)
        return await self._message(text)

    # -- reading a message ---------------------------------------------------------------------

    def _referent(self) -> tuple[str, str]:
        """The record a message without a name refers to: the last one changed, else the first
        item the step's question names, else the first item declared."""
        if self.w.get("last"):
            return self.w["last"], "conversation"
        norm = normalise(question_of(self.step))
        named = [
            (norm.find(normalise(n)), item)
            for item, names in self.step.items.items()
            for n in (item.replace("_", " "), *names)
            if has_phrase(norm, normalise(n))
        ]
        if named:
            return min(named)[1], "question"
        return next(iter(self.step.items)), "default"

    def _read(
        self,
        text: str,
        removed: frozenset[str] = frozenset(),
        referent: tuple[str, str] | None = None,
    ) -> list[Reading]:
        readings = read_message(text, self.step.items, referent or self._referent(), removed)
        for r in readings:
            self._record(r)
        return readings

    def _record(self, r: Reading) -> None:
        gate = self.t.gates["repeat"]
        self.t.reads.append(
            gating.read(f"repeat:{self.step.id}", VERSION, r.pick, r.confidence, "repeat", gate)
        )

    def _confident(self, readings: list[Reading], *picks: str) -> list[Reading]:
        gate = self.t.gates["repeat"]
        return [r for r in readings if r.pick in picks and r.confidence >= gate]

    async def _message(
        self,
        text: str,
        removed: frozenset[str] = frozenset(),
        said: list[str] | None = None,
        referent: tuple[str, str] | None = None,
    ) -> StepResult:
        """A message of changes. ``removed``, ``said`` and ``referent``: what a correction took
        back first, and the record it was about."""
        readings = self._read(text, removed, referent)
        acts = self._confident(readings, *_ACTS)
        note: dict[str, Any] = {"repeat": {"phrases": [r.describe() for r in readings]}}
        if not acts and self._confident(readings, "undo"):
            return await self._undo(note)
        if not acts and self._confident(readings, "done"):
            return self._finish(note)
        if acts and self._confident(readings, "undo"):  # "undo that, add 2 seats instead"
            undone, _ = await self._revert()
            said = [*(said or []), *undone]
        torn, self.w["torn"] = self.w.get("torn"), None
        if not acts and torn is not None:
            acts = self._settle(torn, text)
            readings = acts or readings  # the message was the answer, not phrases of its own
        if not acts:
            return self._ask(self._clarify(readings), note)
        if len(acts) > MAX_CHANGES_PER_MESSAGE:
            note["repeat"]["refused"] = f"{len(acts)} changes in one message"
            return self._ask(
                f"That is {len(acts)} changes in one message; I make at most "
                f"{MAX_CHANGES_PER_MESSAGE} at a time, so I haven't made any. Could you send them "
                "in smaller groups?",
                note,
            )
        return await self._make(acts, readings, note, said or [])

    def _finish(self, note: dict[str, Any]) -> StepResult:
        """The customer is done: the step completes with every change and the records."""
        w, self.t.progress["waiting"] = self.w, None
        output = {"status": "ok", "changes": w["changes"], "records": w["records"]}
        return StepResult(output=output, note=note)

    def _settle(self, torn: dict[str, Any], text: str) -> list[Reading]:
        """The answer to "replace them, or add?": a reading of the phrase asked about."""
        norm = normalise(text)
        replace = any(has_phrase(norm, w) for w in ("replace", "swap", "instead", "switch"))
        add = any(has_phrase(norm, w) for w in ("add", "both", "as well", "too", "keep"))
        if replace == add:
            return []
        r = Reading(torn["phrase"], {a: 0.0 for a in ACTIONS}, torn["item"], "phrase")
        r.quantity, r.target = torn["quantity"], torn["target"]
        r.pick = "change" if replace else "add"
        r.scores[r.pick] = r.confidence = 0.9
        self._record(r)
        return [r]

    def _clarify(self, readings: list[Reading]) -> str:
        """What to ask when no phrase passed the gate: the choice it was torn between, if any."""
        torn = next(
            (r for r in readings if r.scores["change"] and r.scores["add"] and r.target), None
        )
        if torn is not None and torn.item and torn.quantity is not None:
            self.w["torn"] = {
                "phrase": torn.phrase,
                "item": torn.item,
                "quantity": torn.quantity,
                "target": torn.target,
            }
            what = f"{torn.quantity} {name_of(self.step, torn.item, torn.quantity)}"
            target = name_of(self.step, torn.target or "", 2)
            return f"Should I replace the {target} with {what}, or add {what}?"
        return "Sorry, I didn't catch a change there. " + question_of(self.step)

    # -- making changes ------------------------------------------------------------------------

    def _start_records(self) -> dict[str, int]:
        records = {item: 0 for item in self.step.items}
        path = self.step.records.get("start")
        found = lookup(path, self.t.context) if path else None
        if isinstance(found, dict):
            records.update({k: v for k, v in found.items() if k in records and _is_int(v)})
        return records

    def _plan(self, r: Reading) -> list[tuple[str, int, int]]:
        """The calls a pick comes to: (item, delta, the count expected after)."""
        have = self.w["records"]
        item, q = r.item or "", r.quantity
        now = int(have.get(item, 0))
        if r.pick == "add" and q:
            return [(item, q, now + q)]
        if r.pick == "remove":
            gone = now if q is None else q  # more than there is: the tool says no, honestly
            return [(item, -gone, now - gone)] if gone else []
        if r.pick == "change" and q is not None:
            if r.target and r.target != item:
                was = int(have.get(r.target, 0))
                return [(r.target, -was, 0), (item, q, now + q)] if was else [(item, q, now + q)]
            return [(item, q - now, q)] if q != now else []
        return []

    async def _call(self, item: str, delta: int) -> tuple[ToolOutcome, int | None]:
        outcome = await self.t.call({"item": item, "quantity": delta})
        if outcome.status not in ("ok", "dry_run"):
            return outcome, None
        records = self.w["records"]
        path = self.step.records.get("result")
        fresh = lookup(path, outcome.result) if path and isinstance(outcome.result, dict) else None
        if isinstance(fresh, dict) and outcome.status == "ok":
            records.update({k: int(v) for k, v in fresh.items() if k in records and _is_int(v)})
        else:
            records[item] = int(records.get(item, 0)) + delta
        return outcome, int(records.get(item, 0))

    async def _make(
        self, acts: list[Reading], readings: list[Reading], note: dict[str, Any], said: list[str]
    ) -> StepResult:
        made: list[Made] = []
        lines: list[str] = list(said)
        for r in acts:
            plan = self._plan(r)
            if not plan and r.item:  # "make it 5 seats" with 5 already; nothing left to remove
                now = int(self.w["records"].get(r.item, 0))
                lines.append(f"{name_of(self.step, r.item, now).capitalize()}: {now} already.")
            for item, delta, expected in plan:
                outcome, after = await self._call(item, delta)
                if outcome.status == "failed" or explainable(outcome):
                    lines.append(self._refused(item, delta, outcome))
                    continue
                if after is None:  # refused by a check the customer cannot change: a person
                    return StepResult(
                        decision=handoff(
                            f"flow {self.t.flow} step {self.step.id}: {outcome.status}: "
                            f"{outcome.reason}"
                        ),
                        note=note,
                    )
                self.w["changes"].append({"seq": self.t.seq, "item": item, "delta": delta})
                self.w["last"] = item
                made.append(Made(r, item, expected, after))
                lines.append(self._line(item, delta, after))
        result = check(made, readings)
        threshold = self.t.gates.get("readBackAt", DEFAULT_READ_BACK_AT)
        self.t.reads.extend(result.reads(self.step.id, threshold))
        note["repeat"]["selfcheck"] = {
            "wrong": result.wrong,
            "missing": result.missing,
            "why": {k: v for k, v in result.why.items() if v},
            "unread": result.unread,
        }
        if not made and not lines:
            return self._ask(self._clarify(readings), note)
        if not made:  # every change was refused: said as it is, and asked again
            return self._ask(" ".join([*lines, question_of(self.step)]), note)
        summary = " ".join(lines)
        if made and result.worst() >= threshold:
            self.w["checking"] = {"seq": self.t.seq, "asks": 0, "text": summary}
            return self._check_back(summary, result.unread, note)
        self.w["rounds"] = 0
        if self._confident(readings, "done"):  # "add 2 seats and that's all"
            self.t.say(summary)
            return self._finish(note)
        return self._done_message(summary, note)

    def _line(self, item: str, delta: int, after: int) -> str:
        name, default = (
            ("flow_change_added", "Added {count} {item} (now {total}).")
            if delta > 0
            else ("flow_change_removed", "Removed {count} {item} (now {total}).")
        )
        return self.t.word(
            name, default, count=abs(delta), item=self._named(item, delta), total=after
        )

    def _named(self, item: str, count: int) -> str:
        """An item's name in the run's language: the pack's ``item_ID`` (``item_ID_one`` for
        one) where it words it, else as declared."""
        key = f"item_{item}_one" if abs(count) == 1 else f"item_{item}"
        return self.t.word(key, name_of(self.step, item, count))

    def _refused(self, item: str, delta: int, outcome: ToolOutcome) -> str:
        """A change the tool refused or the service turned down, said as it is: from the tool's
        declared bound when the count broke it ("the most you can add at once is 50 seats")."""
        limit = None
        if outcome.status == "refused":
            limit = change_limit(self.t.limit, delta, lambda n: name_of(self.step, item, n))
        return self._failed(item, delta, limit or service_words(outcome.reason or "it failed"))

    def _failed(self, item: str, delta: int, reason: str) -> str:
        verb = "add" if delta > 0 else "remove"
        return f"I couldn't {verb} {abs(delta)} {name_of(self.step, item, delta)}: {reason}."

    # -- undo and the self-check's answer --------------------------------------------------------

    async def _revert(
        self, seq: int | None = None, only: set[str] | None = None
    ) -> tuple[list[str], set[str]]:
        """Take back the changes one message made (the last one's when ``seq`` is None), or
        only those to the records in ``only``."""
        changes = self.w["changes"]
        if not changes:
            return [], set()
        seq = changes[-1]["seq"] if seq is None else seq
        batch = [c for c in changes if c["seq"] == seq and (only is None or c["item"] in only)]
        lines, items = [], set()
        for c in reversed(batch):
            outcome, after = await self._call(c["item"], -int(c["delta"]))
            if after is None:
                lines.append(self._failed(c["item"], -int(c["delta"]), outcome.reason or "failed"))
                continue
            changes.remove(c)
            items.add(c["item"])
            lines.append(self._line(c["item"], -int(c["delta"]), after))
        self.w["last"] = changes[-1]["item"] if changes else None
        return lines, items

    async def _undo(self, note: dict[str, Any]) -> StepResult:
        lines, _ = await self._revert()
        if not lines:
            return self._ask("There is nothing to undo yet.", note)
        return self._done_message(" ".join(lines), note)

    async def _answer_check(self, text: str) -> StepResult:
        checking = self.w["checking"]
        read = yesno.read(
            text, "yesNo", self.t.gates["yesNo"], head=f"selfcheck:{self.step.id}:answer"
        )
        self.t.reads.append(read)
        outcome, said = read["outcome"], read["answer"]
        referent = self._referent()  # read before a take-back moves it
        readings = read_message(text, self.step.items, referent)
        corrections = self._confident(readings, *_ACTS)
        if outcome == "act" and said == "yes":
            self.w["checking"], self.w["rounds"] = None, 0
            if corrections:  # "yes, and add a storage pack"
                return await self._message(text)
            return self._done_message("Good, that stays as it is.", {})
        if corrections:
            # A correction takes back what the message made of the records it names, and only
            # those ("no, also a storage pack" keeps the seats); what was taken back counts as
            # taken off, so "no, make it 3 seats" adds 3 rather than setting the total to 3.
            self.w["checking"] = None
            self.w["rounds"] = self.w.get("rounds", 0) + 1
            if self.w["rounds"] > self.step.corrections:
                return StepResult(
                    decision=handoff(
                        f"flow {self.t.flow} step {self.step.id}: still corrected after "
                        f"{self.step.corrections} read-backs"
                    )
                )
            named = {x for r in corrections for x in (r.item, r.target) if x}
            lines, items = await self._revert(checking["seq"], named)
            return await self._message(text, frozenset(items), lines, referent)
        if (outcome == "act" and said == "no") or self._confident(readings, "undo"):
            self.w["checking"] = None
            lines, _ = await self._revert(checking["seq"])
            return self._ask(
                "I've taken that back: " + " ".join(lines) + " What should it be instead?",
                {"repeat": {"taken_back": lines}},
            )
        if self._confident(readings, "done"):
            self.w["checking"] = None
            return await self._message(text)
        checking["asks"] += 1
        if checking["asks"] >= 2:
            return StepResult(
                decision=handoff(
                    f"flow {self.t.flow} step {self.step.id}: the answer to the read-back "
                    "stayed unclear"
                )
            )
        return self._check_back("Sorry, I need a yes or a correction. " + checking["text"], [], {})

    # -- what the customer is told -------------------------------------------------------------

    def _ask(self, text: str, note: dict[str, Any] | None = None) -> StepResult:
        self.t.say(text)
        return StepResult(decision=answer(self.t.flow, self.step.id, "repeat"), note=note or {})

    def _check_back(self, summary: str, unread: list[str], note: dict[str, Any]) -> StepResult:
        text = "Here is what I made of that: " + summary
        if unread:
            text += " I did not act on: " + "; ".join(f'"{p}"' for p in unread) + "."
        self.t.say(text + " Is that right?")
        decision = Decision(
            ["confirm", "handoff"],
            f"flow {self.t.flow}: the self-check after step {self.step.id}'s calls",
            move="confirm",
            why=f"flow {self.t.flow} step {self.step.id}: a record may be wrong or missing",
        )
        return StepResult(decision=decision, note=note)

    def _done_message(self, summary: str, note: dict[str, Any]) -> StepResult:
        ctx = {**self.t.context, "repeat": {"summary": summary}}
        self.t.say(render(self.step.template or "{repeat.summary}", ctx))
        return StepResult(decision=answer(self.t.flow, self.step.id, "repeat"), note=note)


def arguments_for(step: Step, context: dict[str, Any], item: str, quantity: int) -> Any:
    """The step's declared arguments with ``{repeat.item}`` and ``{repeat.quantity}`` filled."""
    return render_arguments(
        step.arguments, {**context, "repeat": {"item": item, "quantity": quantity}}
    )


def quantity_limit(host: StepHost, step: Step) -> dict[str, Any]:
    """What the step's tool declares about the argument ``{repeat.quantity}`` fills."""
    tool = host.tools.get(step.tools[0]) if host.tools else None
    argument = next((k for k, v in step.arguments.items() if v == "{repeat.quantity}"), None)
    return declared(tool.schema, argument) if tool is not None and argument else {}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


async def run(host: StepHost, t: StepTurn, step: Step) -> StepResult:
    """The step in a flow's turn: its tool called through the conversation's runner (dry on a
    fork without side effects), what it says going into the turn's replies. Before its first
    change, a one-time code by email when what it changes is owned only by an email and codes
    are on (:mod:`bot.flows.steps.emailcode`)."""
    coded = await emailcode.gate(
        host, t, step, host.tools.get(step.tools[0]) if host.tools else None
    )
    if coded is not None:
        return coded
    ctx = t.context()
    dry = not t.progress.get("allow_side_effects", True)

    async def call(change: dict[str, Any]) -> ToolOutcome:
        args = arguments_for(step, ctx, change["item"], change["quantity"])
        return await host.runner(t).call(
            step.tools[0], args, host.tool_context(t), dry_run=dry, events=t.record["tools"]
        )

    turn = RepeatTurn(
        t.flow.name,
        step,
        t.progress,
        ctx,
        host.pack.gates,
        t.record["reads"],
        call,
        lambda text: t.replies.append(text_reply(text)),
        t.seq,
        quantity_limit(host, step),
        partial(worded, host.pack, t.progress.get("language")),
    )
    return await Repeat(turn).run(t.text)
