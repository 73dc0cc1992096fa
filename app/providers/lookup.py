"""Lookups that find the job: the lookup endpoint's schema and the pure paging rules.

A lookup lists the provider's jobs (by token, or every job matched locally by the
client reference), follows pagination (a next cursor, has_more + an after id, or a
next URL on the profile's own origin), and stops at the last page, at the first
page entirely older than the look-back window, or at ``max_pages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import Field, model_validator

from app.providers import pointers
from app.providers.http_util import as_str
from app.providers.spec_base import Endpoint, Pointer, SpecModel


class Pagination(SpecModel):
    """How a listing asks for its next page.

    ``cursor``: the body's ``next`` pointer names a cursor, sent back as ``param``.
    ``after_id``: while ``has_more`` is true, ``param`` carries the last id (``last_id``
    pointer, else the last listed job's id). ``next_url``: ``next`` points at the next
    page's URL, followed only on the profile's own origin (credentials go nowhere else).
    """

    style: Literal["cursor", "after_id", "next_url"] = Field(examples=["after_id"])
    """How the next page is asked for."""
    next: Pointer | None = Field(None, examples=["/next_page_token"])
    """``cursor``: the next cursor; ``next_url``: the next page's URL."""
    param: str | None = Field(None, examples=["after"])
    """The query parameter carrying the cursor or the last id."""
    has_more: Pointer | None = Field(None, examples=["/has_more"])
    """``after_id``: whether there is a next page."""
    last_id: Pointer | None = Field(None, examples=["/last_id"])
    """``after_id``: the last id of the page (else the last listed job's id)."""

    @model_validator(mode="after")
    def _complete(self) -> Pagination:
        needs = {
            "cursor": ("next", "param"),
            "after_id": ("param", "has_more"),
            "next_url": ("next",),
        }
        missing = [f for f in needs[self.style] if getattr(self, f) is None]
        if missing:
            raise ValueError(f"style {self.style} needs {' and '.join(missing)}")
        return self


class LookupEndpoint(Endpoint):
    """Reconciliation: find jobs by the create token or by the client reference.

    A listing is paged (``pagination``) up to ``max_pages``; newest first, paging also
    stops at the first page entirely older than the operation's intent time minus
    ``skew_seconds`` (needs ``created_at``): a job made for it cannot be older. Path,
    headers and query are Templates over the variables; docs/single-create.md says when
    a lookup runs.
    """

    by: Literal["token", "client_reference"] = Field(examples=["client_reference"])
    """What identifies the operation's job: the create token or the client reference."""
    param: str | None = Field(None, examples=["metadata.jobgate_ref"])
    """A query parameter carrying that value (a server-side filter); give this, ``match``,
    or both."""
    jobs: Pointer = "/jobs"
    """The list of jobs in the answer."""
    job_id: Pointer = "/job_id"
    """The id inside each listed job."""
    match: Pointer | None = Field(None, examples=["/metadata/jobgate_ref"])
    """Inside each listed job: the client reference, to filter locally."""
    created_at: Pointer | None = Field(None, examples=["/created_at"])
    """Inside each listed job: its creation time (ISO 8601 or Unix seconds)."""
    newest_first: bool = True
    """The listing is newest first."""
    page_size_param: str | None = Field(None, examples=["limit"])
    """The query parameter asking for a page size (with ``page_size``)."""
    page_size: Annotated[int, Field(gt=0)] | None = Field(None, examples=[100])
    """The page size to ask for."""
    pagination: Pagination | None = Field(
        None, examples=[{"style": "after_id", "has_more": "/has_more", "param": "after"}]
    )
    """How to ask for the next page; none: one page."""
    max_pages: Annotated[int, Field(ge=1, le=1000)] = 10
    """The most pages read."""
    skew_seconds: Annotated[float, Field(ge=0)] = 300.0
    """Clock skew allowed when paging stops at jobs older than the operation."""

    @model_validator(mode="after")
    def _how(self) -> LookupEndpoint:
        if self.param is None and self.match is None:
            raise ValueError("give param (server-side query) or match (local filter)")
        if self.match is not None and self.by != "client_reference":
            raise ValueError("match filters by client_reference only")
        if (self.page_size is None) != (self.page_size_param is None):
            raise ValueError("page_size and page_size_param go together")
        return self


class ManualSearch(SpecModel):
    """How a person finds a job at the provider by hand; named in `create_unconfirmed`."""

    list_call: str | None = Field(
        None, examples=["GET https://api.example.com/v1/batches?limit=100"]
    )
    """The call that lists jobs, for a person to make."""
    console_url: str | None = Field(None, examples=["https://console.example.com/batches"])
    """Where the provider's console shows jobs."""


@dataclass(frozen=True)
class PageRequest:
    """How to ask for one page: query parameters, or a whole URL (a provider's next link)."""

    params: dict[str, str]
    url: str | None = None


def first_page(ep: LookupEndpoint, key: str) -> PageRequest:
    """The first page: the server-side filter (if any) and the page size (if any)."""
    params: dict[str, str] = {}
    if ep.param:
        params[ep.param] = key
    if ep.page_size_param and ep.page_size:
        params[ep.page_size_param] = str(ep.page_size)
    return PageRequest(params)


def listed(ep: LookupEndpoint, body: Any) -> list[Any] | None:
    """The jobs on a page, or None when the body has no job list."""
    jobs = pointers.get(body, ep.jobs)
    return jobs if isinstance(jobs, list) else None


def matching_ids(ep: LookupEndpoint, jobs: list[Any], client_reference: str | None) -> list[str]:
    """Ids of the listed jobs that belong to the operation (all of them when the server
    filtered and the profile names no local `match`)."""
    ids: list[str] = []
    for job in jobs:
        if ep.match is not None and pointers.get(job, ep.match) != client_reference:
            continue
        job_id = as_str(pointers.get(job, ep.job_id))
        if job_id is not None:
            ids.append(job_id)
    return ids


def next_page(
    ep: LookupEndpoint, base_url: str, asked: PageRequest, body: Any, jobs: list[Any]
) -> PageRequest | None:
    """The request for the page after this one, or None when this was the last."""
    pg = ep.pagination
    if pg is None or not jobs:
        return None
    if pg.style == "cursor":
        cursor = as_str(pointers.get(body, pg.next))
        return PageRequest({**asked.params, pg.param or "": cursor}) if cursor else None
    if pg.style == "after_id":
        if pointers.get(body, pg.has_more) is not True:
            return None
        last = as_str(pointers.get(body, pg.last_id)) if pg.last_id else None
        last = last or as_str(pointers.get(jobs[-1], ep.job_id))
        return PageRequest({**asked.params, pg.param or "": last}) if last else None
    link = as_str(pointers.get(body, pg.next))
    url = same_origin(base_url, link) if link else None
    return PageRequest({}, url) if url else None


def same_origin(base_url: str, link: str) -> str | None:
    """`link` resolved against the profile's base URL, or None when it leaves that origin
    (a next link must never carry the credential to another host)."""
    url = urljoin(base_url.rstrip("/") + "/", link)
    a, b = urlsplit(base_url), urlsplit(url)
    if (a.scheme, a.hostname, a.port) != (b.scheme, b.hostname, b.port) or b.username:
        return None
    return url


def created_at(value: Any) -> datetime | None:
    """A listed job's creation time: ISO 8601 text or Unix seconds; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def before_window(ep: LookupEndpoint, jobs: list[Any], since: datetime | None) -> bool:
    """True when a newest-first page holds only jobs created before `since`: every later
    page is older still, so none can be the operation's job."""
    if since is None or ep.created_at is None or not ep.newest_first or not jobs:
        return False
    times = [created_at(pointers.get(job, ep.created_at)) for job in jobs]
    return all(t is not None and t < since for t in times)
