"""The catalog's tools: one per declared endpoint, and three a model may use to explore and call.

``<api>.<endpoint>`` tools carry the endpoint's parameter schema, ``changes``/``repeat`` flags and
ownership rule, so :class:`bot.extend.tool.ToolRunner` applies every check. ``catalog.call``
only names an endpoint tool and the runner calls that tool, so a change still needs the customer's
confirmation and the URL check still runs. ``catalog.inspect`` lists what may be called (never a
credential, never a base URL), ``catalog.read_result`` reads a long answer window by window.

The context a caller passes: ``conversation_id`` (whose results a window may read), ``owned``
(argument name -> values this conversation owns) and ``values`` (slot -> the conversation's
value, for parameters declared with ``value: email``: such an argument must be that value) and
``identity`` (``{"user_id": ...}``, set by core code only from the conversation's verified id):
a parameter declared ``value: identity.user_id`` is hidden from the model, filled from it, and
the call is refused when the conversation has no verified id.
An endpoint declared with ``owns: order_id`` grants its ``order_id`` argument to the
conversation when it answers successfully (the demo API answers an order lookup only for the
email on the order), see :func:`grant_ownership`.
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from typing import Any

from bot.extend.tool import IDENTITY, WINDOW_CHARS, Tool, ToolError, ToolOutcome, window
from bot.extend.tool import grant_ownership as grant
from gatebot_catalog.client import CatalogClient
from gatebot_catalog.spec import Api, Catalog, Endpoint
from gatebot_catalog.urls import Refused, prepare

_ENDPOINT_NAME = "^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$"


def endpoint_schema(endpoint: Endpoint) -> dict[str, Any]:
    """The JSON schema of an endpoint tool's arguments: declared parameters only, less those
    filled from the verified identity (a model never sees nor sets them)."""
    properties: dict[str, Any] = {}
    for name, param in endpoint.params.items():
        if param.from_identity:
            continue
        schema = dict(param.schema)
        if param.description and "description" not in schema:
            schema["description"] = param.description
        properties[name] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": sorted(n for n in properties if endpoint.params[n].required),
        "additionalProperties": False,
    }


def grant_ownership(context: dict[str, Any], result: dict[str, Any] | ToolOutcome | None) -> None:
    """:func:`bot.extend.tool.grant_ownership` (the runner already applies it to every successful
    call), also taking a stored :class:`ToolOutcome`."""
    if isinstance(result, ToolOutcome):
        result = result.result if result.ok else None
    grant(context, result)


def owned_from(results: Iterable[dict[str, Any] | ToolOutcome | None]) -> dict[str, list[str]]:
    """``context["owned"]`` rebuilt from a conversation's stored tool results."""
    context: dict[str, Any] = {}
    for result in results:
        grant_ownership(context, result)
    return dict(context.get("owned", {}))


class EndpointTool(Tool):
    def __init__(self, api: Api, endpoint: Endpoint, client: CatalogClient) -> None:
        self.api, self.endpoint, self.client = api, endpoint, client
        self.name = f"{api.name}.{endpoint.id}"
        self.description = endpoint.description
        self.schema = endpoint_schema(endpoint)
        self.changes = endpoint.changes
        self.repeat = endpoint.repeat
        self.ownership = endpoint.ownership
        self.filled = frozenset(n for n, p in endpoint.params.items() if p.from_identity)
        # The client's own timeout fires first, with a clearer message than the runner's.
        self.timeout_s = endpoint.timeout_s + 1.0

    def _filled(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` with the identity parameters set from ``context["identity"]`` (the
        runner already dropped any proposed value). Raises ToolError when nobody is verified."""
        if not self.filled:
            return arguments
        user_id = (context.get(IDENTITY) or {}).get("user_id")
        if not user_id and all(self.endpoint.params[n].anonymous == "omit" for n in self.filled):
            return arguments  # declared so: the API decides by another parameter (an email)
        if not user_id:
            raise ToolError(
                f"{self.name} needs a verified identity (a signed-in customer), "
                "and this conversation has none"
            )
        return {**arguments, **{name: str(user_id) for name in self.filled}}

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        try:
            arguments = self._filled(arguments, context)
        except ToolError as exc:
            return str(exc)
        values = context.get("values") or {}
        for name, param in self.endpoint.params.items():
            if param.value is None or param.from_identity or name not in arguments:
                continue
            known = values.get(param.value)
            if known is None or str(arguments[name]) != str(known):
                return f"{name} must be the conversation's {param.value} value"
        try:
            prepare(self.api, self.endpoint, arguments)
        except Refused as exc:
            return str(exc)
        return None

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        # Filled here too, and the proposed value dropped again: run alone is never less safe.
        arguments = {k: v for k, v in arguments.items() if k not in self.filled}
        arguments = self._filled(arguments, context)
        try:
            request = prepare(self.api, self.endpoint, arguments)
        except Refused as exc:  # checked already; kept so run alone is never less safe
            raise ToolError(str(exc)) from None
        result = await self.client.send(
            self.api, self.endpoint, request, context.get("conversation_id")
        )
        if self.endpoint.owns is not None and self.endpoint.owns in arguments:
            result["owns"] = {self.endpoint.owns: str(arguments[self.endpoint.owns])}
            grant_ownership(context, result)
        return result

    def readback_text(self, values: dict[str, Any]) -> str:
        """The endpoint's read-back with ``values`` filled in (arguments, and values such as an
        amount that a lookup filled). A value it needs and lacks is an error, never a blank."""
        template = self.endpoint.readback
        if template is None:
            return f"{self.name} ({', '.join(f'{k}: {v}' for k, v in values.items())})"
        needed = [f for _, f, _, _ in string.Formatter().parse(template) if f]
        missing = [f for f in needed if f not in values]
        if missing:
            raise ToolError(f"the read-back of {self.name} needs {', '.join(missing)}")
        return template.format_map({k: values[k] for k in needed})

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "method": self.endpoint.method,
            "path": self.endpoint.path,
            "changes": self.changes,
            "repeat": self.repeat,
            "ownership": self.ownership,
        }


class CatalogInspect(Tool):
    name = "catalog.inspect"
    description = (
        "List the APIs this agent may call, with each endpoint's tool name, parameters and whether "
        "it changes anything. Give `api` to see one API."
    )
    schema = {
        "type": "object",
        "properties": {"api": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"}},
        "additionalProperties": False,
    }

    def __init__(self, catalog: Catalog, tools: list[EndpointTool]) -> None:
        self.catalog, self.endpoint_tools = catalog, tools

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        wanted = arguments.get("api")
        if wanted is not None and wanted not in self.catalog.apis:
            raise ToolError(f"the catalog declares no API {wanted!r}")
        apis = []
        for api in self.catalog.apis.values():
            if wanted is not None and api.name != wanted:
                continue
            tools = [t.describe() for t in self.endpoint_tools if t.api.name == api.name]
            # Deliberately no base URL and no auth detail: a model needs neither.
            apis.append({"name": api.name, "description": api.description, "endpoints": tools})
        count = sum(len(a["endpoints"]) for a in apis)
        return {"apis": apis, "note": f"{len(apis)} API(s), {count} endpoint(s)"}


class CatalogCall(Tool):
    name = "catalog.call"
    description = (
        "Call one catalog endpoint by its tool name (`api.endpoint`, from catalog.inspect) with "
        "its parameters. An endpoint that changes anything runs only after the customer confirms."
    )
    schema = {
        "type": "object",
        "properties": {
            "endpoint": {"type": "string", "pattern": _ENDPOINT_NAME},
            "arguments": {"type": "object"},
        },
        "required": ["endpoint"],
        "additionalProperties": False,
    }

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def check(self, arguments: dict[str, Any], context: dict[str, Any]) -> str | None:
        if self.catalog.endpoint(arguments["endpoint"]) is None:
            return f"the catalog declares no endpoint {arguments['endpoint']!r}"
        return None

    def route(self, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        return arguments["endpoint"], dict(arguments.get("arguments") or {})

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("catalog.call is routed to its endpoint by the tool runner")


class CatalogReadResult(Tool):
    name = "catalog.read_result"
    description = (
        "Read part of a long API answer: `result_id` from the call's result, `offset` and "
        "`length` in characters. Returns the content and the total length."
    )
    schema = {
        "type": "object",
        "properties": {
            "result_id": {"type": "string", "pattern": "^r_[0-9a-f]{16}$"},
            "offset": {"type": "integer", "minimum": 0},
            "length": {"type": "integer", "minimum": 1, "maximum": WINDOW_CHARS},
        },
        "required": ["result_id"],
        "additionalProperties": False,
    }

    def __init__(self, client: CatalogClient) -> None:
        self.client = client

    async def run(self, arguments: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
        stored = self.client.results.get(arguments["result_id"], context.get("conversation_id"))
        if stored is None:
            raise ToolError(f"no result {arguments['result_id']} in this conversation")
        part = window(
            stored.text, arguments.get("offset", 0), arguments.get("length", WINDOW_CHARS)
        )
        end = part["offset"] + part["length"]
        part["note"] = f"characters {part['offset']}-{end} of {part['total']}"
        return part


def build_tools(catalog: Catalog, client: CatalogClient) -> list[Tool]:
    endpoint_tools = [
        EndpointTool(api, endpoint, client)
        for api in catalog.apis.values()
        for endpoint in api.endpoints.values()
    ]
    model_tools: list[Tool] = [
        CatalogInspect(catalog, endpoint_tools),
        CatalogCall(catalog),
        CatalogReadResult(client),
    ]
    return [*endpoint_tools, *model_tools]
