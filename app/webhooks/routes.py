"""`POST /v1/webhooks/{provider}`: verify, de-duplicate, record, then ask for a status read.

A webhook is a hint, never evidence: it does not change an operation's state.
It only makes the operation due now, so the lease owner reads the provider's
status (and collects the result) before anything is declared done. Out-of-order
or replayed events therefore can never move a state backwards.

The secret is the profile's configured one, else the one the provider serves
(`webhooks.secret_fetch`), fetched through the provider client and kept per
profile (app.webhooks.secrets); it is never logged, stored or answered.

An event whose job id matches no operation is answered 202 `ignored` and writes
nothing at all: the job may not be known *yet* (the webhook raced the create
response), and a provider retry must then still be able to count.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.core.http import json_guard
from app.core.http.errors import ApiError
from app.operations import ledger
from app.operations import repository as ops_repo
from app.operations.api import error_docs
from app.operations.context import AppContext
from app.operations.hold import wake_on_commit
from app.operations.services.intake import new_trace_id
from app.providers.answers import bounds
from app.providers.calls.http_util import scrub, secret_variants
from app.providers.expressions import pointers
from app.providers.language.profile import Profile
from app.providers.language.secrets import Secret
from app.webhooks import repository as repo
from app.webhooks.secrets import Found, WebhookSecrets
from app.webhooks.verify import SecretInvalid, SignatureError, verify

router = APIRouter(prefix="/v1", tags=["webhooks"])

STORED_BODY_CHARS = 2000  # webhook bodies kept in history are cut to this length
MAX_EVENT_ID_CHARS = 200  # longer ids are stored as their sha256


class WebhookAck(BaseModel):
    """What the gateway did with a verified event."""

    status: Literal["accepted", "duplicate", "ignored"]
    event_id: str
    operation_id: str | None = None
    detail: str


def _profile(ctx: AppContext, provider: str) -> Profile:
    profile = ctx.profiles.get(provider)
    if profile is None:
        raise ApiError(404, "unknown_provider", f"No provider profile named {provider!r}.")
    if profile.webhooks.scheme == "none":
        raise ApiError(
            404, "webhooks_not_configured", f"Provider {provider!r} declares no webhooks."
        )
    return profile


def _text(value: Any) -> str | None:
    if value is pointers.MISSING or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _event_id(profile: Profile, headers: Any, doc: Any, body: bytes) -> str:
    raw = headers.get("webhook-id") or _text(pointers.get(doc, profile.webhooks.event_id))
    if not raw:
        # No id anywhere: byte-identical redeliveries are still recognised.
        return "sha256:" + hashlib.sha256(body).hexdigest()
    if len(raw) > MAX_EVENT_ID_CHARS:
        return "sha256:" + hashlib.sha256(raw.encode()).hexdigest()
    return raw


async def _verified(
    ctx: AppContext,
    secrets: WebhookSecrets,
    profile: Profile,
    found: Found,
    request: Request,
    body: bytes,
    trace_id: str,
) -> Secret:
    """The secret `body` is signed with; `SignatureError` when none matches. A fetched
    secret that does not match may have been rotated at the provider: it is asked for
    once more (bounded by `WebhookSecrets.refetch`) and the event checked again."""
    assert found.secret is not None
    try:
        verify(profile.webhooks, found.secret.reveal(), request.headers, body, ctx.now())
        return found.secret
    except SignatureError:
        if not found.fetched:
            raise
        fresh = await secrets.refetch(ctx, profile, found.secret, trace_id=trace_id)
        if fresh is None:
            raise
    verify(profile.webhooks, fresh.reveal(), request.headers, body, ctx.now())
    return fresh


def _ack(status_code: int, ack: WebhookAck) -> JSONResponse:
    return JSONResponse(ack.model_dump(mode="json"), status_code=status_code)


@router.post(
    "/webhooks/{provider}",
    operation_id="receiveProviderWebhook",
    status_code=202,
    response_model=WebhookAck,
    responses={
        200: {"model": WebhookAck, "description": "already recorded (duplicate)"},
        **error_docs.responses(
            "malformed_json",
            "webhook_signature_invalid",
            ("unknown_provider", 404),
            "webhooks_not_configured",
            "body_too_large",
            "invalid_request",
            "invalid_value",
            "webhook_secret_unset",
            "webhook_secret_invalid",
            "internal_error",
        ),
    },
)
async def receive_webhook(provider: str, request: Request) -> JSONResponse:
    """Verify a provider's event; on a match, record it and schedule an immediate status read."""
    ctx: AppContext = request.app.state.ctx
    profile = _profile(ctx, provider)
    secrets: WebhookSecrets = request.app.state.webhook_secrets
    trace_id = new_trace_id()
    found = await secrets.get(ctx, profile, trace_id=trace_id)
    secret = found.secret
    if secret is None:
        raise ApiError(
            503,
            "webhook_secret_unset",
            f"The webhook secret for {provider!r} ({profile.webhooks.secret.describe()}) "  # type: ignore[union-attr]
            f"is {found.why}; the event cannot be verified and was not recorded.",
        )
    body = await request.body()
    try:
        secret = await _verified(ctx, secrets, profile, found, request, body, trace_id)
    except SignatureError as exc:
        raise ApiError(401, "webhook_signature_invalid", f"Webhook rejected: {exc}.") from None
    except SecretInvalid as exc:
        raise ApiError(503, "webhook_secret_invalid", str(exc)) from None
    # Signed is not sane: the intake rules hold for what a provider sends too.
    doc = json_guard.loads(body)
    json_guard.check(doc)

    now = ctx.now()
    spec = profile.webhooks
    event_id = _event_id(profile, request.headers, doc, body)
    json_guard.check_text(event_id, parameter="webhook-id")
    # A provider's words are bounded where they enter (app/providers/answers/bounds.py).
    event_type = bounds.word(_text(pointers.get(doc, spec.event_type)))
    job_id = _text(pointers.get(doc, spec.job_id))
    remote_state = bounds.word(_text(pointers.get(doc, spec.state)))
    if not job_id:
        return _ack(202, WebhookAck(status="ignored", event_id=event_id, detail="no job id"))

    kicked = False
    async with ctx.db.transaction() as txn:
        op = await ops_repo.get_by_remote_job(txn, provider, job_id)
        if op is None:
            return _ack(
                202,
                WebhookAck(status="ignored", event_id=event_id, detail="unknown job id"),
            )
        fresh = await repo.record_event(
            txn,
            provider=provider,
            event_id=event_id,
            event_type=event_type,
            remote_job_id=job_id,
            remote_state=remote_state,
            operation_id=op.id,
            received_at=now,
        )
        if not fresh:
            return _ack(
                200,
                WebhookAck(
                    status="duplicate",
                    event_id=event_id,
                    operation_id=op.id,
                    detail="this event was already recorded; nothing was done",
                ),
            )
        kicked = await ops_repo.make_due_now(
            txn, op.id, now=now, reason=f"webhook {event_type or event_id}: read status"
        )
        # Held by this process between two polls: its next step is made due now instead.
        kicked = wake_on_commit(txn, ctx.holder, op.id) or kicked
        text = scrub(body.decode("utf-8", "replace"), secret_variants([secret.reveal()]))
        await ledger.record(
            txn,
            op,
            kind="webhook",
            actor=f"provider:{provider}",
            cause=f"webhook {event_type or 'event'} received; a status read decides the state",
            now=now,
            data={
                "event_id": event_id,
                "event_type": event_type,
                "remote_state": remote_state,
                "status_read_scheduled": kicked,
                "body": text[:STORED_BODY_CHARS],
                "body_truncated": len(text) > STORED_BODY_CHARS,
            },
        )
    if kicked:
        ctx.notifier.kick()
    detail = (
        "recorded; the operation's status will be read now"
        if kicked
        else "recorded; the operation is done or already being read, so no extra read"
    )
    ack = WebhookAck(status="accepted", event_id=event_id, operation_id=op.id, detail=detail)
    return _ack(202, ack)
