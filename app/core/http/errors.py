"""One JSON error shape for every failure: {"error": {"code", "message", "details"}}.

An error about an existing operation also carries that operation's body beside it
(`{"error": ..., "operation": ...}`), and its `done`, `outcome`, `message` and
`next_action` at the top level: the routes that know the operation attach it."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.core.db import write_faults
from app.core.http import fault_words
from app.core.text import degrade

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error with a stable code that agents and tests can rely on."""

    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.operation: dict[str, Any] | None = None  # the operation's body, when attached
        self.headers: dict[str, str] = {}  # e.g. Retry-After on a 429


class DomainError(Exception):
    """A refusal in the domain's terms, with a stable code and no HTTP status.

    Services raise its kinds; `as_api_error` maps each kind to a status, in this
    one place, for the API's handler and the HTML views alike.
    """

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.operation: dict[str, Any] | None = None  # the operation's body, when attached


class BadInput(DomainError):
    """The request itself is malformed (e.g. a missing or unusable Idempotency-Key)."""


class NotFound(DomainError):
    """No such thing for this caller."""


class Conflict(DomainError):
    """The operation's current state does not allow it."""


class Invalid(DomainError):
    """Well-formed, but it cannot be carried out as asked."""


class Gone(DomainError):
    """It existed, and its record was removed after the retention period."""


_HTTP_STATUS: dict[type[DomainError], int] = {
    BadInput: 400,
    NotFound: 404,
    Conflict: 409,
    Gone: 410,
}


def as_api_error(exc: DomainError | ApiError) -> ApiError:
    """The HTTP form of a refusal (Invalid and any other kind: 422)."""
    if isinstance(exc, ApiError):
        return exc
    status = next((s for k, s in _HTTP_STATUS.items() if isinstance(exc, k)), 422)
    err = ApiError(status, exc.code, exc.message, exc.details)
    err.operation = exc.operation
    return err


# Copied from an attached operation body to the top of an error, beside `error`, so an
# agent that reads only the top level still knows where the operation stands.
VERDICT_FIELDS = ("done", "outcome", "message", "next_action")


def verdict_of(operation: dict[str, Any]) -> dict[str, Any]:
    """`done`, `outcome`, `message` and `next_action` of an operation body."""
    return {k: operation.get(k) for k in VERDICT_FIELDS}


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    operation: dict[str, Any] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": code, "message": message, "details": details or {}}}
    if operation is not None:
        body.update(verdict_of(operation))
        verdict = str(operation.get("message") or "")
        if verdict and not message.endswith(verdict):  # the error's words end with it too
            body["error"]["message"] = f"{message} {verdict}"
        body["operation"] = operation
    # degrade: an error about bad text must never fail to encode because of that text.
    return JSONResponse(degrade(body), status_code=status, headers=headers)


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    out = []
    for err in exc.errors():
        out.append(
            {
                "loc": [str(p) for p in err.get("loc", ())],
                "msg": err.get("msg"),
                "type": err.get("type"),
            }
        )
    return out[:20]


HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette names only the first route's).

    Each method is probed against the app's routes, nested routers included."""
    routes = request.app.router.routes
    return [
        method
        for method in HTTP_METHODS
        if any(r.matches({**request.scope, "method": method})[0] == Match.FULL for r in routes)
    ]


def install(app: FastAPI) -> None:
    """Register handlers so no request ever gets an HTML page or a stack trace."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(
            exc.status,
            exc.code,
            exc.message,
            exc.details,
            headers=exc.headers or None,
            operation=exc.operation,
        )

    @app.exception_handler(DomainError)
    async def _domain(_: Request, exc: DomainError) -> JSONResponse:
        err = as_api_error(exc)
        return error_response(
            err.status, err.code, err.message, err.details, operation=err.operation
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_details(exc)
        if any(e["type"] == "json_invalid" for e in errors):
            return error_response(
                400, "malformed_json", "The request body is not valid JSON.", {"errors": errors}
            )
        return error_response(
            422,
            "invalid_request",
            "The request does not match the schema; see details.errors.",
            {"errors": errors},
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        codes = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized"}
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            allow = ", ".join(allowed_methods(request))
            if request.method == "OPTIONS":
                return Response(status_code=204, headers={"Allow": f"{allow}, OPTIONS"})
            headers = {**(headers or {}), "Allow": allow}
        return error_response(
            exc.status_code,
            codes.get(exc.status_code, "http_error"),
            str(exc.detail),
            headers=headers,
        )

    async def _write_fault(request: Request, exc: Exception) -> JSONResponse:
        """Storage full or database gone: a documented answer with Retry-After, in words
        true of this call (app/core/http/fault_words.py), and the connection kept (a
        handler here, unlike the catch-all below, answers without re-raising, so the
        server does not close the connection)."""
        kind = write_faults.kind_of(exc)
        if kind is None:
            return await _unexpected(request, exc)
        log.warning("%s: %s", kind, exc)
        retry = write_faults.RETRY_AFTER_SECONDS
        call = fault_words.call_of(request.method, request.url.path)
        message, details = fault_words.words(kind, call, retry, fault_words.find_create(exc))
        return error_response(
            507 if kind == "storage_full" else 503,
            kind,
            message,
            details,
            headers={"Retry-After": str(retry)},
        )

    for fault in (OSError, sqlite3.Error, SQLAlchemyError, asyncpg.PostgresError,
                  asyncpg.InterfaceError, asyncpg.InternalClientError,
                  ExceptionGroup, fault_words.CreateInterrupted):  # fmt: skip
        app.add_exception_handler(fault, _write_fault)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        if write_faults.kind_of(exc) is not None:  # infrastructure, whatever wraps it
            return await _write_fault(request, exc)
        log.exception("unhandled error")
        return error_response(
            500,
            "internal_error",
            "The gateway hit an internal error; nothing was reported as done.",
        )
