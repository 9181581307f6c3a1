"""The turn record as JSON Schema (draft 2020-12), generated from its TypedDicts.

:func:`record_schema` walks :class:`bot.turn.turn.TurnRecord` and the TypedDicts it holds, so the
schema says exactly what the types say: a required key is required, a ``NotRequired`` one is
optional, ``X | None`` may be null, a ``Literal`` is an enum. A TypedDict is a closed object
(``additionalProperties: false``): core code writes every key of it, and the record's readers
(inspector, replay, ``gatebot unanswered``) rely on that. A ``dict[str, Any]`` is an open object:
what a tool, a flow step or a provider adds there is theirs to name. Each part's description is
its class's docstring and each key's the comment beside it in the source, so the committed
``docs/turn-record.schema.json`` cannot drift from the code (a test regenerates and compares it).
"""

from __future__ import annotations

import inspect
import itertools
import json
import re
import sys
import types
import typing
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, Union, get_args, get_origin

from jsonschema import Draft202012Validator

from bot.turn.turn import TurnRecord

SCHEMA_ID = "https://github.com/gatebot/gatebot/docs/turn-record.schema.json"
#: Where the committed schema lives, relative to the repository root.
SCHEMA_FILE = Path("docs/turn-record.schema.json")

#: Keys the current record always has that records written by earlier versions may lack, with
#: the change that added them (from the history of bot/turn/record.py and bot/turn/turn.py).
ADDED_LATER: dict[str, str] = {
    "flow": "flows (2026-11-30)",
    "preflight.decision": "pre-flight routing (2026-11-30)",
    "preflight.sentence": "pre-flight routing (2026-11-30)",
    "preflight.error": "pre-flight routing (2026-11-30)",
    "preflight.version": "pre-flight routing (2026-11-30)",
    "preflight.ms": "pre-flight routing (2026-11-30)",
    "scope.score": "the domain check (2026-11-30)",
    "scope.threshold": "the domain check (2026-11-30)",
    "reply.gate.rules": "the reply gate's named rules (2026-12-01)",
    "message.user": "signed identity (2026-12-01)",
    "legal.outcome": "the outcome pursued, recorded (2026-12-03)",
}
#: Optional keys that earlier versions never wrote (an absent one means "not recorded then").
OPTIONAL_LATER: dict[str, str] = {
    "reads[].reason": "novelty (2026-11-30)",
    "reads[].query, reads[].query_from": "follow-up search (2026-12-01)",
    "reads[].across": "a person asked for in another language (2026-12-01)",
    "reads[].near": "a person asked for, read from the nearest lines (2026-12-01)",
    "model_calls[].prompt_sha256, model_calls[].response": "replay (2026-12-01)",
    "tools[].detail.call": "replay (2026-12-01)",
}

DESCRIPTION = (
    "One turn record: the complete, append-only account of one turn (bot/turn/turn.py TurnRecord, "
    "../DESIGN.md). Every key is on every turn, empty or null where a stage did nothing. The "
    "record has no format version of its own: `versions` holds the pack's version and each "
    "head's, and this schema describes the record the current code writes. Records written by "
    "earlier versions (the store and turns.jsonl keep them) may lack keys added since: "
    + "; ".join(f"`{k}` (before {v})" for k, v in ADDED_LATER.items())
    + "; and never carry the optional "
    + "; ".join(f"`{k}` (before {v})" for k, v in OPTIONAL_LATER.items())
    + ". The inspector and `gatebot replay` read such records; this schema does not accept them."
    " Objects typed in the code (TypedDicts) are closed: additionalProperties false. Free-form "
    "objects (a tool event's detail, pre-flight answers, the flow part, timings) are open: tools, "
    "flow steps and plugins name their own keys there."
)


def record_schema() -> dict[str, Any]:
    """The turn record's JSON Schema (a plain dict, ready for ``json.dumps``)."""
    defs: dict[str, Any] = {}
    root = _typeddict(TurnRecord, defs)
    root["description"] = DESCRIPTION
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gatebot turn record",
        **root,
        "$defs": defs,
    }


def render() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(record_schema(), indent=2, ensure_ascii=False) + "\n"


def _type(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    origin = get_origin(tp)
    if tp is Any:
        return {}
    if origin in (NotRequired, Required):
        return _type(get_args(tp)[0], defs)
    if origin in (Union, types.UnionType):
        return _union([_type(t, defs) for t in get_args(tp)])
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        if tp.__name__ not in defs:
            defs[tp.__name__] = {}  # claimed first: a TypedDict that holds itself ends here
            defs[tp.__name__] = _typeddict(tp, defs)
        return {"$ref": f"#/$defs/{tp.__name__}"}
    if origin is list:
        return {"type": "array", "items": _type(get_args(tp)[0], defs)}
    if origin is dict:
        values = _type(get_args(tp)[1], defs)
        return {"type": "object", **({"additionalProperties": values} if values else {})}
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    raise TypeError(f"the record schema cannot express {tp!r}")


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _union(options: list[dict[str, Any]]) -> dict[str, Any]:
    if all(set(o) == {"type"} for o in options):
        return {"type": [o["type"] for o in options]}
    return {"anyOf": options}


def _typeddict(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    lines, note = _source(cls)
    notes = dict(_field_notes(lines))
    properties = {}
    for key, hint in hints.items():
        prop = _type(hint, defs)
        if key in notes:
            prop = {"description": notes[key], **prop}
        properties[key] = prop
    out: dict[str, Any] = {"type": "object"}
    if cls.__doc__ or note:
        out["description"] = " ".join((cls.__doc__ or note).split())
    getter: Any = getattr(cls, "__required_keys__", frozenset())
    out["required"] = [k for k in hints if k in getter]
    out["properties"] = properties
    out["additionalProperties"] = False
    return out


_FIELD = re.compile(r"""^\s+"?([A-Za-z_]\w*)"?: [^#]*?(?:#(?!:)\s*(.*))?$""")


def _source(cls: type) -> tuple[list[str], str]:
    """The lines that define ``cls`` (its class body, or its functional ``TypedDict(...)`` call)
    and the ``#:`` comment above a functional one (its description; a class has a docstring)."""
    try:
        return inspect.getsource(cls).splitlines(), ""
    except (OSError, TypeError):  # the functional form: found by its assignment in the module
        pass
    module = inspect.getsource(sys.modules[cls.__module__]).splitlines()
    opening = f"{cls.__name__} = TypedDict("
    at = next((i for i, line in enumerate(module) if line.startswith(opening)), None)
    if at is None:
        return [], ""
    above = list(itertools.takewhile(lambda ln: ln.startswith("#:"), reversed(module[:at])))
    note = " ".join(ln[2:].strip() for ln in reversed(above))
    body = list(itertools.takewhile(lambda ln: ln != ")", module[at:]))
    return body, note


def _field_notes(lines: list[str]) -> Iterator[tuple[str, str]]:
    """Each key's comment in its definition: comment lines above it and a ``#`` beside it."""
    above: list[str] = []
    for line in lines[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#:").strip())
            continue
        found = _FIELD.match(line)
        if found:
            text = " ".join([*above, found.group(2) or ""]).strip()
            if text:
                yield found.group(1), text
        above = []


def violations(validator: Any, record: Mapping[str, Any]) -> Iterable[str]:
    """Each place ``record`` breaks the schema, as ``path: message`` (``reads/0/gate: ...``)."""
    for error in sorted(validator.iter_errors(record), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(record)"
        yield f"{where}: {error.message}"


def validator() -> Draft202012Validator:
    """A compiled draft 2020-12 validator of the schema (build once, use for every record). Its
    ``$ref``s are inlined (the record holds no recursion), which halves the time per record."""
    schema = record_schema()
    Draft202012Validator.check_schema(schema)
    defs = schema.pop("$defs")

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return inline(defs[node["$ref"].removeprefix("#/$defs/")])
            return {k: inline(v) for k, v in node.items()}
        return [inline(v) for v in node] if isinstance(node, list) else node

    return Draft202012Validator(inline(schema))
