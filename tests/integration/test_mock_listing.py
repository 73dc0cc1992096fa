"""The mock provider as a provider WITHOUT create idempotency: tokenless creates, a paged
listing that is only eventually consistent, and creates that answer too late."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from jobgate_fakes.mock.app import create_app
from jobgate_fakes.mock.settings import MockSettings
from jobgate_fakes.mock.store import MockStore
from tests.support.servers import serve_app
from tests.support.timing import QUICK_S, budget


@pytest.fixture
def client(tmp_path: Path) -> Iterator[httpx2.Client]:
    """A mock of its own: listings see every job, so tests must not share one."""
    with serve_app(create_app(MockSettings(state_path=str(tmp_path / "m.db")))) as url:
        with httpx2.Client(base_url=url, timeout=5) as c:
            yield c


def create(
    c: httpx2.Client, ref: str, token: str | None = None, **scenario: Any
) -> httpx2.Response:
    body = {
        "kind": "report",
        "input": {"scenario": {"name": "fast", **scenario}},
        "metadata": {"client_reference": ref},
    }
    return c.post("/v1/jobs", json=body, headers={"Idempotency-Key": token} if token else {})


def by_ref(c: httpx2.Client, ref: str) -> list[str]:
    stats = c.get("/_mock/stats", params={"client_reference": ref}).json()
    return list(stats["jobs_by_reference"].get(ref, []))


def test_a_create_without_a_token_makes_a_new_job_every_time(client: httpx2.Client) -> None:
    first, second = create(client, "op_a"), create(client, "op_a")
    assert first.status_code == second.status_code == 202
    assert first.json()["job_id"] != second.json()["job_id"]
    assert by_ref(client, "op_a") == [first.json()["job_id"], second.json()["job_id"]]


def test_ignore_token_makes_the_token_worthless(client: httpx2.Client) -> None:
    a = create(client, "op_b", token="tok_b", ignore_token=1).json()["job_id"]
    b = create(client, "op_b", token="tok_b", ignore_token=1).json()["job_id"]
    assert a != b and by_ref(client, "op_b") == [a, b]
    stats = client.get("/_mock/stats", params={"token": "tok_b"}).json()
    assert stats["creates_by_token"] == {"tok_b": 2} and stats["jobs_by_token"]["tok_b"] == [a, b]


def test_a_create_fault_hits_only_the_first_non_idempotent_create(client: httpx2.Client) -> None:
    with pytest.raises(httpx2.TransportError):
        create(client, "op_c", name="lost_create_response")
    assert create(client, "op_c", name="lost_create_response").status_code == 202
    assert create(client, "op_d", name="accept_then_5xx").status_code == 503
    assert create(client, "op_d", name="accept_then_5xx").status_code == 202
    assert len(by_ref(client, "op_c")) == len(by_ref(client, "op_d")) == 2


def test_the_listing_pages_newest_first_three_ways(client: httpx2.Client) -> None:
    ids = [create(client, f"op_{i}").json()["job_id"] for i in range(7)]
    newest_first = ids[::-1]
    page = client.get("/v1/jobs", params={"limit": 3}).json()
    assert [j["job_id"] for j in page["jobs"]] == newest_first[:3]
    assert page["jobs"][0]["metadata"] == {"client_reference": "op_6"}
    assert page["has_more"] is True and page["last_id"] == newest_first[2]
    by_cursor = client.get("/v1/jobs", params={"limit": 3, "cursor": page["next_cursor"]}).json()
    by_after = client.get("/v1/jobs", params={"limit": 3, "after": page["last_id"]}).json()
    by_url = client.get(page["next"]).json()
    assert by_cursor == by_after == by_url
    assert [j["job_id"] for j in by_cursor["jobs"]] == newest_first[3:6]
    last = client.get("/v1/jobs", params={"limit": 3, "cursor": by_cursor["next_cursor"]}).json()
    assert [j["job_id"] for j in last["jobs"]] == newest_first[6:]
    assert (last["has_more"], last["next_cursor"], last["next"]) == (False, None, None)
    assert len(client.get("/v1/jobs").json()["jobs"]) == 5  # small pages by default


def test_list_delay_hides_a_job_from_that_many_listings(client: httpx2.Client) -> None:
    older = create(client, "op_old").json()["job_id"]
    late = create(client, "op_late", list_delay=2).json()["job_id"]

    def listed() -> list[str]:
        return [j["job_id"] for j in client.get("/v1/jobs", params={"limit": 1}).json()["jobs"]]

    # A hidden job takes no place on the page: the older one fills it.
    assert listed() == [older]
    assert client.get("/v1/jobs", params={"client_reference": "op_late"}).json()["jobs"] == []
    assert listed() == [late]  # shown from the third listing that reached it on
    assert [j["job_id"] for j in client.get("/v1/jobs").json()["jobs"]] == [late, older]
    assert by_ref(client, "op_late") == [late]  # the counters never hide it


def test_create_delay_answers_after_the_job_exists(client: httpx2.Client) -> None:
    with pytest.raises(httpx2.ReadTimeout):
        client.post(
            "/v1/jobs",
            json={"kind": "report", "input": {"scenario": {"create_delay_ms": 6000}}},
            headers={"Idempotency-Key": "tok_slow"},
            # Ample time for the mock to store the job, even on a loaded machine: a client
            # that gives up before the mock read the request leaves no job (seen at 0.5 s).
            timeout=httpx2.Timeout(5, read=2.5),
        )
    deadline = time.monotonic() + budget(QUICK_S)
    while not client.get("/_mock/stats", params={"token": "tok_slow"}).json()["jobs"]:
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_state_file_from_before_the_listing_gets_its_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE jobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL UNIQUE,"
        " token TEXT NOT NULL, client_reference TEXT, kind TEXT NOT NULL, trace_id TEXT,"
        " scenario TEXT NOT NULL, state TEXT NOT NULL, completed INTEGER NOT NULL,"
        " total INTEGER NOT NULL, status_calls INTEGER NOT NULL DEFAULT 0,"
        " cancel_calls INTEGER NOT NULL DEFAULT 0, result_calls INTEGER NOT NULL DEFAULT 0,"
        " webhooks_sent INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL,"
        " updated_at TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO jobs (job_id, token, kind, scenario, state, completed, total, created_at,"
        " updated_at) VALUES ('job_x', 't', 'report', '{\"name\": \"fast\"}', 'queued', 0, 1,"
        " 'then', 'then')"
    )
    conn.commit()
    conn.close()
    store = MockStore(str(path))
    assert [j["job_id"] for j in store.page(limit=5, before_seq=None).jobs] == ["job_x"]
    assert store.get_job("job_x") is not None
    store.close()
