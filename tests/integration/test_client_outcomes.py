"""`start_and_wait` against a real gateway process and the mock: each of the six outcomes,
and a retried create (its answer lost) that still makes one operation and one job."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from jobgate_client import (
    AsyncClient,
    Cancelled,
    Client,
    CompletedWithErrors,
    Failed,
    NeedsAttention,
    RetryPolicy,
    StillRunning,
    Succeeded,
)
from jobgate_client.tool import run_tool
from tests.support.agent_stack import (
    LONG_DEADLINES,
    agent_env,
    gateway,
    mock_job,
)
from tests.support.timing import budget

FAST_RETRY = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05)


@pytest.fixture(scope="module")
def gateway_url(
    module_database_url: str, mock_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("client-gw")
    with gateway(agent_env(module_database_url, mock_url, tmp), tmp / "gw.log") as url:
        yield url


@pytest.fixture
def client(gateway_url: str) -> Iterator[Client]:
    with Client(gateway_url, retry=FAST_RETRY) as jg:
        yield jg


def _run(client: Client, scenario: dict[str, Any], max_wait: float = 20.0, **kw: Any) -> Any:
    return client.start_and_wait(
        "mock", "report", mock_job(scenario), uuid.uuid4().hex, max_wait, **kw
    )


def test_fast_succeeds_with_the_result(client: Client) -> None:
    outcome = _run(client, {"name": "fast"})
    assert isinstance(outcome, Succeeded), outcome
    assert outcome.kind == "succeeded" and outcome.result is not None
    assert "SUCCEEDED" in outcome.message and outcome.operation["outcome"] == "succeeded"


def test_partial_results_complete_with_errors_and_the_failed_items(client: Client) -> None:
    outcome = _run(client, {"name": "partial_results", "processed": 10, "failed": 3})
    assert isinstance(outcome, CompletedWithErrors), outcome
    assert len(outcome.failed_items) == 3 and not outcome.more_failed_items
    assert outcome.result_summary is not None and outcome.result_summary["failed"] == 3
    assert len(list(client.iter_errors(outcome.operation_id, page_size=2))) == 3


@pytest.mark.parametrize("scenario", [{"name": "late_failure", "polls": 1}, {"name": "reject"}])
def test_failures_fail_with_the_error(client: Client, scenario: dict[str, Any]) -> None:
    outcome = _run(client, scenario)
    assert isinstance(outcome, Failed), outcome
    assert outcome.error is not None and outcome.error["code"]
    assert "FAILED" in outcome.message


def test_corrupt_result_needs_attention(client: Client) -> None:
    outcome = _run(client, {"name": "corrupt_result"})
    assert isinstance(outcome, NeedsAttention), outcome
    assert outcome.operation["state"] == "result_validation_failed"
    assert "NEEDS A HUMAN" in outcome.message


def test_never_finishes_is_still_running_with_its_id(client: Client) -> None:
    started = time.monotonic()
    outcome = _run(client, {"name": "never_finishes"}, max_wait=0.5, deadlines=LONG_DEADLINES)
    assert time.monotonic() - started < 5
    assert isinstance(outcome, StillRunning), outcome
    assert outcome.reason == "max_wait" and outcome.operation_id.startswith("op_")
    assert "NOT finished" in outcome.message and outcome.operation_id in outcome.message
    assert client.get(outcome.operation_id)["done"] is False
    client.cancel(outcome.operation_id, "test done")


def test_a_cancel_during_the_wait_ends_cancelled(client: Client, gateway_url: str) -> None:
    label = uuid.uuid4().hex
    box: dict[str, Any] = {}

    def agent() -> None:
        with Client(gateway_url) as own:
            box["outcome"] = _run(
                own,
                {"name": "never_finishes"},
                deadlines=LONG_DEADLINES,
                labels={"run": label},
            )

    thread = threading.Thread(target=agent)
    thread.start()
    try:
        ends = time.monotonic() + budget(10)
        while not (items := client.list(label=f"run={label}")["items"]):
            assert time.monotonic() < ends, "the operation never appeared"
            time.sleep(0.02)
        client.cancel(items[0]["operation_id"], "the user changed their mind")
    finally:
        thread.join(30)
    assert isinstance(box.get("outcome"), Cancelled), box


class LoseFirstCreateAnswer(httpx2.BaseTransport):
    """Sends the first create to the gateway, then drops its answer (a reset)."""

    def __init__(self) -> None:
        self.inner = httpx2.HTTPTransport()
        self.creates: list[str] = []

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path == "/v1/operations":
            self.creates.append(request.headers["Idempotency-Key"])
            if len(self.creates) == 1:
                response.read()
                response.close()
                raise httpx2.ReadError(
                    "connection reset before the answer arrived", request=request
                )
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_lost_create_answer_is_retried_with_the_same_key(
    gateway_url: str, mock_client: httpx2.Client
) -> None:
    transport = LoseFirstCreateAnswer()
    label = uuid.uuid4().hex
    with Client(gateway_url, transport=transport, retry=FAST_RETRY) as jg:
        outcome = _run(jg, {"name": "fast"}, labels={"run": label})
        listed = jg.list(label=f"run={label}")["items"]
    assert isinstance(outcome, Succeeded), outcome
    assert len(transport.creates) == 2 and len(set(transport.creates)) == 1
    assert [op["operation_id"] for op in listed] == [outcome.operation_id]
    stats = mock_client.get(
        "/_mock/stats", params={"client_reference": outcome.operation_id}
    ).json()
    assert len(stats["jobs_by_reference"][outcome.operation_id]) == 1


def test_the_function_calling_tool_answers_in_words_and_structure(client: Client) -> None:
    reply = run_tool(
        client,
        {
            "provider": "mock",
            "kind": "report",
            "input": mock_job({"name": "fast"}),
            "idempotency_key": uuid.uuid4().hex,
            "max_wait_seconds": 20,
        },
    )
    assert reply["outcome"] == "succeeded" and "SUCCEEDED" in reply["message"]
    assert reply["operation"] is not None and reply["operation"]["done"] is True
    refused = run_tool(client, {"provider": "mock", "kind": "report", "input": {}})
    assert refused["outcome"] == "refused" and "idempotency_key" in refused["message"]


async def test_the_async_client_gets_the_same_outcomes(gateway_url: str) -> None:
    async with AsyncClient(gateway_url, retry=FAST_RETRY) as jg:
        ok = await jg.start_and_wait(
            "mock", "report", mock_job({"name": "fast"}), uuid.uuid4().hex, 20
        )
        still = await jg.start_and_wait(
            "mock",
            "report",
            mock_job({"name": "never_finishes"}),
            uuid.uuid4().hex,
            0.3,
            deadlines=LONG_DEADLINES,
        )
        assert isinstance(ok, Succeeded) and isinstance(still, StillRunning)
        waited = await jg.wait(still.operation_id, 0)
        assert waited["outcome"] == "timed_out"
        await jg.cancel(still.operation_id)
