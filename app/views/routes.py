"""The operator view: `/operations` list, attention inbox, one page per operation.

Server-rendered HTML that works with JavaScript off. Reads use the same
repository, cursor scheme and presenter as the agent API; the two actions call
the same services (cancellation, attention) and answer 303 back to the page.
Kept out of the OpenAPI document: it is for people, not agents. With API keys it
needs an operator or admin key: a person signs in once at `/login` (app/views/login.py)
and a session cookie stands for the key; scripts send it as a Bearer token or as the
HTTP Basic password. A 401 page links to the sign-in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, get_args
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from app.auth import deps
from app.core.http import json_guard
from app.core.http.errors import ApiError, DomainError, as_api_error
from app.operations.api import endpoints
from app.operations.api.endpoints import context_of
from app.operations.context import AppContext
from app.operations.contract.presenter import to_body
from app.operations.contract.schemas import OperatorDecision, ResolveRequest
from app.operations.domain.operation import Operation
from app.operations.services import approvals, attention, cancellation, queries
from app.operations.services.queries import get as load
from app.views import decisions as explain
from app.views import page_rules
from app.views.render import (
    STATIC_DIR,
    check_same_origin,
    error_page,
    page,
    read_form,
    relative,
)

router = APIRouter(prefix="/operations", include_in_schema=False)

PAGE_SIZE = 50  # operations per list page
ATTENTION_LIMIT = 200  # rows on the attention page
PINNED = 5  # oldest needs-a-person rows shown above the list
STATUSES = endpoints.STATUSES
STATES = queries.STATES
DECISIONS: tuple[str, ...] = get_args(OperatorDecision)
# Fixed notices after a redirect: the query names one, so no text is ever reflected.
MAX_REASON = 2000  # characters of an approval's reason (the API's limit)
NOTICES = {
    "cancel": "Cancel recorded. The lease owner sends it to the provider once; "
    "it is NOT cancelled until the provider confirms.",
    "resolve": "Decision recorded.",
    "approve": "Approved: the gateway sends the create now.",
    "deny": "Denied: the create is never sent.",
}


@router.get("/static/style.css")
async def stylesheet() -> Response:
    """The one stylesheet (small enough to read per request; cached by the browser)."""
    css = (STATIC_DIR / "style.css").read_text(encoding="utf-8")
    return Response(css, media_type="text/css", headers={"Cache-Control": "max-age=300"})


@router.get("", response_class=HTMLResponse)
async def list_page(
    request: Request,
    status: str = "",
    state: str = "",
    provider: str = "",
    label: str = "",
    trace_id: str = "",
    cursor: str = "",
) -> HTMLResponse:
    """The caller's operations, newest first, filtered like `GET /v1/operations`."""
    who: str | None = None
    query = {
        "status": status,
        "state": state,
        "provider": provider,
        "label": label,
        "trace_id": trace_id,
    }
    try:
        caller = await operator(request)
        who = caller.name
        ctx = context_of(request)
        ops, next_cursor = await _list(ctx, caller, query, cursor)
        waiting = await _attention_count(ctx, caller)
        active = {k: v for k, v in query.items() if v}
        # The oldest that need a person, above the list, on its first unfiltered page.
        pinned = (
            await queries.attention_inbox(ctx, caller, limit=PINNED)
            if waiting and not active and not cursor
            else []
        )
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return _error(request, err, who=who)
    now = ctx.now()
    return page(
        request,
        "list.html",
        {
            "title": "Operations",
            "who": who,
            "now": now,
            "attention_count": waiting,
            "pinned": [(op, to_body(op, now), why) for op, why in pinned],
            "query": query,
            "rows": [(op, to_body(op, now)) for op in ops],
            "statuses": STATUSES,
            "states": STATES,
            "filtered": bool(active),
            "next_url": ("/operations?" + urlencode({**active, "cursor": next_cursor}))
            if next_cursor
            else None,
            "first_url": ("/operations?" + urlencode(active)) if cursor else None,
        },
    )


async def _list(
    ctx: AppContext, who: deps.Principal, query: dict[str, str], cursor: str
) -> tuple[list[Operation], str | None]:
    """One page, with the API's filter rules and paging (not a copy of them)."""
    flt = queries.build_filter(
        who.owner_filter,
        status=query["status"],
        state=query["state"],
        provider=query["provider"],
        trace_id=query["trace_id"],
        label=query["label"],
    )
    return await queries.list_page(
        ctx, flt, status=query["status"] or None, limit=PAGE_SIZE, cursor=cursor or None
    )


@router.get("/attention", response_class=HTMLResponse)
async def attention_page(request: Request) -> HTMLResponse:
    """Operations that need a human, oldest first, each with why."""
    who: str | None = None
    try:
        caller = await operator(request)
        who = caller.name
        ctx = context_of(request)
        inbox = await queries.attention_inbox(ctx, caller, limit=ATTENTION_LIMIT)
        waiting = await _attention_count(ctx, caller)
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return _error(request, err, who=who)
    now = ctx.now()
    rows = [(op, to_body(op, now), why) for op, why in inbox]
    return page(
        request,
        "attention.html",
        {
            "title": "Needs attention",
            "who": who,
            "now": now,
            "attention_count": waiting,
            "rows": rows,
        },
    )


@router.get("/{op_id}", response_class=HTMLResponse)
async def detail_page(request: Request, op_id: str, done: str = "") -> HTMLResponse:
    """One operation: facts, deadlines, lease, schedule, timeline and actions."""
    who: str | None = None
    try:
        caller = await operator(request)
        who = caller.name
        return await _detail(request, op_id, caller, notice=NOTICES.get(done))
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return _error(request, err, who=who)


async def _detail(
    request: Request,
    op_id: str,
    caller: deps.Principal,
    *,
    notice: str | None = None,
    action_error: ApiError | None = None,
    form: dict[str, str] | None = None,
) -> HTMLResponse:
    ctx = context_of(request)
    op = await load(ctx, op_id, caller)
    history = await queries.history(ctx, op.id, caller)
    now = ctx.now()
    why = attention.why(op)
    row = page_rules.row_of(op, why)
    rule = page_rules.RULES[row]
    decisions = page_rules.decisions_for(row, DECISIONS)
    lease_live = op.lease_expires_at is not None and op.lease_expires_at > now
    chosen = (form or {}).get("decision")
    fits, fits_why = explain.suggested(op, decisions)
    context: dict[str, Any] = {
        "title": op.id,
        "who": caller.name,
        "now": now,
        "op": op,
        "body": to_body(op, now),
        "history": history,
        "why": why,
        "decisions": decisions,
        "explained": explain.EXPLAINED,
        "selected": chosen if chosen in decisions else fits,
        "fits": fits,
        "fits_why": fits_why,
        "rule": rule,
        "held_deadlines": _held_deadlines(op, now) if rule.deadlines == "from_approval" else [],
        "attention_count": await _attention_count(ctx, caller),
        "lease_live": lease_live,
        "can_cancel": "cancel" in rule.forms and op.cancel_requested_at is None,
        "approval_explained": explain.APPROVAL_EXPLAINED,
        "notice": notice,
        "action_error": action_error,
        "form": form or {},
    }
    status = action_error.status if action_error is not None else 200
    return page(request, "detail.html", context, status=status)


def _held_deadlines(op: Operation, now: datetime) -> list[tuple[str, datetime | None, str]]:
    """A held create's deadlines as the times they would be if approved now, with the
    span each counts from approval (approval moves them by the time held)."""
    held = now - op.created_at
    rows: list[tuple[str, datetime | None, str]] = []
    for name, value in (
        ("Create", op.create_deadline_at),
        ("Result", op.result_deadline_at),
        ("Cancel", op.cancel_deadline_at),
    ):
        if value is None:
            rows.append((name, None, ""))
            continue
        span = relative(value, op.created_at).removeprefix("in ")
        rows.append((name, value + held, span))
    return rows


async def _attention_count(ctx: AppContext, caller: deps.Principal) -> int:
    """What needs a person, for the count in the navigation on every page."""
    return await queries.attention_count(ctx, caller, cap=ATTENTION_LIMIT)


async def operator(request: Request) -> deps.Principal:
    """The caller, who must hold an operator or admin key: a session from `/login`, a
    Bearer key, or the key as the Basic password (for scripts)."""
    caller = await deps.authenticate(request, allow_basic=True, allow_session=True)
    return deps.require_operator(caller)


def _error(request: Request, err: ApiError, *, who: str | None) -> HTMLResponse:
    """The error page; a 401 links to `/login` (no Basic challenge: a person signs in)."""
    return error_page(request, err, who=who)


def _back(op_id: str, done: str) -> RedirectResponse:
    return RedirectResponse(f"/operations/{quote(op_id, safe='')}?done={done}", status_code=303)


async def _action(
    request: Request, op_id: str
) -> Response | tuple[deps.Principal, dict[str, str], AppContext, Operation]:
    """What every form POST checks first: same origin, an operator, the form, the operation."""
    who: str | None = None
    try:
        check_same_origin(request)
        caller = await operator(request)
        who = caller.name
        form = await read_form(request)
        json_guard.check(form)  # the same intake rules as the API's JSON bodies
        ctx = context_of(request)
        return caller, form, ctx, await load(ctx, op_id, caller)
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return _error(request, err, who=who)


@router.post("/{op_id}/cancel", response_class=HTMLResponse)
async def cancel_action(request: Request, op_id: str) -> Response:
    """Record the intent to cancel, as `POST /v1/operations/{id}/cancel` does."""
    checked = await _action(request, op_id)
    if isinstance(checked, Response):
        return checked
    caller, form, ctx, op = checked
    reason = form.get("reason", "").strip()[: cancellation.MAX_REASON]
    try:
        await cancellation.request_cancel(ctx, op, caller, reason)
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return await _detail(request, op_id, caller, action_error=err, form=form)
    return _back(op_id, "cancel")


@router.post("/{op_id}/resolve", response_class=HTMLResponse)
async def resolve_action(request: Request, op_id: str) -> Response:
    """An operator's decision, as `POST /v1/operations/{id}/resolve` records it."""
    checked = await _action(request, op_id)
    if isinstance(checked, Response):
        return checked
    caller, form, ctx, op = checked
    try:
        await attention.resolve(ctx, op, caller.name, _resolve_request(form))
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return await _detail(request, op_id, caller, action_error=err, form=form)
    return _back(op_id, "resolve")


@router.post("/{op_id}/approval", response_class=HTMLResponse)
async def approval_action(request: Request, op_id: str) -> Response:
    """Approve or deny a create held for approval, as `POST /v1/operations/{id}/approve`
    and `/deny` do (docs/policy.md)."""
    checked = await _action(request, op_id)
    if isinstance(checked, Response):
        return checked
    caller, form, ctx, op = checked
    decision = form.get("decision", "")
    try:
        if decision not in explain.APPROVAL_EXPLAINED:
            raise ApiError(422, "invalid_request", "The decision must be approve or deny.")
        reason = form.get("reason", "").strip()[:MAX_REASON]
        if not reason:
            raise ApiError(422, "invalid_request", "The decision was not recorded: give a reason.")
        await approvals.decide(ctx, op, caller, approve=decision == "approve", reason=reason)
    except (ApiError, DomainError) as exc:
        err = as_api_error(exc)
        return await _detail(request, op_id, caller, action_error=err, form=form)
    return _back(op_id, decision)


def _resolve_request(form: dict[str, str]) -> ResolveRequest:
    """The form as the API's request model; blank optional fields mean "not given"."""
    try:
        return ResolveRequest.model_validate(
            {
                "decision": form.get("decision", ""),
                "reason": form.get("reason", "").strip(),
                "remote_job_id": form.get("remote_job_id", "").strip() or None,
                "result_deadline_seconds": form.get("result_deadline_seconds", "").strip() or None,
                "force": form.get("force") == "on",
            }
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'form'}: {e['msg']}" for e in exc.errors()
        )
        raise ApiError(
            422, "invalid_request", f"The decision was not recorded: {problems}."
        ) from exc
