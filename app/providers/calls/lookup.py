"""Lookups that find the job: the lookup endpoint's schema and the pure paging rules.

A lookup lists the provider's jobs (by token, or every job matched locally by the
client reference), follows pagination (a next cursor, has_more + an after id, or a
next URL on the profile's own origin), and stops at the last page, at the first
page entirely older than the look-back window, or at ``max_pages``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from app.providers.answers.values import as_str
from app.providers.expressions import pointers
from app.providers.language.spec_lookup import LookupEndpoint


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
