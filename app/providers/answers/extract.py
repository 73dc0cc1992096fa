"""What a provider answer says, read through the profile: pure, no I/O.

The job id (from the body or a header), the state and its class (state rules over
the body and its counts), progress, the provider's error, its poll and retry hints,
the named fields later templates use, the URLs to follow, and an inline result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.providers.answers import bounds
from app.providers.answers.state_rules import classify
from app.providers.answers.values import as_int, as_seconds, as_str, follow, present
from app.providers.expressions import pointers
from app.providers.expressions.pointers import MISSING
from app.providers.language import counts as counting
from app.providers.language.counts import Counts
from app.providers.language.profile import Profile
from app.providers.language.spec_requests import CreateEndpoint, ValueSource
from app.providers.language.words import RemoteClass


@dataclass(frozen=True)
class Progress:
    completed: int | None = None
    total: int | None = None


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@dataclass(frozen=True)
class Seen:
    """The profile's reading of one answer."""

    job_id: str | None = None
    state: str | None = None
    remote_class: RemoteClass | None = None
    progress: Progress | None = None
    error: dict[str, Any] | None = None
    poll_hint: float | None = None
    remote_time: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    counts: Counts | None = None
    status_url: str | None = None
    cancel_url: str | None = None
    inline: Any = MISSING  # the inline result document, if the answer has one
    unreadable: str | None = None  # a value no reader can keep (progress 10^30): why


def source(src: ValueSource, body: Any, headers: Mapping[str, str]) -> str | None:
    """A value from the body or a header, cut by the source's pattern."""
    if src.pointer is not None:
        value = as_str(pointers.get(body, src.pointer))
    else:
        value = headers.get(src.header or "")
    if value is None:
        return None
    if src.pattern is not None:
        match = re.search(src.pattern, value)
        value = match.group(1) if match else None
    return value or None


def _url(src: ValueSource | None, body: Any, headers: Mapping[str, str], base: str) -> str | None:
    found = source(src, body, headers) if src is not None else None
    return follow(base, found) if found else None


def error_of(value: Any) -> dict[str, Any] | None:
    """The provider's error as an object (a bare message becomes ``{"message": ...}``),
    bounded (`bounds.error`): this is where a provider's error enters jobgate."""
    value = present(value)
    if isinstance(value, dict):
        return bounds.error(value)
    return bounds.error({"message": value}) if value else None


def _said(value: Any) -> list[str]:
    """The words of one error value: an object's message, a list's elements, a text."""
    if isinstance(value, dict):
        message = value.get("message")
        return [str(message)] if message else [json.dumps(value, ensure_ascii=False)[:500]]
    if isinstance(value, list):
        return [text for item in value for text in _said(item)]
    return [str(value)] if value not in (None, "") else []


def error_in(profile: Profile, body: Any) -> dict[str, Any] | None:
    """The provider's error in an answer, at ``pointers.error``: one pointer's value as
    it is; several pointers' values joined into one message (the first object among
    them keeps its other members, e.g. its ``code``)."""
    where = profile.pointers.error
    if not isinstance(where, list):
        return error_of(pointers.get(body, where))
    found = [v for p in where if (v := present(pointers.get(body, p))) not in (None, "", [], {})]
    if not found:
        return None
    if len(found) == 1:
        return error_of(found[0]) if not isinstance(found[0], list) else error_of(_join(found))
    return error_of(_join(found))


def _join(found: list[Any]) -> dict[str, Any]:
    first = next((v for v in found if isinstance(v, dict)), {})
    texts = [t.strip().rstrip(".") for v in found for t in _said(v) if t.strip()]
    return {**first, "message": "; ".join(dict.fromkeys(texts))}


def seen(
    profile: Profile,
    body: Any,
    headers: Mapping[str, str],
    request_url: str,
    create: CreateEndpoint | None = None,
) -> Seen:
    """Read one answer (create, status, cancel) through the profile."""
    p = profile.pointers
    job_id = as_str(pointers.get(body, p.job_id))
    if create is not None and create.job_id is not None:
        job_id = source(create.job_id, body, headers)
    found_counts = counts_of(profile, body, "status")
    state, cls = classify(
        body,
        state=p.state,
        states=profile.states,
        rules=profile.state_rules,
        counts=found_counts,
    )
    if body is not None and (said := profile.hooks.classify(body, found_counts)) is not None:
        cls = said
    completed = as_int(pointers.get(body, p.progress_completed))
    total = as_int(pointers.get(body, p.progress_total))
    unreadable = bounds.number_problem("progress.completed", completed) or bounds.number_problem(
        "progress.total", total
    )
    if unreadable is not None:  # never kept: it would not fit any column
        completed = total = None
    fields = {
        name: value
        for name, pointer in p.fields.items()
        if (value := present(pointers.get(body, pointer))) is not None
    }
    return Seen(
        job_id=job_id,
        state=bounds.word(state),
        remote_class=cls,
        progress=None if completed is None and total is None else Progress(completed, total),
        error=error_in(profile, body),
        poll_hint=as_seconds(pointers.get(body, p.poll_hint)),
        remote_time=bounds.word(as_str(pointers.get(body, p.remote_time))),
        fields=fields,
        counts=found_counts,
        status_url=_url(create.status_url if create else None, body, headers, request_url),
        cancel_url=_url(create.cancel_url if create else None, body, headers, request_url),
        inline=pointers.get(body, p.inline_result),
        unreadable=unreadable,
    )


def counts_of(profile: Profile, body: Any, source: str) -> Counts | None:
    """The item counts of an answer of ``source`` (status | result), when the profile reads
    its counts from that kind of answer: the adapter's count first, then ``counts``."""
    spec = profile.counts
    if (spec.source if spec is not None else "status") != source or body is None:
        return None
    found = profile.hooks.count(body)
    if found is not None:
        return found
    return counting.read(spec, body) if spec is not None else None


def result_document(profile: Profile, doc: Any) -> dict[str, Any]:
    """Data, claimed checksum and failed items of a JSON result document (the adapter's
    `result` and `failed_items` first, then ``pointers.result``)."""
    rp = profile.pointers.result
    data = profile.hooks.result(doc)
    if data is None:
        data = present(pointers.get(doc, rp.data))
    failed = profile.hooks.failed_items(doc)
    if failed is None:
        failed = pointers.get(doc, rp.failed_items)
    return {
        "result": data,
        "result_sha256": as_str(pointers.get(doc, rp.sha256)),
        "failed_items": [bounds.bounded(f) for f in failed] if isinstance(failed, list) else [],
    }


def _wild(value: Any, tokens: list[str]) -> Any:
    # "*" matches any element of an array: the first one where the rest resolves.
    if not tokens:
        return value
    head, rest = tokens[0], tokens[1:]
    if head == "*" and isinstance(value, list):
        for item in value:
            found = _wild(item, rest)
            if found is not MISSING:
                return found
        return MISSING
    found = pointers.get(value, "/" + pointers.escape(head))
    return MISSING if found is MISSING else _wild(found, rest)


def retry_hint(profile: Profile, body: Any) -> float | None:
    """The provider's own retry delay in an error answer (seconds), per ``retry_hint``."""
    hint = profile.retry_hint
    if hint is None or body is None:
        return None
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in hint.pointer.split("/")[1:]]
    value = _wild(body, tokens)
    if hint.format == "duration" and isinstance(value, str):
        match = _DURATION.match(value)
        return float(match.group(1)) if match else None
    return as_seconds(value)
