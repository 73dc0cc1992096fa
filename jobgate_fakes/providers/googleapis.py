"""What every Google Cloud REST fake shares: google.rpc.Status errors, bearer auth, names, pages.

From github.com/googleapis/googleapis (`google/rpc/status.proto`, `code.proto`,
`error_details.proto`: ErrorInfo, RetryInfo, BadRequest), AIP-193 (errors) and AIP-158
(pagination). Each Google fake's package docstring names the commit it was read at.

- Errors are `{"error": {"code": <HTTP status>, "message", "status": <google.rpc.Code
  name>, "details": [...]}}`, as Google's REST front end answers.
- A 429 is RESOURCE_EXHAUSTED with an ErrorInfo `RATE_LIMIT_EXCEEDED` and a RetryInfo
  `retryDelay` detail, and no `Retry-After` header (Google promises none).
- Auth is `Authorization: Bearer <access token>`; 401 UNAUTHENTICATED otherwise.
- Operation names carry the project number, never the project id.
- Lists page with an opaque `pageToken` and answer `nextPageToken` while more remain.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from jobgate_fakes.providers.base import Fake, FakeError
from jobgate_fakes.providers.faults import Fault

T = TypeVar("T")

# HTTP status -> the google.rpc.Code name Google's front end pairs with it.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# google.rpc.Code values the fakes put in operation and per-item statuses.
CODE_CANCELLED = 1
CODE_INVALID_ARGUMENT = 3
CODE_INTERNAL = 13
_CREDENTIALS = (
    "Expected OAuth 2 access token, login cookie or other valid authentication credential. "
    "See https://developers.google.com/identity/sign-in/web/devconsole-project."
)


@dataclass(frozen=True)
class Quota:
    """The quota a 429 names: its metric and limit as the console shows them, and the limit id."""

    metric: str
    limit: str
    limit_id: str


class GoogleErrors:
    """The JSON form of google.rpc.Status that Google's REST front end answers with."""

    def __init__(self, service: str, quota: Callable[[str], Quota]) -> None:
        self.service = service  # e.g. "translate.googleapis.com"
        self._quota = quota  # which quota a throttled call of this op ran out of

    def error_info(self, reason: str, **metadata: str) -> dict[str, Any]:
        """A google.rpc.ErrorInfo detail for this service."""
        return {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "googleapis.com",
            "metadata": {"service": self.service, **metadata},
        }

    def error(
        self, status: int, message: str, details: list[dict[str, Any]] | None = None
    ) -> FakeError:
        """Any error answer with this HTTP status (its google.rpc.Code name chosen by status)."""
        fields: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": STATUS_NAMES.get(
                status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION"
            ),
        }
        if details:
            fields["details"] = details
        return FakeError(status, {"error": fields})

    def invalid(self, message: str, field: str | None = None) -> FakeError:
        """400 INVALID_ARGUMENT with a google.rpc.BadRequest naming the field (JSON path)."""
        violation = {"field": field, "description": message} if field else {"description": message}
        return self.error(
            400,
            message,
            [
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [violation],
                }
            ],
        )

    def throttled(self, fault: Fault) -> FakeError:
        """429 RESOURCE_EXHAUSTED with the quota's ErrorInfo and a RetryInfo `retryDelay`."""
        quota = self._quota(fault.op)
        details = [
            self.error_info("RATE_LIMIT_EXCEEDED", quota_limit=quota.limit_id),
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{fault.retry_after}s",
            },
        ]
        found = self.error(
            fault.answer_status(),
            f"Quota exceeded for quota metric '{quota.metric}' and limit "
            f"'{quota.limit}' of service '{self.service}'.",
            details,
        )
        if fault.retry_after_header:  # not something Google promises; only on request
            found.headers["retry-after"] = str(fault.retry_after)
        return found


def bearer_guard(fake: Fake, errors: GoogleErrors) -> Callable[[Request], None]:
    """A route dependency: `Authorization: Bearer <the fake's api_key>` or 401 UNAUTHENTICATED."""

    def require_token(request: Request) -> None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise errors.error(
                401,
                f"Request is missing required authentication credential. {_CREDENTIALS}",
                [errors.error_info("CREDENTIALS_MISSING")],
            )
        if not hmac.compare_digest(token.encode(), fake.settings.api_key.encode()):
            raise errors.error(
                401, f"Request had invalid authentication credentials. {_CREDENTIALS}"
            )

    return require_token


def project_number(project: str) -> str:
    """Operation names carry the project number; an id maps to a stable fake number."""
    if project.isdigit():
        return project
    return str(int(hashlib.sha256(project.encode()).hexdigest(), 16) % 10**12).zfill(12)


def page(
    items: Sequence[T],
    page_size: int,
    page_token: str,
    errors: GoogleErrors,
    *,
    default_size: int,
    max_size: int,
) -> tuple[list[T], str | None]:
    """One AIP-158 page of `items`: the page and the `nextPageToken` (None after the last)."""
    if page_size < 0:
        raise errors.error(400, "page_size must not be negative.")
    size = min(page_size or default_size, max_size)
    try:
        start = int(base64.urlsafe_b64decode(page_token.encode()).decode()) if page_token else 0
    except ValueError as exc:
        raise errors.error(400, "Invalid page token.") from exc
    more = start + size < len(items)
    token = base64.urlsafe_b64encode(str(start + size).encode()).decode() if more else None
    return list(items[start : start + size]), token


# google.longrunning's operations.list: both Google fakes page the same way (AIP-158).
OPERATIONS_PAGE_SIZE, OPERATIONS_MAX_PAGE_SIZE = 50, 1000


async def list_operations(
    fake: Fake,
    operations: Sequence[Any],
    parent: str,
    match: Callable[[Any], bool],
    page_size: int,
    page_token: str,
    errors: GoogleErrors,
) -> Response:
    """`GET .../operations`: the operations under `parent` that `match`, newest first as
    given, one page at a time; an empty `operations` and the token are left out. The
    caller counts the call first (a filter it refuses is a list call too)."""
    found = [op for op in operations if op.name.startswith(parent) and match(op)]
    shown, token = page(
        found,
        page_size,
        page_token,
        errors,
        default_size=OPERATIONS_PAGE_SIZE,
        max_size=OPERATIONS_MAX_PAGE_SIZE,
    )

    def effect() -> Response:
        body: dict[str, Any] = {"operations": [op.to_json() for op in shown]}
        if token:
            body["nextPageToken"] = token
        return JSONResponse({k: v for k, v in body.items() if v})

    return await fake.guarded("list", effect)
