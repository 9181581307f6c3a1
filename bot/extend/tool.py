"""Tools: what the agent can do in the world, and the one lifecycle wrapper every call passes.

Every check that keeps a tool safe is enforced here, around ``Tool.run``, never by the model: the
arguments are validated against the tool's schema, ownership is checked against the conversation,
a ``changes`` tool runs only when the caller says the customer confirmed it (the read-back happens
before, in the flow step), the call has a timeout, and the result is validated. Each stage leaves a
lifecycle event (requested, validated, started, finished, failed, refused) in the turn record's
``tools`` list and on the conversation's live events.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import jsonschema

from bot.errors import GatebotError

DEFAULT_TIMEOUT_S = 10.0
#: Validators kept, by schema object: the tools' schemas are class attributes or built once per
#: pack load, so checking a schema and compiling its validator happens once, not per turn.
MAX_VALIDATORS = 512
#: How much of a result the record and a model see at once; the rest is read by window.
WINDOW_CHARS = 2000


class ToolEvent(TypedDict):
    """One lifecycle event of a call, as the turn record's ``tools`` list keeps it."""

    tool: str
    #: requested | ignored | validated | routed | started | finished | refused | failed, and
    #: declined (a flow's change turned down) or step_limit (a tool loop cut off, tool "")
    event: str
    #: The event's own keys (open: a refusal's reason, a finish's status and note ...); a finished
    #: or failed call's also keeps ``call``, ``{"arguments", "result"}``, for replay.
    detail: dict[str, Any]


#: The key of a ``finished`` or ``failed`` event's detail that keeps the call's arguments and
#: result (``{"arguments", "result"}``) in the turn record, for replay; never sent live.
RECORDED_CALL = "call"

#: A result's entry the runner moves out of the result into its ``finished`` (or, raised on a
#: ToolError's ``audit``, ``failed``) event as ``detail.query``: what a governed read ran, with
#: its parameters' names and row count (bot.data). Kept even for a tool that is not ``recorded``.
AUDIT = "_audit"

#: The trusted context entry with the conversation's verified identity; only core code sets it
#: (:func:`identity_context`), from ``conversations.verified_user_id``, never from a message.
IDENTITY = "identity"


def identity_context(verified_user_id: str | None) -> dict[str, Any]:
    """The ``identity`` entry of a tool context: ``{"user_id": ...}``, None when anonymous."""
    return {IDENTITY: {"user_id": verified_user_id}}


class ToolError(GatebotError):
    """A tool failed while running (its service answered an error, or it could not be reached)."""


class Tool(ABC):
    name: str = ""
    description: str = ""
    #: JSON schema for the arguments; the registry refuses a tool without one.
    schema: dict[str, Any] | None = None
    #: JSON schema the result must match (optional).
    result_schema: dict[str, Any] | None = None
    #: A tool that changes anything is read back to the customer and runs only on a confident yes.
    changes: bool = False
    #: A repeat tool changes one record of a list the customer builds up (an order's lines); it
    #: runs at once, its change is read back after, and the next message can undo it. It cannot
    #: also be ``changes``.
    repeat: bool = False
    #: Which records a customer may act on: ``any``, or the name of an argument whose value must be
    #: one the conversation owns (``context["owned"][argument]`` lists them), e.g. ``order_id``.
    ownership: str = "any"
    #: Arguments the tool fills itself from trusted context (the verified identity): the runner
    #: drops whatever a model or a flow proposed for them before any check, so no text can set them.
    filled: frozenset[str] = frozenset()
    timeout_s: float = DEFAULT_TIMEOUT_S
    #: Whether the turn record keeps each call's arguments and result (``detail["call"]`` of its
    #: ``finished`` or ``failed`` event), so ``gatebot replay`` can reuse them instead of calling
    #: again. The knowledge tools say no: their results are the pack's own passages, searched
    #: again on replay.
    recorded: bool = True

    @abstractmethod
    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        """Do the work and return a JSON-able result. Raise :class:`ToolError` on failure."""

    def describe(self) -> dict[str, Any]:
        """What a model is shown: name, description and argument schema. Never a credential."""
        return {"name": self.name, "description": self.description, "schema": self.schema}

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        """A tool's own refusal, decided before it runs (the API catalog validates the URL it
        would build here, so a refused call makes no request). ``None``: nothing to refuse."""
        return None

    def route(self, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """A tool that only names another (``catalog.call``) returns ``(tool name, arguments)``;
        the runner then calls that tool with every check of its own, confirmation included."""
        return None


_ANY_OBJECT: dict[str, Any] = {}
_validators: dict[int, tuple[dict[str, Any], jsonschema.protocols.Validator]] = {}


def validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    """The checked validator of ``schema`` (raises SchemaError once, for a bad schema). Keyed by
    the schema object, which the entry keeps alive so its id is never reused while cached."""
    entry = _validators.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    jsonschema.Draft202012Validator.check_schema(schema)
    compiled = jsonschema.Draft202012Validator(schema)
    if len(_validators) >= MAX_VALIDATORS:
        _validators.pop(next(iter(_validators)))  # the oldest: schemas made on the fly
    _validators[id(schema)] = (schema, compiled)
    return compiled


def first_error(schema: dict[str, Any], instance: Any) -> jsonschema.ValidationError | None:
    """The error ``jsonschema.validate`` would raise, from the cached validator."""
    return jsonschema.exceptions.best_match(validator(schema).iter_errors(instance))


class ToolRegistry:
    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        if not tool.name:
            raise GatebotError(f"tool {type(tool).__name__} has no name")
        if not isinstance(tool.schema, dict):
            raise GatebotError(f"tool {tool.name!r} has no argument schema; refused")
        validator(tool.schema)
        if tool.changes and tool.repeat:
            raise GatebotError(f"tool {tool.name!r} cannot be both changes and repeat")
        self.tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __iter__(self) -> Any:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)


@dataclass
class ToolOutcome:
    """What one call came to. ``status``: ok, refused (never ran), failed (ran and failed) or
    dry_run (a change recorded, not sent)."""

    tool: str
    status: str
    result: dict[str, Any] | None = None
    reason: str | None = None
    events: list[ToolEvent] = field(default_factory=list)
    #: Refused: the argument whose value is outside the tool's declared schema, so the refusal
    #: can be explained from the declaration ("at most 50").
    argument: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def window(text: str, offset: int = 0, length: int = WINDOW_CHARS) -> dict[str, Any]:
    """One window of a long text: never silently cut, the total length says what is left."""
    offset = max(0, int(offset))
    length = max(1, int(length))
    return {
        "content": text[offset : offset + length],
        "offset": offset,
        "length": len(text[offset : offset + length]),
        "total": len(text),
    }


class ToolRunner:
    """The lifecycle wrapper. ``publish(event)`` streams each event live (optional)."""

    def __init__(
        self, registry: ToolRegistry, publish: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.registry = registry
        self.publish = publish

    async def call(
        self,
        name: str,
        arguments: dict[str, Any],
        context: dict[str, Any],
        *,
        confirmed: bool = False,
        dry_run: bool = False,
        events: list[ToolEvent] | None = None,
    ) -> ToolOutcome:
        """Run one call through every check. ``confirmed``: the customer said a confident yes to
        the read-back (required for a ``changes`` tool). ``dry_run``: record a change, send
        nothing. ``events`` (the turn record's ``tools`` list) receives the lifecycle events."""
        outcome = ToolOutcome(name, "refused")
        sink = events if events is not None else outcome.events

        def emit(event: str, **detail: Any) -> None:
            entry: ToolEvent = {"tool": name, "event": event, "detail": detail}
            sink.append(entry)
            if sink is not outcome.events:
                outcome.events.append(entry)
            if self.publish:
                # Arguments, results and a governed read's statement stay in the record only.
                shown = {k: v for k, v in detail.items() if k not in (RECORDED_CALL, "query")}
                self.publish({"type": "tool", "tool": name, "event": event, "detail": shown})

        emit("requested", arguments=sorted(arguments) if isinstance(arguments, dict) else None)
        tool = self.registry.get(name)
        if tool is not None and tool.filled and isinstance(arguments, dict):
            dropped = sorted(set(arguments) & tool.filled)
            arguments = {k: v for k, v in arguments.items() if k not in tool.filled}
            if dropped:
                emit("ignored", arguments=dropped, why="filled from the verified identity")
        refusal = self._refusal(tool, arguments, context, confirmed)
        if refusal or tool is None:
            outcome.reason = refusal or "unknown tool"
            outcome.argument = _invalid_argument(tool, arguments)
            emit("refused", reason=outcome.reason)
            return outcome
        routed = tool.route(arguments)
        if routed is not None:
            # The named tool passes every check itself, as if called directly; one hop only.
            target = self.registry.get(routed[0])
            if target is None or target.route(routed[1]) is not None:
                outcome.reason = f"{routed[0]!r} is not a tool that {name} can call"
                emit("refused", reason=outcome.reason)
                return outcome
            emit("routed", to=routed[0])
            inner = await self.call(
                routed[0], routed[1], context, confirmed=confirmed, dry_run=dry_run, events=events
            )
            inner.events[:0] = outcome.events
            return inner
        emit("validated")
        if dry_run and (tool.changes or tool.repeat):
            outcome.status, outcome.result = "dry_run", {"dry_run": True, "arguments": arguments}
            emit("finished", status="dry_run", note="a dry run: nothing was sent")
            return outcome
        emit("started")
        return await self._execute(tool, arguments, context, outcome, emit)

    async def _execute(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        context: dict[str, Any],
        outcome: ToolOutcome,
        emit: Callable[..., None],
    ) -> ToolOutcome:
        """Run a checked call within its timeout; its result must be an object of its schema."""
        kept = {RECORDED_CALL: {"arguments": arguments}} if tool.recorded else {}
        try:
            result = await asyncio.wait_for(tool.run(arguments, context), tool.timeout_s)
        except TimeoutError:
            return self._failed(outcome, emit, f"timed out after {tool.timeout_s:g} s", kept)
        except ToolError as exc:
            query = getattr(exc, "audit", None)
            return self._failed(
                outcome, emit, str(exc), {**kept, **({"query": query} if query else {})}
            )
        if not isinstance(result, dict):
            return self._failed(outcome, emit, "the tool returned no JSON object", kept)
        if tool.result_schema is not None:
            wrong = first_error(tool.result_schema, result)
            if wrong is not None:
                why = f"result does not match schema: {wrong.message}"
                return self._failed(outcome, emit, why, kept)
        query = result.pop(AUDIT, None)
        outcome.status, outcome.result = "ok", result
        grant_ownership(context, result)
        if kept:
            kept[RECORDED_CALL]["result"] = result
        if query is not None:
            kept["query"] = query
        emit("finished", status="ok", note=str(result.get("note", ""))[:200], **kept)
        return outcome

    @staticmethod
    def _failed(
        outcome: ToolOutcome, emit: Callable[..., None], reason: str, kept: dict[str, Any]
    ) -> ToolOutcome:
        outcome.status, outcome.reason = "failed", reason
        emit("failed", reason=reason, **kept)
        return outcome

    @staticmethod
    def _refusal(
        tool: Tool | None, arguments: Any, context: dict[str, Any], confirmed: bool
    ) -> str | None:
        if tool is None:
            return "unknown tool"
        if not isinstance(arguments, dict):
            return "arguments must be a JSON object"
        wrong = first_error(tool.schema or _ANY_OBJECT, arguments)
        if wrong is not None:
            where = "/".join(str(p) for p in wrong.absolute_path) or "arguments"
            return f"invalid {where}: {wrong.message}"
        if tool.ownership != "any":
            value = arguments.get(tool.ownership)
            owned = {str(v) for v in context.get("owned", {}).get(tool.ownership, [])}
            if value is None or str(value) not in owned:
                return f"{tool.ownership} does not belong to this conversation"
        own = tool.check(arguments, context)
        if own:
            return own
        if tool.changes and not confirmed:
            return "a change runs only after the customer confirms its read-back"
        return None


def _invalid_argument(tool: Tool | None, arguments: Any) -> str | None:
    """The argument a schema refusal is about (None when the refusal is about something else)."""
    if tool is None or not isinstance(arguments, dict):
        return None
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(tool.schema or {}).iter_errors(arguments)
    )
    return str(error.absolute_path[0]) if error is not None and error.absolute_path else None


def grant_ownership(context: dict[str, Any], result: dict[str, Any] | None) -> None:
    """What a successful result grants (``{"owns": {"order_id": "1042"}}``: the service answered a
    lookup only for this customer) joins ``context["owned"]``, the lists the ownership check reads.
    Only a tool's own result can grant; a caller passes the conversation's ``owned`` dict so the
    grant outlives the call."""
    owns = result.get("owns") if isinstance(result, dict) else None
    if not isinstance(owns, dict):
        return
    owned = context.setdefault("owned", {})
    for argument, value in owns.items():
        values = owned.setdefault(str(argument), [])
        if str(value) not in {str(v) for v in values}:
            values.append(str(value))


def result_text(result: dict[str, Any] | None) -> str:
    """A result as the text a window reads (stable key order)."""
    return json.dumps(result, sort_keys=True, ensure_ascii=False)
