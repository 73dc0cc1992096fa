"""Lookups that find the job: paging three ways, the look-back window, the page limit,
and which profiles promise what (`single_create`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx2
import pytest
from pydantic import ValidationError

from app.providers.calls.types import Outcome
from app.providers.language.profile import Profile
from app.providers.language.words import SingleCreate
from tests.unit.provider_fakes import NOW, variant

LISTING = {
    "path": "/v1/batches",
    "by": "client_reference",
    "jobs": "/data",
    "job_id": "/id",
    "match": "/metadata/ref",
    "created_at": "/created",
    "page_size_param": "limit",
    "page_size": 2,
}


CURSOR = {"style": "cursor", "next": "/next_cursor", "param": "cursor"}


def listing(mock_profile: Profile, **lookup: Any) -> Profile:
    """A profile without a token whose lookup lists every job and matches the reference
    (paged by cursor unless told otherwise)."""
    return variant(
        mock_profile,
        idempotency={"location": "none"},
        client_reference={"location": "metadata", "pointer": "/metadata/ref"},
        lookup={**LISTING, "pagination": CURSOR, **lookup},
    )


def job(i: int, ref: str = "op_other", age_s: float = 0) -> dict[str, Any]:
    return {
        "id": f"b{i}",
        "metadata": {"ref": ref},
        "created": (NOW - timedelta(seconds=age_s)).isoformat(),
    }


def pages(*bodies: dict[str, Any]) -> Any:
    """Answers the n-th request with the n-th body (then 500s)."""
    served = iter(bodies)

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = next(served, None)
        return httpx2.Response(500) if body is None else httpx2.Response(200, json=body)

    return handler


@pytest.mark.anyio
async def test_cursor_pages_are_followed_and_every_match_kept(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile)
    client, rec = make_client(
        pages(
            {"data": [job(1), job(2)], "next_cursor": "c2"},
            {"data": [job(3, "op_1"), job(4)], "next_cursor": "c3"},
            {"data": [job(5, "op_1")], "next_cursor": None},
        )
    )
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert (found.outcome, found.job_ids, found.pages, found.stopped) == (
        Outcome.OK,
        ["b3", "b5"],
        3,
        "end",
    )
    assert [dict(r.url.params) for r in rec.requests] == [
        {"limit": "2"},
        {"limit": "2", "cursor": "c2"},
        {"limit": "2", "cursor": "c3"},
    ]
    assert [e.operation for e in found.exchanges] == ["lookup"] * 3


@pytest.mark.anyio
async def test_has_more_and_after_id(make_client: Any, mock_profile: Profile) -> None:
    profile = listing(
        mock_profile, pagination={"style": "after_id", "has_more": "/has_more", "param": "after"}
    )
    client, rec = make_client(
        pages(
            {"data": [job(1), job(2)], "has_more": True},
            {"data": [job(3, "op_1")], "has_more": False},
        )
    )
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert found.job_ids == ["b3"] and found.pages == 2
    assert rec.requests[1].url.params["after"] == "b2"  # the last listed id


@pytest.mark.anyio
async def test_next_url_is_followed_on_the_profiles_origin_only(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile, pagination={"style": "next_url", "next": "/next"})
    client, rec = make_client(
        pages(
            {"data": [job(1)], "next": "/v1/batches?page=2"},
            {"data": [job(2, "op_1")], "next": "https://elsewhere.test/v1/batches?page=3"},
        )
    )
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert str(rec.requests[1].url) == "http://mock.test/v1/batches?page=2"
    assert found.job_ids == ["b2"] and found.pages == 2  # the foreign link was not followed
    assert "Authorization" in rec.requests[1].headers


@pytest.mark.anyio
async def test_the_look_back_window_stops_a_newest_first_listing(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile)
    client, _ = make_client(
        pages(
            {"data": [job(1, age_s=10), job(2, age_s=50)], "next_cursor": "c2"},
            {"data": [job(3, age_s=4000), job(4, age_s=5000)], "next_cursor": "c3"},
            {"data": [job(5, "op_1")], "next_cursor": None},
        )
    )
    since = NOW - timedelta(seconds=3600)
    found = await client.lookup(
        profile, token=None, client_reference="op_1", trace_id="t", since=since
    )
    assert (found.outcome, found.job_ids, found.pages, found.stopped) == (
        Outcome.OK,
        [],
        2,
        "window",
    )


@pytest.mark.anyio
async def test_unix_seconds_count_for_the_window_too(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile)
    old = (NOW - timedelta(days=2)).timestamp()
    client, _ = make_client(pages({"data": [{"id": "b1", "created": old}], "next_cursor": "c"}))
    found = await client.lookup(
        profile, token=None, client_reference="op_1", trace_id="t", since=NOW - timedelta(days=1)
    )
    assert found.stopped == "window" and found.pages == 1


@pytest.mark.anyio
async def test_the_page_limit_bounds_an_endless_listing(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile, max_pages=3)
    client, rec = make_client(
        lambda r: httpx2.Response(200, json={"data": [job(1)], "next_cursor": "again"})
    )
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert (found.outcome, found.pages, found.stopped) == (Outcome.OK, 3, "max_pages")
    assert len(rec.requests) == 3


@pytest.mark.anyio
async def test_a_failed_page_fails_the_lookup_and_keeps_every_exchange(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = listing(mock_profile)
    client, _ = make_client(pages({"data": [job(1, "op_1")], "next_cursor": "c2"}))
    found = await client.lookup(profile, token=None, client_reference="op_1", trace_id="t")
    assert (found.outcome, found.stopped, found.pages) == (Outcome.AMBIGUOUS, "error", 2)
    assert [e.status_code for e in found.exchanges] == [200, 500]


@pytest.mark.anyio
async def test_a_query_token_goes_in_the_create_url(
    make_client: Any, mock_profile: Profile
) -> None:
    profile = variant(mock_profile, idempotency={"location": "query", "param": "request_id"})
    client, rec = make_client(
        lambda r: httpx2.Response(202, json={"job_id": "j", "state": "queued"})
    )
    await client.create(profile, "report", {}, token="tok 7", client_reference="op", trace_id="t")
    assert rec.requests[0].url.params["request_id"] == "tok 7"
    assert "Idempotency-Key" not in rec.requests[0].headers


def test_single_create_is_derived_from_the_profile(mock_profile: Profile) -> None:
    assert mock_profile.single_create is SingleCreate.TOKEN
    assert listing(mock_profile).single_create is SingleCreate.LOOKUP
    blind = variant(mock_profile, idempotency={"location": "none"}, lookup=None)
    assert blind.single_create is SingleCreate.NONE
    query = variant(mock_profile, idempotency={"location": "query", "param": "rid"})
    assert query.single_create is SingleCreate.TOKEN


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"idempotency": {"location": "none"}}, "lookup by token needs a token"),
        ({"client_reference": {"location": "none"}, "lookup": LISTING}, "needs client_reference"),
        ({"idempotency": {"location": "query"}}, "needs a param"),
        ({"lookup": {**LISTING, "pagination": {"style": "cursor", "next": "/n"}}}, "needs param"),
        ({"lookup": {**LISTING, "pagination": {"style": "after_id", "param": "a"}}}, "has_more"),
        ({"lookup": {**LISTING, "page_size": 5, "page_size_param": None}}, "go together"),
    ],
)
def test_impossible_lookups_are_refused(
    mock_profile: Profile, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        variant(mock_profile, **changes)
