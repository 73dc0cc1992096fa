"""Every row of the outcome table (docs/profiles.md), driven through the real driver.

A scripted provider (tests/support/scripted_provider.py) ends each job with the exact
answer a row needs; the agent creates it through the REST API, the observer runs, and
the agent reads `/wait`, `/result` and `/errors`. Each case also checks that it lands in
the row it is named for, so a row added to the table without a case here fails.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.providers.answers.outcome import TABLE, Facts, row_for
from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass as C
from tests.conftest import Gateway
from tests.support.scripted_provider import create_app, profile_yaml
from tests.support.servers import serve_app

OK = [{"id": "a"}, {"id": "b"}]  # output lines: items that succeeded


def counts(total: int, succeeded: int, failed: int, not_processed: int) -> dict[str, int]:
    return {
        "total": total,
        "succeeded": succeeded,
        "failed": failed,
        "not_processed": not_processed,
    }


@dataclass(frozen=True)
class Case:
    row: int  # the index in TABLE this case must land in
    remote: C
    state: str  # the scripted provider's word
    counted: dict[str, int] | None  # the status answer's counts (None: none given)
    itemless: bool = False  # the profile counts no items
    output: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    outcome: str | None = None  # what the agent is told; None: not finished
    kept: bool = False  # `GET /result` offers output


def _errors(n: int) -> list[dict[str, Any]]:
    return [{"id": f"x{i}", "error": "broken"} for i in range(n)]


CASES = [
    Case(0, C.RUNNING, "running", None, outcome=None),
    Case(1, C.SUCCEEDED, "succeeded", None, itemless=True, output=OK, outcome="succeeded",
         kept=True),
    Case(2, C.SUCCEEDED_PARTIAL, "partial", None, itemless=True, output=OK,
         outcome="completed_with_errors", kept=True),
    Case(3, C.SUCCEEDED, "succeeded", counts(0, 0, 0, 0), outcome="failed"),
    Case(4, C.SUCCEEDED, "succeeded", counts(2, 2, 0, 0), output=OK, outcome="succeeded",
         kept=True),
    Case(5, C.SUCCEEDED, "succeeded", counts(3, 0, 3, 0), errors=_errors(3), outcome="failed"),
    Case(6, C.SUCCEEDED_PARTIAL, "partial", counts(4, 2, 0, 2), output=OK, errors=_errors(2),
         outcome="completed_with_errors", kept=True),
    Case(7, C.SUCCEEDED, "succeeded", counts(3, 2, 1, 0), output=OK, errors=_errors(1),
         outcome="completed_with_errors", kept=True),
    Case(8, C.FAILED, "failed", counts(4, 2, 2, 0), output=OK, errors=_errors(2),
         outcome="failed", kept=True),
    Case(9, C.FAILED, "failed", counts(2, 0, 2, 0), errors=_errors(2), outcome="failed"),
    Case(10, C.FAILED, "failed", None, outcome="failed"),
    Case(11, C.CANCELLED, "cancelled", counts(4, 2, 0, 2), output=OK, errors=_errors(2),
         outcome="cancelled", kept=True),
    Case(12, C.CANCELLED, "cancelled", None, outcome="cancelled"),
]  # fmt: skip


def test_every_row_has_a_case_that_lands_in_it() -> None:
    assert [c.row for c in CASES] == list(range(len(TABLE)))
    for case in CASES:
        found = Counts(**case.counted) if case.counted is not None else None
        listed = len(case.errors)
        assert row_for(Facts(case.remote, found, listed, case.itemless)) is TABLE[case.row]
        expected = TABLE[case.row].result
        assert case.outcome == (None if expected is None else expected.value), case


@pytest.fixture(scope="module")
def scripted_url() -> Iterator[str]:
    with serve_app(create_app()) as url:
        yield url


@pytest.fixture
def gateway_settings(
    scripted_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    for name, itemless in (("scripted", False), ("scripted_one", True)):
        (profiles / f"{name}.yaml").write_text(profile_yaml(name, itemless=itemless))
    monkeypatch.setenv("JOBGATE_SCRIPTED_URL", scripted_url)
    return {"profiles_dir": profiles}


@pytest.fixture
async def agent(gateway: Gateway) -> AsyncIterator[Gateway]:
    yield gateway


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"row{c.row}-{c.remote.value}")
async def test_the_row_through_the_driver(agent: Gateway, case: Case) -> None:
    script: dict[str, Any] = {
        "final": {"state": case.state}
        | ({"counts": case.counted} if case.counted is not None else {}),
        "output": case.output,
        "errors": case.errors,
        "running_reads": 1 if case.outcome is not None else 10_000,
    }
    provider = "scripted_one" if case.itemless else "scripted"
    r = await agent.http.post(
        "/v1/operations",
        json={"provider": provider, "kind": "run", "input": script},
        headers={"Idempotency-Key": uuid.uuid4().hex},
    )
    assert r.status_code == 202, r.text
    op_id = r.json()["operation_id"]
    if case.outcome is None:
        for _ in range(5):
            await agent.tick(60.0)
        body = (await agent.http.get(f"/v1/operations/{op_id}")).json()
        assert body["done"] is False and body["outcome"] is None
        return
    await agent.run_until_done(op_id, step=60.0)
    body = (await agent.http.get(f"/v1/operations/{op_id}/wait", params={"timeout": 1})).json()
    assert body["outcome"] == case.outcome, body
    if case.outcome != "succeeded":
        assert "may report success" not in body["message"].lower(), body["message"]
    result = await agent.http.get(f"/v1/operations/{op_id}/result")
    assert (result.status_code == 200) is case.kept, result.text
    if case.errors and case.outcome != "cancelled" or case.row == 11:
        listed = (await agent.http.get(f"/v1/operations/{op_id}/errors")).json()["items"]
        assert [e["item"]["id"] for e in listed] == [e["id"] for e in case.errors]
