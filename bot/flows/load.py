"""Flow declarations: read, validate, build; export and import as versioned JSON.

Errors are :class:`bot.errors.PackError` naming the flow file, the line when known and the field as
``steps.<id>.<field>``, all collected so a user fixes them in one pass. What only an app knows (the
registered tools) is checked by :func:`check_tools` at app build, so a pack's flows can name tools
a plugin registers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema

from bot.errors import PackError, PackErrors
from bot.flows.model import (
    BUILTIN_MODS,
    DEFAULT_CORRECTIONS,
    EXIT_LOOP,
    MAX_PASSES,
    STEP_TYPES,
    Condition,
    Contract,
    Flow,
    Loop,
    Mod,
    Role,
    Route,
    Step,
    Trigger,
    Variant,
)
from bot.flows.schedule import CycleError, loop_body, schedule, topo_order
from bot.flows.texts import TEXT_SCHEMA, declared, first_text
from bot.yamlines import YamlSyntaxError, line_for, load_with_lines

EXPORT_FORMAT = "gatebot-flow"
EXPORT_VERSION = 1

_id = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}
_str = {"type": "string", "minLength": 1}
_strs = {"type": "array", "items": _str}


def _obj(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


_CONDITION = {
    "type": "object",
    "properties": {
        "path": _str,
        "equals": {},
        "in": {"type": "array"},
        "exists": {"type": "boolean"},
        "matches": _str,
    },
    "required": ["path"],
    "additionalProperties": False,
    "minProperties": 2,
}

STEP_SCHEMA = _obj(
    {
        "id": _id,
        "type": {"enum": list(STEP_TYPES)},
        "prevStepIds": {"type": "array", "items": _id},
        "prompt": _str,
        "template": TEXT_SCHEMA,
        "tools": _strs,
        "role": _str,
        "mods": _strs,
        "contract": _obj(
            {
                "requires": _strs,
                "patterns": {"type": "object", "additionalProperties": _str},
                "no_stubs": {"type": "boolean"},
                "citations_resolve": {"type": "boolean"},
                "tool_status": _str,
                "retries": {"type": "integer", "minimum": 0, "maximum": 5},
            },
            [],
        ),
        "model": _str,
        "optional": {"type": "boolean"},
        "repeat": {"type": "boolean"},
        "when": _CONDITION,
        "slot": _id,
        "arguments": {"type": "object"},
        "fills": {"type": "object", "additionalProperties": _id},
        "correct": {"type": "array", "items": _id},
        "choices": {"type": "object", "additionalProperties": _strs},
        "corrections": {"type": "integer", "minimum": 0, "maximum": 5},
        "routes": {
            "type": "array",
            "items": _obj({"when": _CONDITION, "to": _str}, ["when", "to"]),
        },
        "default": _str,
        "variants": {
            "type": "array",
            "items": _obj({"when": _CONDITION, "template": TEXT_SCHEMA}, ["when", "template"]),
        },
        "output": _id,
        "items": {"type": "object", "minProperties": 1, "additionalProperties": _strs},
        "records": _obj({"start": _str, "result": _str}, []),
        "question": TEXT_SCHEMA,
        # A reply that closes a lead a person follows up (bot.turn.decide.LEADS).
        "lead": {"enum": ["demo", "engineer"]},
    },
    ["id", "type", "role"],
)

FLOW_SCHEMA = _obj(
    {
        "name": _id,
        "title": _str,
        "description": {"type": "string"},
        "tags": _strs,
        "author": {"type": "string"},
        "version": {"type": ["string", "integer", "number"]},
        "status": {"enum": ["active", "draft"]},
        "trigger": _obj({"intents": _strs, "keywords": _strs, "examples": _strs}, []),
        "steps": {"type": "array", "minItems": 1, "items": STEP_SCHEMA},
        "loops": {
            "type": "array",
            "items": _obj(
                {"from": _id, "to": _id, "max_passes": {"type": "integer"}},
                ["from", "to", "max_passes"],
            ),
        },
    },
    ["name", "title", "version", "steps"],
)

ROLES_SCHEMA = _obj(
    {
        "roles": {
            "type": "array",
            "minItems": 1,
            "items": _obj({"name": _str, "title": _str, "prompt": _str}, ["name", "prompt"]),
        },
        "mods": {
            "type": "array",
            "items": _obj({"name": _str, "rules": _str, "incompatible": _strs}, ["name", "rules"]),
        },
    },
    ["roles"],
)


class _Where:
    """Turns a path into the data into a PackError that names the step by id."""

    def __init__(self, label: str, data: Any, lines: dict[Any, int]) -> None:
        self.label, self.data, self.lines = label, data, lines

    def error(self, path: tuple[Any, ...], message: str) -> PackError:
        return PackError(self.label, line_for(self.lines, path), self._field(path), message)

    def _field(self, path: tuple[Any, ...]) -> str:
        out: list[str] = []
        for i, part in enumerate(path):
            if i == 1 and path[0] == "steps" and isinstance(part, int):
                steps = self.data.get("steps") if isinstance(self.data, dict) else None
                step = steps[part] if isinstance(steps, list) and part < len(steps) else None
                sid = step.get("id") if isinstance(step, dict) else None
                out.append(str(sid) if isinstance(sid, str) else f"[{part}]")
            elif isinstance(part, int):
                out[-1:] = [f"{out[-1] if out else ''}[{part}]"]
            else:
                out.append(str(part))
        return ".".join(out)


def _condition(raw: dict[str, Any]) -> Condition:
    return Condition(
        path=raw["path"],
        equals=raw.get("equals"),
        one_of=raw.get("in"),
        exists=raw.get("exists"),
        matches=raw.get("matches"),
        has_equals="equals" in raw,
    )


def _step(raw: dict[str, Any]) -> Step:
    contract = raw.get("contract")
    return Step(
        id=raw["id"],
        type=raw["type"],
        role=raw["role"],
        prev=list(raw.get("prevStepIds", [])),
        prompt=raw.get("prompt", ""),
        template=first_text(raw.get("template", "")),
        tools=list(raw.get("tools", [])),
        mods=list(raw.get("mods", [])),
        contract=Contract(**contract) if contract is not None else None,
        model=raw.get("model"),
        optional=bool(raw.get("optional", False)),
        repeat=bool(raw.get("repeat", False)),
        when=_condition(raw["when"]) if "when" in raw else None,
        slot=raw.get("slot"),
        arguments=dict(raw.get("arguments", {})),
        fills=dict(raw.get("fills", {})),
        correct=list(raw.get("correct", [])),
        choices={k: list(v) for k, v in raw.get("choices", {}).items()},
        corrections=int(raw.get("corrections", DEFAULT_CORRECTIONS)),
        routes=[Route(r["to"], _condition(r["when"])) for r in raw.get("routes", [])],
        default=raw.get("default"),
        variants=[
            Variant(first_text(v["template"]), _condition(v["when"]))
            for v in raw.get("variants", [])
        ],
        output=raw.get("output"),
        items={k: list(v) for k, v in raw.get("items", {}).items()},
        records=dict(raw.get("records", {})),
        question=first_text(raw.get("question", "")),
        lead=raw.get("lead"),
        texts=declared(raw),
    )


def parse_flow(
    data: Any,
    label: str,
    lines: dict[Any, int] | None = None,
    roles: dict[str, Role] | None = None,
    mods: dict[str, Mod] | None = None,
) -> Flow:
    """Validate one declaration and build it. Raises :class:`PackErrors` with every problem."""
    where = _Where(label, data, lines or {})
    errors = [
        where.error(tuple(e.absolute_path), e.message)
        for e in sorted(
            jsonschema.Draft202012Validator(FLOW_SCHEMA).iter_errors(data),
            key=lambda e: list(map(str, e.absolute_path)),
        )
    ]
    if errors:
        raise PackErrors(errors)
    flow = Flow(
        name=data["name"],
        title=data["title"],
        version=str(data["version"]),
        steps=[_step(s) for s in data["steps"]],
        trigger=Trigger(**data.get("trigger", {})),
        description=data.get("description", ""),
        tags=list(data.get("tags", [])),
        author=data.get("author", ""),
        status=data.get("status", "active"),
        source=label,
        raw=json.loads(json.dumps(data)),
    )
    _check(flow, data, where, roles, {**BUILTIN_MODS, **(mods or {})}, errors)
    if errors:
        raise PackErrors(errors)
    return flow


def _check(
    flow: Flow,
    data: dict[str, Any],
    where: _Where,
    roles: dict[str, Role] | None,
    mods: dict[str, Mod],
    errors: list[PackError],
) -> None:
    """What the schema cannot see: references, the graph, loops and per-type needs."""
    ids = [s.id for s in flow.steps]
    for i, step in enumerate(flow.steps):
        at = ("steps", i)
        if ids.index(step.id) != i:
            errors.append(where.error((*at, "id"), f"step id {step.id!r} is used twice"))
        for j, prev in enumerate(step.prev):
            if prev not in ids:
                errors.append(where.error((*at, "prevStepIds", j), f"unknown step {prev!r}"))
            elif prev == step.id:
                errors.append(where.error((*at, "prevStepIds", j), "a step cannot follow itself"))
        if roles is not None and step.role not in roles:
            known = ", ".join(sorted(roles)) or "none declared"
            errors.append(where.error((*at, "role"), f"unknown role {step.role!r} ({known})"))
        for j, mod in enumerate(step.mods):
            if mod not in mods:
                errors.append(where.error((*at, "mods", j), f"unknown mod {mod!r}"))
                continue
            clash = [m for m in step.mods if m in mods[mod].incompatible]
            if clash:
                errors.append(
                    where.error((*at, "mods", j), f"mod {mod!r} cannot stack with {clash[0]!r}")
                )
        errors.extend(_check_type(step, ids, where, at))
    trigger = data.get("trigger", {})
    if not (trigger.get("intents") or trigger.get("keywords")) and flow.status != "draft":
        errors.append(where.error(("trigger",), "an active flow needs trigger intents or keywords"))
    if trigger.get("examples") and not trigger.get("intents"):
        errors.append(
            where.error(
                ("trigger", "examples"),
                "examples train the flow's intent: declare it first under trigger.intents",
            )
        )
    if errors:
        return
    try:
        topo_order(flow.steps)
    except CycleError as exc:
        errors.append(where.error(("steps",), str(exc)))
        return
    _check_loops(flow, data, where, errors)
    if not errors:
        try:
            schedule(flow)
        except CycleError as exc:
            errors.append(where.error(("loops",), f"{exc} (a step both feeds and follows a loop)"))


def _check_type(step: Step, ids: list[str], where: _Where, at: tuple[Any, ...]) -> list[PackError]:
    out: list[PackError] = []
    if step.type == "ask" and not step.slot:
        out.append(where.error(at, "an ask step names the slot it collects (slot)"))
    if step.lead and step.type != "reply":
        out.append(where.error((*at, "lead"), "only a reply step closes a lead"))
    if step.type == "tool_call" and len(step.tools) != 1:
        out.append(where.error((*at, "tools"), "a tool_call step names exactly one tool"))
    if step.type == "router":
        if not step.routes and not step.default:
            out.append(where.error((*at, "routes"), "a router needs routes or a default"))
        targets: list[tuple[tuple[Any, ...], str]] = [
            (("routes", k, "to"), r.to) for k, r in enumerate(step.routes)
        ]
        if step.default:
            targets.append((("default",), step.default))
        for path, target in targets:
            if target == EXIT_LOOP:
                continue
            if target not in ids:
                out.append(where.error((*at, *path), f"unknown step {target!r}"))
    if step.type == "reply" and not (step.template or step.prompt or step.variants):
        out.append(where.error(at, "a reply step needs a template, variants or a prompt"))
    if step.type == "llm_call" and not step.prompt:
        out.append(where.error((*at, "prompt"), "an llm_call step needs a prompt"))
    if step.optional and step.repeat:
        out.append(where.error((*at, "repeat"), "a step is optional or repeat, not both"))
    if step.repeat and step.type != "tool_call":
        out.append(where.error((*at, "repeat"), "only a tool_call step can repeat"))
    if step.repeat and not step.items:
        out.append(where.error((*at, "items"), "a repeat step declares the items it builds up"))
    for key, given in (("items", step.items), ("records", step.records)):
        if given and not step.repeat:
            out.append(where.error((*at, key), f"only a repeat step has {key}"))
    if step.question and not (step.repeat or step.type == "ask"):
        out.append(where.error((*at, "question"), "only an ask or a repeat step has a question"))
    return out


def _check_loops(flow: Flow, data: dict[str, Any], where: _Where, errors: list[PackError]) -> None:
    ids = {s.id for s in flow.steps}
    seen: set[str] = set()
    for k, raw in enumerate(data.get("loops", [])):
        at = ("loops", k)
        cap = raw["max_passes"]
        if not 1 <= cap <= MAX_PASSES:
            errors.append(where.error((*at, "max_passes"), f"must be 1 to {MAX_PASSES}, not {cap}"))
            continue
        if raw["from"] not in ids or raw["to"] not in ids:
            bad = raw["from"] if raw["from"] not in ids else raw["to"]
            errors.append(where.error(at, f"unknown step {bad!r}"))
            continue
        loop = Loop(raw["from"], raw["to"], cap)
        loop.body = loop_body(flow.steps, loop)
        if raw["from"] not in loop.body:
            errors.append(
                where.error(at, f"loop target {raw['to']!r} must come before {raw['from']!r}")
            )
            continue
        if seen & set(loop.body):
            errors.append(where.error(at, "loops may not share steps"))
            continue
        seen |= set(loop.body)
        flow.loops.append(loop)


def check_tools(flow: Flow, known: set[str], changes: set[str]) -> list[str]:
    """Problems with the tools a flow names, against an app's registry (empty when fine)."""
    out = []
    for step in flow.steps:
        for tool in step.tools:
            if tool not in known:
                out.append(f"{flow.source} [steps.{step.id}.tools]: unknown tool {tool!r}")
            elif step.repeat and tool in changes:
                out.append(
                    f"{flow.source} [steps.{step.id}.tools]: a repeat step cannot use the "
                    f"changes tool {tool!r}"
                )
    return out


def load_roles(root: Path) -> tuple[dict[str, Role], dict[str, Mod]]:
    """``roles.yaml`` of a pack: personas and any extra (prompt-only) mods."""
    path = root / "roles.yaml"
    if not path.is_file():
        return {}, {}
    label = f"{root.name}/roles.yaml"
    data, lines = _read(path, label)
    where = _Where(label, data, lines)
    errors = [
        where.error(tuple(e.absolute_path), e.message)
        for e in jsonschema.Draft202012Validator(ROLES_SCHEMA).iter_errors(data)
    ]
    if errors:
        raise PackErrors(errors)
    roles = {r["name"]: Role(r["name"], r["prompt"], r.get("title", "")) for r in data["roles"]}
    mods = {
        m["name"]: Mod(m["name"], m["rules"], tuple(m.get("incompatible", [])))
        for m in data.get("mods", [])
    }
    return roles, mods


def _read(path: Path, label: str) -> tuple[Any, dict[Any, int]]:
    try:
        return load_with_lines(path.read_text(encoding="utf-8"))
    except YamlSyntaxError as exc:
        raise PackErrors([PackError(label, exc.line, "", exc.message)]) from None


def load_flows(root: Path) -> tuple[dict[str, Flow], dict[str, Role], dict[str, Mod]]:
    """Every ``flows/*.yaml`` of a pack, with its roles and mods. Raises :class:`PackErrors`."""
    roles, mods = load_roles(root)
    flows: dict[str, Flow] = {}
    errors: list[PackError] = []
    folder = root / "flows"
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        label = f"{root.name}/flows/{path.name}"
        try:
            data, lines = _read(path, label)
            flow = parse_flow(data, label, lines, roles, mods)
        except PackErrors as exc:
            errors.extend(exc.errors)
            continue
        if flow.name in flows:
            errors.append(PackError(label, None, "name", f"flow {flow.name!r} is declared twice"))
        flows[flow.name] = flow
    if errors:
        raise PackErrors(errors)
    return flows, roles, mods


def export_flow(flow: Flow) -> dict[str, Any]:
    """The versioned JSON form. A loop cap out of range cannot be exported."""
    for loop in flow.loops:
        if not 1 <= loop.max_passes <= MAX_PASSES:
            raise PackErrors(
                [
                    PackError(
                        flow.source, None, "loops", f"max_passes {loop.max_passes} out of range"
                    )
                ]
            )
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "flow": flow.raw}


def import_flow(
    text: str, label: str, roles: dict[str, Role] | None = None, mods: dict[str, Mod] | None = None
) -> Flow:
    """Read an export back, validated exactly like a pack file."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PackErrors([PackError(label, exc.lineno, "", f"not JSON: {exc.msg}")]) from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise PackErrors([PackError(label, None, "format", f"not a {EXPORT_FORMAT} export")])
    if doc.get("version") != EXPORT_VERSION:
        raise PackErrors(
            [PackError(label, None, "version", f"unsupported version {doc.get('version')!r}")]
        )
    return parse_flow(doc.get("flow"), label, None, roles, mods)


_SLUG = re.compile(r"[^a-z0-9_]+")


def slug(text: str) -> str:
    return _SLUG.sub("_", text.lower()).strip("_")[:40] or "draft"


def cross_check(flows: dict[str, Flow], intents: set[str], slots: set[str]) -> list[PackError]:
    """Names a flow shares with the rest of the pack: trigger intents and asked slots."""
    out: list[PackError] = []
    for flow in flows.values():
        for intent in flow.trigger.intents:
            if intent not in intents:
                out.append(
                    PackError(flow.source, None, "trigger.intents", f"unknown intent {intent!r}")
                )
        for step in flow.steps:
            # Values a tool fills or a correction changes may be the flow's own; an asked one is
            # a pack slot, since asking needs its question.
            named = [("slot", step.slot)] if step.slot else []
            for where, slot in named:
                if slot not in slots:
                    out.append(
                        PackError(
                            flow.source,
                            None,
                            f"steps.{step.id}.{where}",
                            f"unknown slot {slot!r}; declare it under slots in playbook.yaml",
                        )
                    )
    return out
