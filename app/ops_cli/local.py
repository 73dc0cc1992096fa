"""`jobgate ops --database-url URL`: the ops commands straight on the database, no gateway.

Every call goes through the services the REST API's routes call (`queries` for reads,
`cancellation.request_cancel` and `attention.resolve` for the two writes) on a context
built by the gateway's own `build_context` (so the audit trail and completion callbacks
are wired exactly as in `serve`), and answers with the bodies the API would send,
rendered by `presenter.to_body`. The caller is an operator principal named after the
OS user, `cli:<user>`, so history says who acted and that it came from the CLI.

Synchronous on the outside: one event loop (`asyncio.Runner`) lives as long as the
command, so the engine's connections are made once. The one provider call made here is
the status read of the job an `accept_job` names, which `attention.resolve` checks
before accepting it (app/operations/services/accept_check.py), with the credentials and profiles
of this process's environment; the lease owner (an observer) sends a cancel, as it
does for a cancel made over REST.
"""

from __future__ import annotations

import asyncio
import getpass
import os
import time
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, Unpack, cast

import httpx2
from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from app.auth.deps import Principal
from app.auth.models import Role
from app.core.config import Settings
from app.core.db.db_clock import measure_once
from app.core.db.schema_state import check_sync
from app.core.http import errors
from app.core.runtime.clock import Clock
from app.main import build_context
from app.operations.context import AppContext
from app.operations.contract.presenter import history_json, to_body
from app.operations.contract.schemas import (
    ApprovalDecisionRequest,
    AttentionItem,
    AttentionList,
    CancelRequest,
    OperationList,
    ResolveRequest,
)
from app.operations.domain.operation import Operation
from app.operations.domain.states import is_done
from app.operations.services import approvals, attention, cancellation, queries
from app.ops_cli.backend import BackendUnavailable
from app.providers.calls.outbound import outbound_client
from jobgate_client import types as api
from jobgate_client.errors import ApiError

T = TypeVar("T")
REREAD_SECONDS = 1.0  # `wait` re-reads the row this often (a read transaction each time)
MAX_PAGE = 200  # list and attention pages, as the REST API bounds them


def cli_principal() -> Principal:
    """`cli:<OS user>` as an operator: who acted, and that it was the CLI on the database."""
    try:
        user = getpass.getuser().strip()
    except (OSError, KeyError):  # no login name and no passwd entry (some containers)
        user = ""
    return Principal(f"cli:{user or f'uid{os.getuid()}'}", Role.OPERATOR)


class LocalOps:
    """The `OpsBackend` on a database: each call one service call, in one event loop."""

    def __init__(self, runner: asyncio.Runner, ctx: AppContext, who: Principal) -> None:
        self._runner = runner
        self.ctx = ctx
        self.who = who
        self.reads = 0  # operation reads made by `wait` (tests: bounded, never a spin)

    def _run(self, call: Coroutine[Any, Any, T]) -> T:
        """Run one service call; refusals become the API's errors, as REST would send them."""
        try:
            return self._runner.run(call)
        except (errors.DomainError, errors.ApiError) as exc:
            err = errors.as_api_error(exc)
            raise ApiError(err.status, err.code, err.message, err.details) from exc
        except ValidationError as exc:  # the REST API's request schemas, checked here too
            said = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
            raise _invalid("; ".join(said)) from exc
        except (SQLAlchemyError, OSError) as exc:
            first = str(getattr(exc, "orig", None) or exc).strip().splitlines()
            detail = first[0][:200] if first else type(exc).__name__
            raise BackendUnavailable(f"the database did not answer: {detail}") from exc

    def _body(self, op: Operation, *, waited: bool = False) -> dict[str, Any]:
        now = self.ctx.now()
        return to_body(op, now, waited=waited, mcp=self.ctx.settings.mcp).model_dump(mode="json")

    def list(self, **filters: Unpack[api.ListFilters]) -> api.OperationList:
        return cast(api.OperationList, self._run(self._list(**filters)))

    async def _list(self, **f: Unpack[api.ListFilters]) -> dict[str, Any]:
        limit = _page_limit(f.get("limit", 50))
        status = f.get("status")
        flt = queries.build_filter(
            self.who.owner_filter,
            status=status,
            state=f.get("state"),
            provider=f.get("provider"),
            trace_id=f.get("trace_id"),
            label=f.get("label"),
            in_flight=f.get("in_flight"),
        )
        page, cursor = await queries.list_page(
            self.ctx, flt, status=status, limit=limit, cursor=f.get("cursor")
        )
        now = self.ctx.now()
        mcp = self.ctx.settings.mcp
        listed = OperationList(items=[to_body(o, now, mcp=mcp) for o in page], next_cursor=cursor)
        return listed.model_dump(mode="json")

    def get(self, operation_id: str) -> api.Operation:
        return cast(api.Operation, self._run(self._get(operation_id)))

    async def _get(self, op_id: str) -> dict[str, Any]:
        return self._body(await queries.get(self.ctx, op_id, self.who))

    def history(self, operation_id: str) -> api.HistoryList:
        return cast(api.HistoryList, self._run(self._history(operation_id)))

    async def _history(self, op_id: str) -> dict[str, Any]:
        return history_json(op_id, await queries.history(self.ctx, op_id, self.who))

    def wait(self, operation_id: str, timeout: float = 60.0) -> api.Operation:
        return cast(api.Operation, self._run(self._wait(operation_id, timeout)))

    async def _wait(self, op_id: str, timeout: float) -> dict[str, Any]:
        """Re-read until done or `timeout`: at most one read every REREAD_SECONDS."""
        if timeout < 0:
            raise _invalid("timeout must be at least 0.")
        ends = time.monotonic() + timeout
        op = await self._read(op_id)
        while not is_done(op.state):
            left = ends - time.monotonic()
            if left <= 0:
                break
            await asyncio.sleep(min(REREAD_SECONDS, left))
            op = await self._read(op_id)
        return self._body(op, waited=True)

    async def _read(self, op_id: str) -> Operation:
        self.reads += 1
        return await queries.get(self.ctx, op_id, self.who)  # in `db.read()`

    def cancel(self, operation_id: str, reason: str = "") -> api.Operation:
        return cast(api.Operation, self._run(self._cancel(operation_id, reason)))

    async def _cancel(self, op_id: str, reason: str) -> dict[str, Any]:
        req = CancelRequest(reason=reason)
        op = await queries.get(self.ctx, op_id, self.who)
        if op.provider not in self.ctx.profiles:  # the cancel deadline comes from the profile
            raise ApiError(
                409,
                "unknown_provider",
                f"The profile {op.provider!r} is not loaded here: run with the gateway's "
                "JOBGATE_PROFILES_DIR.",
            )
        op = await cancellation.request_cancel(self.ctx, op, self.who, req.reason)
        return self._body(op)

    def resolve(
        self,
        operation_id: str,
        decision: api.Decision,
        reason: str,
        *,
        remote_job_id: str | None = None,
        result_deadline_seconds: float | None = None,
        force: bool = False,
    ) -> api.Operation:
        req = {
            "decision": decision,
            "reason": reason,
            "remote_job_id": remote_job_id,
            "result_deadline_seconds": result_deadline_seconds,
            "force": force,
        }
        return cast(api.Operation, self._run(self._resolve(operation_id, req)))

    async def _resolve(self, op_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        req = ResolveRequest.model_validate(fields)
        op = await queries.get(self.ctx, op_id, self.who)
        done = await attention.resolve(self.ctx, op, self.who.name, req)
        body = self._body(await queries.get(self.ctx, op_id, self.who))
        if done.forced:  # the same words the gateway's answer carries
            body["message"] = f"{done.forced} {body['message']}"
        return body

    def approve(self, operation_id: str, reason: str) -> api.Operation:
        return cast(api.Operation, self._run(self._decide(operation_id, True, reason)))

    def deny(self, operation_id: str, reason: str) -> api.Operation:
        return cast(api.Operation, self._run(self._decide(operation_id, False, reason)))

    async def _decide(self, op_id: str, approve: bool, reason: str) -> dict[str, Any]:
        req = ApprovalDecisionRequest(reason=reason)
        op = await queries.get(self.ctx, op_id, self.who)
        await approvals.decide(self.ctx, op, self.who, approve=approve, reason=req.reason)
        return self._body(await queries.get(self.ctx, op_id, self.who))

    def attention(self, limit: int = 50) -> api.AttentionList:
        return cast(api.AttentionList, self._run(self._attention(limit)))

    async def _attention(self, limit: int) -> dict[str, Any]:
        inbox = await queries.attention_inbox(self.ctx, self.who, limit=_page_limit(limit))
        now = self.ctx.now()
        mcp = self.ctx.settings.mcp
        items = [AttentionItem(why=why, operation=to_body(o, now, mcp=mcp)) for o, why in inbox]
        return AttentionList(items=items).model_dump(mode="json")


def _invalid(message: str) -> ApiError:
    """What the REST API answers to a request its schema refuses (here, said in words)."""
    return ApiError(422, "invalid_request", message)


def _page_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_PAGE:
        raise _invalid(f"limit must be between 1 and {MAX_PAGE}.")
    return limit


@contextmanager
def open_database(
    database_url: str, *, clock: Clock | None = None, who: Principal | None = None
) -> Iterator[LocalOps]:
    """The ops backend on `database_url`; refused (BackendUnavailable) unless the database
    is reachable and at the head migration, the check `serve` makes before it starts."""
    state = check_sync(database_url)
    if not state.ready:
        raise BackendUnavailable(f"the database is not ready: {state.reason}")
    settings = Settings(database_url=database_url)
    with asyncio.Runner() as runner:
        http = outbound_client()  # only accept_job's status read goes out on it
        ctx = build_context(settings, clock=clock, http=http)
        runner.run(measure_once(ctx.clock, ctx.db))  # times it writes: the database's clock
        try:
            yield LocalOps(runner, ctx, who or cli_principal())
        finally:
            runner.run(_close(ctx, http))


async def _close(ctx: AppContext, http: httpx2.AsyncClient) -> None:
    await http.aclose()
    await ctx.db.dispose()
