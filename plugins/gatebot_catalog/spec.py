"""The API catalog file (``apis.yaml`` in a pack): its schema, its model and its loader.

A catalog names each API's base URL and where its credential lives (an environment variable,
never the value), and each endpoint's method, path template and parameters. Errors name the
file, the line and the field, like every other pack file.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema

from bot.errors import PackError, PackErrors
from bot.packs.yamlines import YamlSyntaxError, line_for, load_with_lines

FILE = "apis.yaml"
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
_name = {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}
_env = {"type": "string", "pattern": "^[A-Z_][A-Z0-9_]*$"}
_header = {"type": "string", "pattern": "^[A-Za-z0-9-]+$"}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


PARAM = _obj(
    {
        "in": {"enum": ["path", "query", "body"]},
        "schema": {"type": "object"},
        "required": {"type": "boolean"},
        "description": {"type": "string"},
        # The argument must equal this value of the conversation (one the customer wrote),
        # never one a model made up: e.g. the email an order lookup is made with. Or
        # ``identity.user_id``: the tool fills it from the verified identity, never from text.
        "value": {"type": "string", "pattern": "^([a-z][a-z0-9_]*|identity\\.user_id)$"},
        # An identity parameter when the conversation has no verified identity: ``refuse`` the
        # call (the default), or ``omit`` the parameter so the API decides by another (an email).
        "anonymous": {"enum": ["refuse", "omit"]},
    },
    ["in", "schema"],
)
ENDPOINT = _obj(
    {
        "id": _name,
        "method": {"enum": METHODS},
        "path": {"type": "string", "pattern": "^/"},
        "description": {"type": "string", "minLength": 1},
        "params": {"type": "object", "propertyNames": _name, "additionalProperties": PARAM},
        "changes": {"type": "boolean"},
        "repeat": {"type": "boolean"},
        "ownership": {"type": "string"},
        "owns": {"type": "string"},
        "readback": {"type": "string", "minLength": 1},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 60},
    },
    ["id", "method", "path", "description"],
)
AUTH = {
    "oneOf": [
        _obj(
            {"type": {"const": "bearer"}, "env": _env, "demo_default": {"type": "string"}},
            ["type", "env"],
        ),
        _obj(
            {
                "type": {"const": "header"},
                "header": _header,
                "env": _env,
                "demo_default": {"type": "string"},
            },
            ["type", "header", "env"],
        ),
    ]
}
API = _obj(
    {
        "name": _name,
        "description": {"type": "string"},
        "base_url": {"type": "string", "pattern": "^https?://"},
        "base_url_env": _env,
        "demo": {"type": "boolean"},
        "auth": AUTH,
        "endpoints": {"type": "array", "minItems": 1, "items": ENDPOINT},
    },
    ["name", "base_url", "endpoints"],
)
SCHEMA = _obj({"apis": {"type": "array", "items": API}}, ["apis"])


@dataclass(frozen=True)
class Auth:
    """Where a credential comes from. ``env`` names the variable; the value is read at call time
    and never kept here. ``demo_default`` is allowed only for the built-in demo API."""

    type: str
    env: str
    header: str = "Authorization"
    demo_default: str | None = None


@dataclass(frozen=True)
class Param:
    name: str
    where: str  # path, query or body
    schema: dict[str, Any]
    required: bool
    description: str = ""
    value: str | None = None
    anonymous: str = "refuse"  # an identity parameter with no verified identity: refuse or omit

    @property
    def from_identity(self) -> bool:
        return self.value == IDENTITY_VALUE


#: A parameter declared ``value: identity.user_id`` is filled from the verified identity.
IDENTITY_VALUE = "identity.user_id"


@dataclass(frozen=True)
class Endpoint:
    id: str
    method: str
    path: str
    description: str
    params: dict[str, Param]
    changes: bool
    repeat: bool
    ownership: str
    owns: str | None
    readback: str | None
    timeout_s: float

    def placeholders(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.path) if f is not None]


@dataclass(frozen=True)
class Api:
    name: str
    base_url: str
    endpoints: dict[str, Endpoint]
    description: str = ""
    base_url_env: str | None = None
    demo: bool = False
    auth: Auth | None = None


@dataclass
class Catalog:
    apis: dict[str, Api] = field(default_factory=dict)

    def endpoint(self, qualified: str) -> tuple[Api, Endpoint] | None:
        """``api.endpoint`` to its API and endpoint, or None when the catalog declares none."""
        api_name, _, endpoint_id = qualified.partition(".")
        api = self.apis.get(api_name)
        if api is None or endpoint_id not in api.endpoints:
            return None
        return api, api.endpoints[endpoint_id]

    def demo_api(self) -> Api | None:
        return next((a for a in self.apis.values() if a.demo), None)


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _error_path(err: jsonschema.ValidationError) -> tuple[Any, ...]:
    """Where to point: for an unknown key, the key itself rather than the object holding it."""
    path = tuple(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
        extra = [k for k in err.instance if k not in allowed]
        if extra:
            return (*path, str(extra[0]))
    return path


class _File:
    def __init__(self, label: str, lines: dict[Any, int]) -> None:
        self.label, self.lines = label, lines
        self.errors: list[PackError] = []

    def error(self, path: tuple[Any, ...], message: str) -> None:
        self.errors.append(
            PackError(self.label, line_for(self.lines, path), _dotted(path), message)
        )


def load_catalog(root: str | Path) -> Catalog | None:
    """The catalog of the pack at ``root``, or None when it has no ``apis.yaml``. Raises
    :class:`PackErrors` listing every problem."""
    path = Path(root) / FILE
    if not path.is_file():
        return None
    label = f"{Path(root).name}/{FILE}"
    try:
        data, lines = load_with_lines(path.read_text(encoding="utf-8"))
    except YamlSyntaxError as exc:
        raise PackErrors([PackError(label, exc.line, "", exc.message)]) from None
    file = _File(label, lines)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        file.error(_error_path(err), err.message)
    if file.errors:
        raise PackErrors(file.errors)
    catalog = Catalog()
    for i, raw in enumerate(data["apis"]):
        api = _api(raw, ("apis", i), file)
        if api.name in catalog.apis:
            file.error(("apis", i, "name"), f"API {api.name!r} is declared twice")
        catalog.apis[api.name] = api
    if sum(1 for a in catalog.apis.values() if a.demo) > 1:
        file.error(("apis",), "at most one API can be the demo API")
    if file.errors:
        raise PackErrors(file.errors)
    return catalog


def _api(raw: dict[str, Any], where: tuple[Any, ...], file: _File) -> Api:
    try:
        base = urlsplit(raw["base_url"])
        _ = base.port  # a port out of range raises here rather than at call time
    except ValueError as exc:
        file.error((*where, "base_url"), f"not a URL: {exc}")
        base = urlsplit("http://invalid.invalid")
    if not base.hostname or base.username or base.password or base.query or base.fragment:
        file.error((*where, "base_url"), "a base URL is scheme://host[:port][/path], no more")
    elif any(s in (".", "..") for s in base.path.split("/")):
        file.error((*where, "base_url"), f"base URL path {base.path!r} climbs ('..' or '.')")
    auth_raw = raw.get("auth")
    auth = None
    if auth_raw is not None:
        auth = Auth(
            type=auth_raw["type"],
            env=auth_raw["env"],
            header=auth_raw.get("header", "Authorization"),
            demo_default=auth_raw.get("demo_default"),
        )
        if auth.demo_default is not None and not raw.get("demo", False):
            file.error(
                (*where, "auth", "demo_default"),
                "only the demo API may carry a default credential; set the variable instead",
            )
    endpoints: dict[str, Endpoint] = {}
    for j, ep_raw in enumerate(raw["endpoints"]):
        ep = _endpoint(ep_raw, (*where, "endpoints", j), file)
        if ep.id in endpoints:
            file.error((*where, "endpoints", j, "id"), f"endpoint {ep.id!r} is declared twice")
        endpoints[ep.id] = ep
    return Api(
        name=raw["name"],
        base_url=raw["base_url"].rstrip("/"),
        endpoints=endpoints,
        description=raw.get("description", ""),
        base_url_env=raw.get("base_url_env"),
        demo=raw.get("demo", False),
        auth=auth,
    )


_PLACEHOLDER_SEGMENT = re.compile(r"^(\{[a-z][a-z0-9_]*\}|[A-Za-z0-9._~-]+)$")


def _check_params(params: dict[str, Param], where: tuple[Any, ...], file: _File) -> None:
    for name, p in params.items():
        try:
            jsonschema.Draft202012Validator.check_schema(p.schema)
        except jsonschema.SchemaError as exc:
            file.error((*where, "params", name, "schema"), f"not a JSON schema: {exc.message}")
        if p.from_identity and p.schema.get("type", "string") != "string":
            # A verified id is text (``web:alice``): any other type could never be sent.
            file.error((*where, "params", name, "schema"), "an identity.user_id is a string")
        if p.anonymous != "refuse" and not p.from_identity:
            file.error(
                (*where, "params", name, "anonymous"),
                "anonymous applies to a value: identity.user_id parameter only",
            )


def _endpoint(raw: dict[str, Any], where: tuple[Any, ...], file: _File) -> Endpoint:
    params = {
        name: Param(
            name,
            p["in"],
            p["schema"],
            p["in"] == "path" or p.get("required", False),
            p.get("description", ""),
            p.get("value"),
            p.get("anonymous", "refuse"),
        )
        for name, p in raw.get("params", {}).items()
    }
    _check_params(params, where, file)
    # The declared path itself must be plain segments, each a literal or one whole placeholder,
    # so a value can only ever fill one segment. It is normalised (no empty segment), and one
    # that climbs ("..") or stays (".") is refused: it could reach past the API's base path.
    path = "/" + "/".join(segments := [s for s in raw["path"].split("/") if s])
    if any(s in (".", "..") for s in segments):
        file.error((*where, "path"), f"path {raw['path']!r} climbs ('..' or '.'); refused")
    elif not all(_PLACEHOLDER_SEGMENT.match(s) for s in segments):
        file.error((*where, "path"), "path segments are literals or one {placeholder} each")
    in_path = {s[1:-1] for s in segments if s.startswith("{")}
    declared_path = {n for n, p in params.items() if p.where == "path"}
    for name in sorted(in_path - declared_path):
        file.error((*where, "path"), f"{{{name}}} has no params entry with in: path")
    for name in sorted(declared_path - in_path):
        file.error((*where, "params", name), f"path parameter {name!r} is not in the path")
    repeat = raw.get("repeat", False)
    # A call that is not a plain read changes something unless the pack says otherwise.
    changes = raw.get("changes", raw["method"] != "GET" and not repeat)
    if changes and repeat:
        file.error((*where, "repeat"), "a repeat endpoint cannot also be changes: true")
    if raw["method"] == "GET" and any(p.where == "body" for p in params.values()):
        file.error((*where, "params"), "a GET endpoint takes no body parameters")
    ownership = raw.get("ownership", "any")
    if ownership != "any" and ownership not in params:
        file.error((*where, "ownership"), f"ownership names no parameter ({ownership!r})")
    owns = raw.get("owns")
    if owns is not None and owns not in params:
        file.error((*where, "owns"), f"owns names no parameter ({owns!r})")
    readback = raw.get("readback")
    if readback is not None and not (changes or repeat):
        file.error((*where, "readback"), "only a changes or repeat endpoint is read back")
    return Endpoint(
        id=raw["id"],
        method=raw["method"],
        path=path,
        description=raw["description"],
        params=params,
        changes=changes,
        repeat=repeat,
        ownership=ownership,
        owns=owns,
        readback=readback,
        timeout_s=float(raw.get("timeout_s", 10.0)),
    )
