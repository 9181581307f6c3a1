"""The web API's one error shape, ``{"error": {"code", "message"}}``, and the exception that
a handler raises to answer with it."""

from __future__ import annotations

import logging

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError


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


class ClientFaultsQuiet(logging.Filter):
    """aiohttp logs a request it could not parse (a body that fails to decompress, a malformed
    header) with a full traceback at ERROR, though it answers 400: any client could fill the log
    with them. Such a record becomes one line at DEBUG; a server fault keeps its level."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        cause = exc.__cause__ if exc is not None else None
        if isinstance(exc, RequestPayloadError | HttpProcessingError) and _client_fault(exc, cause):
            record.msg = f"refused a malformed request: {type(exc).__name__}: {exc}".strip()
            record.args, record.exc_info, record.exc_text = (), None, None
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


def _client_fault(exc: BaseException, cause: BaseException | None) -> bool:
    code = getattr(exc, "code", None) or getattr(cause, "code", None) or 400
    return isinstance(code, int) and 400 <= code < 500


def quiet_client_faults(logger: logging.Logger | None = None) -> None:
    """Install :class:`ClientFaultsQuiet` on aiohttp's server logger, once."""
    logger = logger or logging.getLogger("aiohttp.server")
    if not any(isinstance(f, ClientFaultsQuiet) for f in logger.filters):
        logger.addFilter(ClientFaultsQuiet())
