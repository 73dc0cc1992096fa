"""The lookup endpoint of a profile: how jobgate lists a provider's jobs to find the one an
operation made (by token or client reference), and how a person searches by hand. The
paging rules that run a lookup are in app/providers/calls/lookup.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import Field, model_validator

from app.providers.expressions import templates
from app.providers.language.spec_base import Endpoint, Pointer, SpecModel, TemplateText


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

    list_call: TemplateText | None = Field(
        None, examples=["GET https://translation.googleapis.com/v3/projects/{project}/operations"]
    )
    """The call that lists jobs, for a person to make: a Template over the variables
    (``{project}``), filled when the words are written; an unset one is shown as its
    name in capitals (``PROJECT``)."""
    console_url: TemplateText | None = Field(None, examples=["https://console.example.com/batches"])
    """Where the provider's console shows jobs (a Template over the variables, too)."""

    def filled(self, variables: Mapping[str, str | None]) -> tuple[str | None, str | None]:
        """(list call, console URL) with the variables in them."""
        shown = {name: value or name.upper() for name, value in variables.items()}
        return (
            None if self.list_call is None else templates.render_text(self.list_call, shown),
            None if self.console_url is None else templates.render_text(self.console_url, shown),
        )
