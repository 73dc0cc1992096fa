"""Typed exceptions. Each gateway refusal carries the gateway's stable error `code`.

`ApiError.operation` is the operation's body when the gateway sent it beside the
error (contract v2: `{"error": {...}, "operation": {...}}`, e.g. a 409 on cancel or
result), so a caller still knows `done`, `outcome` and what to do next.
"""

from __future__ import annotations

from typing import Any

from jobgate_client.types import Operation


class JobgateError(Exception):
    """Base class of everything this package raises."""


class UsageError(JobgateError, ValueError):
    """The call itself is wrong (a missing idempotency key, a negative wait, ...);
    nothing was sent."""


class GatewayUnavailable(JobgateError):
    """The gateway could not be reached or kept failing (network errors, 5xx) for the
    whole retry budget. When it was raised by a start, the operation may or may not
    exist: calling again with the SAME idempotency key is safe and never starts the
    work twice."""

    def __init__(
        self, message: str, *, status: int | None = None, idempotency_key: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.idempotency_key = idempotency_key


class ApiError(JobgateError):
    """A 4xx/5xx answer with the gateway's JSON error body."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        operation: Operation | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.operation = operation


class AuthError(ApiError):
    """401 (no key, unknown or revoked key) or 403 (the key's role may not do this)."""


class NotFoundError(ApiError):
    """404: no such operation for this caller (another agent's operations are not found)."""


class ConflictError(ApiError):
    """409: the operation is not in a state for this call (e.g. no result yet, or a
    cancel of a finished operation); `operation` says where it stands when sent."""


class PrunedError(ApiError):
    """410 `operation_pruned`: the operation finished long ago and its record was removed
    after the gateway's retention period; `details` says how it ended and when. A create
    with its key started nothing: new work needs a new key."""


class InvalidRequestError(ApiError):
    """400, 413 or 422: bad input (e.g. `idempotency_key_reused`, `invalid_value`)."""


class ServerError(ApiError):
    """5xx (or 429): the gateway failed; retrying the same call may succeed."""


def error_class(status: int) -> type[ApiError]:
    """The exception class for an HTTP status."""
    if status in (401, 403):
        return AuthError
    if status == 404:
        return NotFoundError
    if status == 409:
        return ConflictError
    if status == 410:
        return PrunedError
    if status == 429 or status >= 500:
        return ServerError
    return InvalidRequestError
