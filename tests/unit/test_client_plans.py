"""The Python client without a gateway: outcome rules, error mapping, retries."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from jobgate_client import (
    AsyncClient,
    AuthError,
    Client,
    ConflictError,
    GatewayUnavailable,
    InvalidRequestError,
    NeedsAttention,
    RetryPolicy,
    StillRunning,
    Succeeded,
    UsageError,
    outcome_of,
)
from jobgate_client.tool import TOOL_PARAMETERS, anthropic_tool, openai_tool

NO_JITTER = RetryPolicy(attempts=3, base_delay=1.0, factor=2.0, max_delay=8.0, jitter=0.0)


def body(op_id: str = "op_1", *, status: str = "processing", done: bool = False, **kw: Any) -> Any:
    out = {
        "operation_id": op_id,
        "status": status,
        "done": done,
        "state": "observing",
        "message": f"{op_id} is {status}",
        "next_action": None,
        "result": None,
        "outcome": None,
    }
    out.update(kw)
    return out


Handler = Callable[[httpx2.Request], httpx2.Response]


def client(handler: Handler, sleeps: list[float] | None = None) -> Client:
    pauses = sleeps if sleeps is not None else []
    return Client(
        "http://gw",
        "jgk_test",
        transport=httpx2.MockTransport(handler),
        retry=NO_JITTER,
        sleep=pauses.append,
    )


def test_outcome_is_derived_from_done_and_status_when_the_gateway_leaves_it_out() -> None:
    assert outcome_of(body()) is None
    assert outcome_of(body(status="completed_with_errors", done=True)) == "completed_with_errors"
    assert outcome_of(body(status="failed", done=True, outcome="failed")) == "failed"
    assert outcome_of(body(status="mystery", done=True)) == "needs_attention"


def test_a_lost_create_is_retried_with_the_same_key_then_waited() -> None:
    keys: list[str] = []
    sleeps: list[float] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.headers["Authorization"] == "Bearer jgk_test"
        if request.method == "POST":
            keys.append(request.headers["Idempotency-Key"])
            if len(keys) == 1:
                raise httpx2.ConnectError("reset", request=request)
            if len(keys) == 2:
                return httpx2.Response(503, json={"error": {"code": "x", "message": "busy"}})
            return httpx2.Response(200, json=body())
        assert request.url.path == "/v1/operations/op_1/wait"
        return httpx2.Response(200, json=body(status="succeeded", done=True, result={"n": 1}))

    with client(handler, sleeps) as jg:
        outcome = jg.start_and_wait("mock", "report", {}, "key-1", 30)
    assert isinstance(outcome, Succeeded) and outcome.result == {"n": 1}
    assert keys == ["key-1"] * 3 and sleeps == [1.0, 2.0]


def test_a_start_that_never_gets_an_answer_raises_with_the_key_to_retry() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("down", request=request)

    with client(handler) as jg, pytest.raises(GatewayUnavailable) as caught:
        jg.start_and_wait("mock", "report", {}, "key-2", 30)
    assert caught.value.idempotency_key == "key-2" and "same" in str(caught.value)


def test_a_gateway_gone_during_the_wait_is_still_running_never_an_exception() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            return httpx2.Response(202, json=body())
        raise httpx2.ReadTimeout("gone", request=request)

    with client(handler) as jg:
        outcome = jg.start_and_wait("mock", "report", {}, "key-3", 30)
    assert isinstance(outcome, StillRunning) and outcome.reason == "gateway_unreachable"
    assert outcome.operation_id == "op_1" and "NOT finished" in outcome.message


def test_refusals_raise_typed_errors_with_the_gateway_code_and_are_not_retried() -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if request.headers["Idempotency-Key"] == "bad":
            err = {"code": "idempotency_key_reused", "message": "other body"}
            return httpx2.Response(422, json={"error": err})
        return httpx2.Response(401, json={"error": {"code": "unauthorized", "message": "no"}})

    with client(handler) as jg:
        with pytest.raises(InvalidRequestError) as reused:
            jg.start_and_wait("mock", "report", {}, "bad", 30)
        with pytest.raises(AuthError) as auth:
            jg.start_and_wait("mock", "report", {}, "good", 30)
        with pytest.raises(UsageError):
            jg.start_and_wait("mock", "report", {}, " ", 30)
    assert reused.value.code == "idempotency_key_reused" and auth.value.status == 401
    assert len(calls) == 2


def test_a_v2_error_carries_the_operation_body() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        done = body(status="succeeded", done=True)
        err = {"code": "operation_done", "message": "already done"}
        return httpx2.Response(409, json={"error": err, "operation": done})

    with client(handler) as jg, pytest.raises(ConflictError) as caught:
        jg.cancel("op_1", "late")
    assert caught.value.operation is not None
    assert caught.value.operation["status"] == "succeeded"


def test_wait_holds_its_read_timeout_past_the_wait_and_marks_timed_out() -> None:
    seen: dict[str, Any] = {}

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen["timeout"] = request.extensions["timeout"]
        seen["query"] = dict(request.url.params)
        return httpx2.Response(200, json=body())

    with client(handler) as jg:
        waited = jg.wait("op_1", 45)
    assert waited["outcome"] == "timed_out" and seen["query"] == {"timeout": "45"}
    assert seen["timeout"]["read"] == 55.0


def test_gateway_options_are_sent_beside_input_never_inside_it() -> None:
    sent: list[Any] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(json.loads(request.content))
        return httpx2.Response(202, json=body())

    check = {"json_schema": {"type": "object"}, "require_counts": True}
    with client(handler) as jg:
        jg.start("mock", "report", {"x": 1}, idempotency_key="k", labels={"a": "b"},
                 validation=check)  # fmt: skip
    [request] = sent
    assert request["input"] == {"x": 1}
    assert (request["labels"], request["validation"]) == ({"a": "b"}, check)


def test_needs_attention_right_at_the_start_needs_no_wait() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        assert request.method == "POST"
        return httpx2.Response(202, json=body(status="needs_attention", done=True))

    with client(handler) as jg:
        assert isinstance(jg.start_and_wait("mock", "report", {}, "k", 30), NeedsAttention)


async def test_the_async_client_drives_the_same_plans() -> None:
    keys: list[str] = []
    sleeps: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            keys.append(request.headers["Idempotency-Key"])
            if len(keys) == 1:
                raise httpx2.ConnectError("reset", request=request)
            return httpx2.Response(202, json=body(status="succeeded", done=True, result=[1]))
        raise AssertionError("no wait needed")

    transport = httpx2.MockTransport(handler)
    async with AsyncClient(
        "http://gw", transport=transport, retry=NO_JITTER, sleep=fake_sleep
    ) as jg:
        outcome = await jg.start_and_wait("mock", "report", {}, "k", 30)
    assert isinstance(outcome, Succeeded) and keys == ["k", "k"] and sleeps == [1.0]


def test_the_tool_schema_serves_openai_and_anthropic() -> None:
    assert openai_tool()["function"]["parameters"] is TOOL_PARAMETERS
    assert anthropic_tool()["input_schema"]["required"] == [
        "provider",
        "kind",
        "input",
        "idempotency_key",
    ]
    json.dumps(openai_tool())  # plain JSON


BLOCKED = ("fastapi", "sqlalchemy", "sqlmodel", "app", "pydantic", "mcp", "starlette")
PROBE = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Block())
import jobgate_client, jobgate_client.tool
jobgate_client.Client("http://127.0.0.1:9", "k").close()
print(sorted(m for m in sys.modules if m.split(".")[0] in {BLOCKED!r}))
"""


def test_the_client_imports_with_httpx_alone(tmp_path: Any) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_result_too_large_to_come_inline_is_fetched() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            done = body(status="succeeded", done=True, result_url="/v1/operations/op_1/result")
            return httpx2.Response(202, json=done)
        assert request.url.path == "/v1/operations/op_1/result"
        return httpx2.Response(200, json={"operation_id": "op_1", "result": {"big": True}})

    with client(handler) as jg:
        outcome = jg.start_and_wait("mock", "report", {}, "k", 30)
    assert isinstance(outcome, Succeeded) and outcome.result == {"big": True}
