"""The web API's one error shape, ``{"error": {"code", "message"}}``, and the exception that
a handler raises to answer with it."""

from __future__ import annotations

from aiohttp import web


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers or {}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    resp = web.json_response({"error": {"code": code, "message": message}}, status=status)
    resp.headers.update(headers or {})
    return resp
