"""Collecting a finished job's result documents through the provider client.

Each document of the profile's ``result`` is fetched in order: its address from the
job id, the profile variables and the fields of the status answer (read first when
an address or the counts need it). JSON documents give the data, the claimed
checksum and failed items through ``pointers.result``; JSON Lines documents are
streamed line by line (app.providers.answers.documents), every line judged by the
document's item rules, and never read past their bound.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from app.providers.answers import extract
from app.providers.answers.documents import DocumentInfo, LineReader, item_counts
from app.providers.calls import prepare
from app.providers.calls.prepare import BuildError, Values
from app.providers.calls.types import CallResult, Exchange, Outcome
from app.providers.calls.wire import Wire
from app.providers.expressions import templates
from app.providers.language import counts as counting
from app.providers.language.adapter import counts_items
from app.providers.language.profile import Profile
from app.providers.language.spec_results import DocumentSpec

# Reads the job's status before its documents (the client's `status`; given in, so this
# module needs nothing of the client above the wire).
StatusRead = Callable[[Profile, str, str, str | None, str | None], Awaitable[CallResult]]


def needs_status(profile: Profile) -> bool:
    """Whether collecting needs a status answer first (addresses or counts come from it)."""
    fields = set(profile.pointers.fields)
    docs = profile.result.documents if profile.result else []
    used = set().union(*(templates.references(d.template_parts()) for d in docs))
    source = profile.counts.source if profile.counts is not None else None
    if source is None and counts_items(profile.hooks):
        source = "status"  # an adapter that counts reads the status answer
    return bool(used & fields) or source == "status"


def _address(doc: DocumentSpec, values: dict[str, Any]) -> tuple[str | None, bool]:
    """(the URL when the document is at one, whether its address can be filled)."""
    if doc.url is not None:
        url = templates.render_text(doc.url, values)
        return url, url is not None
    return None, templates.render_text(doc.path, values) is not None


async def collect(
    client: Wire,
    read_status: StatusRead,
    profile: Profile,
    known: dict[str, Any],
    trace_id: str,
    worker: str | None,
    status_url: str | None,
    status: CallResult | None,
) -> CallResult:
    """Every document of the profile's result, as one CallResult (see ProviderClient.result);
    ``known`` holds the job id and the operation's input and kind."""
    job_id = str(known["job_id"])
    assert profile.result is not None
    earlier: list[Exchange] = []
    fields: dict[str, Any] = {}
    found_counts = None
    if needs_status(profile):
        if status is None:
            status = await read_status(profile, job_id, trace_id, worker, status_url)
            earlier.append(status.exchange)
        if status.outcome is not Outcome.OK:
            return replace(status, extra_exchanges=earlier[:-1])
        fields, found_counts = status.fields, status.counts
    values = Values(profile, client.env, {**known, **fields})
    infos: list[DocumentInfo] = []
    readers: list[LineReader] = []
    json_doc: Any = None
    last: CallResult | None = None
    for doc in profile.result.documents:
        url, fillable = _address(doc, values.all())
        if not fillable:
            why = f"document {doc.name}: its address needs a value the status answer lacks"
            if doc.required:
                refused = client.refused("result", why)
                return replace(refused, extra_exchanges=earlier, documents=infos)
            infos.append(DocumentInfo(doc.name, doc.role, doc.format, skipped=why))
            continue
        try:
            prepared = prepare.request(profile, "result", doc, values, url=url)
        except BuildError as exc:
            refused = client.refused("result", str(exc))
            return replace(refused, extra_exchanges=earlier, documents=infos)
        reader = None
        if doc.format == "jsonl":
            reader = LineReader(doc, doc.max_bytes or profile.validation.max_bytes, profile.hooks)
        raw = await client.send(profile, prepared, trace_id, worker, reader)
        if reader is not None:
            ok = reader.error is None and not reader.truncated
            info = reader.info(prepared.url)
        else:
            ok = raw.json_ok
            size = len(raw.text.encode()) if raw.text else 0
            info = DocumentInfo(doc.name, doc.role, "json", prepared.url, size, complete=ok)
        outcome, note = client.outcome(raw, ok=ok, why=f"document {doc.name} is not JSON")
        last = client.base(raw, outcome, note)
        infos.append(info if outcome is Outcome.OK else replace(info, complete=False))
        if outcome is not Outcome.OK:
            error = extract.error_in(profile, raw.body if raw.json_ok else None)
            return replace(last, error=error, extra_exchanges=earlier, documents=infos)
        earlier.append(last.exchange)
        if reader is not None:
            readers.append(reader)
        elif json_doc is None and doc.role == "output":
            json_doc = raw.body
    assert last is not None or infos
    return _combine(profile, last, earlier, infos, readers, json_doc, found_counts)


def _combine(
    profile: Profile,
    last: CallResult | None,
    earlier: list[Exchange],
    infos: list[DocumentInfo],
    readers: list[LineReader],
    json_doc: Any,
    found_counts: counting.Counts | None,
) -> CallResult:
    spec = profile.counts
    if spec is not None and spec.source == "result":
        found_counts = extract.counts_of(profile, json_doc, "result")
    elif spec is not None and spec.source == "items":
        found_counts = item_counts(readers)
    failed: list[Any] = [item for r in readers for item in r.failed]
    if json_doc is not None:
        doc = extract.result_document(profile, json_doc)
        result, sha, failed = doc["result"], doc["result_sha256"], doc["failed_items"] + failed
    else:
        # JSON Lines: the items that succeeded, in document order; [] when none did (or the
        # provider wrote no output document), so the failed items still get recorded.
        result, sha = [line for r in readers for line in r.ok], None
    lines_ok = sum(len(r.ok) for r in readers)
    expected = found_counts.succeeded if found_counts is not None and readers else None
    if expected is not None and lines_ok < expected and spec is not None and spec.source != "items":
        # The counts promise more results than the documents hold: not collected yet.
        why = f"the documents hold {lines_ok} succeeded items; the provider counts {expected}"
        base = last or CallResult(Outcome.OK, _nothing_fetched(infos))
        return replace(
            base,
            outcome=Outcome.AMBIGUOUS,
            exchange=replace(base.exchange, error=why),
            counts=found_counts,
            documents=infos,
            extra_exchanges=earlier[:-1],
        )
    if last is None:  # every document was optional and absent
        last = CallResult(Outcome.OK, _nothing_fetched(infos))
        extra = earlier
    else:
        extra = earlier[:-1]
    return replace(
        last,
        result=result,
        result_sha256=sha,
        failed_items=failed,
        counts=found_counts,
        items=found_counts.as_items() if found_counts else None,
        documents=infos,
        extra_exchanges=extra,
    )


def _nothing_fetched(infos: list[DocumentInfo]) -> Exchange:
    names = ", ".join(i.name for i in infos)
    return Exchange(
        "result", "", "", None, {}, None, {}, None, 0.0, f"no document to fetch ({names})"
    )
