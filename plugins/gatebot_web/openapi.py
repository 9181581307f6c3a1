"""The REST API described as OpenAPI 3.1, served at ``/api/openapi.json``: what a client (or a
fuzzer, as tests/test_fuzz_api.py is) may send to each route and what it answers."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.outcomes import KINDS

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
}
_BEARER: list[dict[str, list[str]]] = [{"bearer": []}]


def _answers(ok: int, *errors: int) -> dict[str, Any]:
    out: dict[str, Any] = {str(ok): {"description": "done"}}
    for status in errors:
        out[str(status)] = {
            "description": "refused, nothing changed",
            "content": {"application/json": {"schema": _ERROR}},
        }
    return out


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"required": False, "content": {"application/json": {"schema": schema}}}


def _id(name: str = "id") -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _bodies() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The request bodies: a message, an escalation action, a fork."""
    message = _body(
        {
            "text": {"type": "string", "minLength": 1, "maxLength": 4000},
            "client_message_id": {"type": "string", "minLength": 1, "maxLength": 200},
        },
        ["text", "client_message_id"],
    )
    action = _body(
        {
            "staff": {"type": "string"},
            "text": {"type": "string"},
            "outcome": {"type": "string"},
            "name": {"type": "string"},  # how the customer sees a reply's author
        },
        ["staff"],
    )
    fork = _body(
        {
            "at_step": {"type": "string"},
            "at_checkpoint": {"type": "integer"},
            "output": {"type": "object"},
            "allow_side_effects": {"type": "boolean"},
        },
        [],
    )
    return message, action, fork


def _context_path() -> dict[str, Any]:
    """The widget's site context: the visitor's consent, and the page when given."""
    return {
        "post": {
            "summary": "The visitor's consent to share the page, and the page",
            "parameters": [_id()],
            "security": _BEARER,
            "requestBody": _body(
                {
                    "consent": {"enum": ["visitor", "site", "declined"]},
                    "url": {"type": "string"},
                    "title": {"type": "string"},
                    "referrer": {"type": "string"},
                },
                ["consent"],
            ),
            "responses": _answers(200, 400, 401, 404),
        }
    }


def document() -> dict[str, Any]:
    """The OpenAPI document of the widget and staff REST API."""
    message, action, fork = _bodies()
    paths = {
        "/api/conversations": {
            "post": {
                "summary": "Start a conversation",
                "requestBody": _body(
                    {
                        "language": {"type": "string"},
                        # A signed-in visitor: hex HMAC-SHA256(GATEBOT_IDENTITY_SECRET, user_id).
                        "user_id": {"type": "string"},
                        "user_hash": {"type": "string"},
                    },
                    [],
                ),
                "responses": _answers(201, 400, 401, 413),
            }
        },
        "/api/conversations/{id}": {
            "get": {
                "summary": "Messages (each with its staff author) and turn records",
                "parameters": [_id()],
                "security": _BEARER,
                "responses": _answers(200, 401, 404),
            }
        },
        "/api/conversations/{id}/messages": {
            "post": {
                "summary": "Send a message; one turn",
                "parameters": [_id()],
                "security": _BEARER,
                "requestBody": message,
                "responses": _answers(200, 400, 401, 404, 413, 429),
            }
        },
        "/api/conversations/{id}/context": _context_path(),
        "/api/staff/flows": {"get": _staff("List flows")},
        "/api/staff/flows/{name}": {"get": _staff("One flow", [_id("name")])},
        "/api/staff/runs": {"get": _staff("Flow runs")},
        "/api/staff/runs/{id}/checkpoints": {"get": _staff("A run's checkpoints", [_id()])},
        "/api/staff/runs/{id}/fork": {
            "post": {**_staff("Fork a run", [_id()]), "requestBody": fork}
        },
        "/api/staff/escalations/{id}/{verb}": {
            "post": {**_staff("Act on an escalation", [_id(), _id("verb")]), "requestBody": action}
        },
        **_label_paths(),
        "/healthz": {"get": {"summary": "Health", "responses": _answers(200, 503)}},
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "gatebot", "version": "1"},
        "paths": paths,
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    }


def _label_paths() -> dict[str, Any]:
    """The staff routes that record what happened: outcomes, and a turn's confirmed intent."""
    label = _body({"intent": {"type": "string"}, "staff": {"type": "string"}}, ["intent"])
    return {
        "/api/outcomes": {"post": {**_staff("Record an outcome"), "requestBody": _outcome()}},
        "/api/turns/{id}/label": {
            "post": {**_staff("Confirm or correct a turn's intent", [_id()]), "requestBody": label}
        },
    }


def _outcome() -> dict[str, Any]:
    """``POST /api/outcomes``'s body: kind is trial, demo, purchase, churn, resolved or
    not-resolved; a repeated external_id returns the stored outcome."""
    text = {"type": "string"}
    return _body(
        {
            "conversation_id": text,
            "kind": {"type": "string", "enum": list(KINDS)},
            "external_id": text,
            "staff": text,
            "note": text,
            "value": {"type": "number"},
            "at": {"type": "string", "format": "date-time"},
        },
        ["conversation_id", "kind"],
    )


def _staff(summary: str, parameters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "summary": summary,
        "parameters": parameters or [],
        "security": _BEARER,
        "responses": _answers(200, 400, 401, 403, 404, 409),
    }


async def serve(request: web.Request) -> web.Response:
    return web.json_response(document())
