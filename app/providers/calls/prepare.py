"""Turning a profile and the values of one call into the exact request to send.

Pure: no I/O and no credential (the client adds it, and `jobgate profiles check`
shows where it would go). Used by the client for every call and by the check
command, so what `check` prints is what would be sent.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from app.providers.calls.http_util import quote_job_id
from app.providers.expressions import pointers, templates
from app.providers.expressions.pointers import MISSING
from app.providers.language.profile import Profile
from app.providers.language.spec_base import Endpoint
from app.providers.language.spec_requests import BodyEndpoint, CreateEndpoint, MultipartFile

FileParts = dict[str, tuple[str, bytes, str]]


class BuildError(Exception):
    """The request cannot be built (a value it needs is absent, the input does not fit the
    template, a URL leaves the profile's origins); nothing is sent. Safe to record."""


@dataclass(frozen=True)
class Prepared:
    """One request, ready to send but for the credential, trace and worker headers."""

    operation: str  # create | prepare | status | cancel | result | lookup | webhook_secret
    method: str
    url: str
    headers: dict[str, str]
    params: dict[str, str] | None = None
    json_body: Any = None
    has_body: bool = False
    data: dict[str, str] | None = None  # multipart text fields
    files: FileParts | None = None  # multipart file parts
    credentials: bool = True  # False: an origin the profile lets see no credential

    def describe(self) -> dict[str, Any]:
        """A JSON-ready picture of the request (the check command prints it)."""
        out: dict[str, Any] = {"method": self.method, "url": self.url, "headers": self.headers}
        if self.params:
            out["query"] = self.params
        if self.has_body:
            out["body"] = self.json_body
        if self.data is not None or self.files is not None:
            files = {k: {"filename": f, "content_type": t, "content": c.decode("utf-8", "replace")}
                     for k, (f, c, t) in (self.files or {}).items()}  # fmt: skip
            out["multipart"] = {**(self.data or {}), **files}
        return out


@dataclass
class Values:
    """What a call's templates may name: profile variables plus the call's own values."""

    profile: Profile
    env: Mapping[str, str]
    known: dict[str, Any] = field(default_factory=dict)

    def all(self) -> dict[str, Any]:
        return {**self.profile.var_values(self.env), **self.known}


def _render(template: Any, values: dict[str, Any], where: str) -> Any:
    try:
        return templates.render(template, values)
    except templates.TemplateError as exc:
        raise BuildError(f"{where}: {exc}") from None


def _fixed(part: Mapping[str, str], values: dict[str, Any], where: str) -> dict[str, str]:
    rendered = _render(dict(part), values, where)
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in rendered.items()}


def _path(ep: Endpoint, values: dict[str, Any], where: str) -> str:
    try:
        path = templates.render_text(ep.path, values, quote=quote_job_id)
    except templates.TemplateError as exc:
        raise BuildError(f"{where}.path: {exc}") from None
    if path is None:
        missing = sorted(templates.references(ep.path) - {k for k, v in values.items() if v})
        raise BuildError(f"{where}.path needs {', '.join(missing) or 'a value'}, which is absent")
    return path


def request(
    profile: Profile,
    operation: str,
    ep: Endpoint,
    values: Values,
    *,
    url: str | None = None,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Prepared:
    """The request for ``ep``: at ``url`` (a link the provider gave) or base URL + path.

    A followed URL keeps its own query and gets the profile-wide headers only on an
    origin allowed to see credentials; any other origin is refused here.
    """
    filled = values.all()
    origin = "own"
    query: dict[str, str] = {}
    sent_headers = {"Accept": "application/json"}
    if url is None:
        url = profile.base_url.rstrip("/") + _path(ep, filled, operation)
        query.update(_fixed(profile.query, filled, "query"))
        query.update(_fixed(ep.query, filled, f"{operation}.query"))
    else:
        found = profile.origin_of(url)
        if found is None:
            raise BuildError(
                f"{operation}: refused to call {url}: it is outside the profile's origins "
                "(base_url and origins), so it gets neither the credential nor a request"
            )
        origin = found
        # The endpoint's own query goes along (status.query at a create answer's status
        # URL), except a parameter the provider's URL already carries.
        own = {k for k, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}
        extra = _fixed(ep.query, filled, f"{operation}.query")
        params = {**{k: v for k, v in extra.items() if k not in own}, **(params or {})}
    if origin != "anonymous":
        sent_headers.update(_fixed(profile.headers, filled, "headers"))
    sent_headers.update(_fixed(ep.headers, filled, f"{operation}.headers"))
    sent_headers.update(headers or {})
    if params:
        if urlsplit(url).query:  # httpx2 would replace the link's own query: merge it here
            parts = urlsplit(url)
            merged = urlencode([*parse_qsl(parts.query, keep_blank_values=True), *params.items()])
            url = urlunsplit(parts._replace(query=merged))
        else:
            query.update(params)
    body: Any = None
    has_body = False
    data: dict[str, str] | None = None
    files: FileParts | None = None
    if isinstance(ep, BodyEndpoint) and ep.multipart is not None:
        data, files = _multipart(ep.multipart, filled, operation)
    elif ep.body is not None:  # any call may have a body (a status read by POST)
        body, has_body = _render(ep.body, filled, f"{operation}.body"), True
        body = {} if body is MISSING else body
    return Prepared(
        operation, ep.method, url, sent_headers, query or None, body, has_body, data, files,
        credentials=origin != "anonymous",
    )  # fmt: skip


def _multipart(
    form: Mapping[str, str | MultipartFile], values: dict[str, Any], where: str
) -> tuple[dict[str, str], FileParts]:
    data: dict[str, str] = {}
    files: FileParts = {}
    for name, part in form.items():
        if isinstance(part, str):
            text = _render(part, values, f"{where}.multipart.{name}")
            if text is not MISSING:
                data[name] = text if isinstance(text, str) else json.dumps(text)
            continue
        fallback = f"{name}.jsonl" if part.jsonl is not None else name
        filename = templates.render_text(part.filename, values) or fallback
        if part.jsonl is not None:
            rows = _render(part.jsonl, values, f"{where}.multipart.{name}.jsonl")
            if not isinstance(rows, list) or not rows:
                raise BuildError(f"{where}.multipart.{name}.jsonl needs a non-empty array")
            try:
                content = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            except (TypeError, ValueError) as exc:
                raise BuildError(f"{where}.multipart.{name}: {exc}") from None
        else:
            content = templates.render_text(part.text or "", values) or ""
        files[name] = (filename, content.encode("utf-8"), part.content_type)
    return data, files


def create(
    profile: Profile,
    ep: CreateEndpoint,
    values: Values,
    *,
    url: str | None = None,
) -> Prepared:
    """The create request: the body template (or the input as it is), the token and the
    client reference where the profile puts them."""
    known = values.known
    idem, ref = profile.idempotency, profile.client_reference
    prepared = request(profile, "create", ep, values, url=url)
    body = prepared.json_body
    if ep.body is None and ep.multipart is None:
        body = copy.deepcopy(known.get("input"))
    if ep.multipart is None:
        body = _adapted(profile, str(known.get("kind") or ""), body, known.get("input"))
    headers = dict(prepared.headers)
    params = dict(prepared.params or {})
    reference = None
    if ref.location != "none" and known.get("client_reference") is not None:
        reference = templates.render_text(ref.format, values.all())
    try:
        if idem.location == "header" and idem.header:
            headers[idem.header] = str(known["token"])
        elif idem.location == "query" and idem.param:
            params[idem.param] = str(known["token"])
        elif idem.location == "body" and idem.pointer:
            pointers.set_value(body, idem.pointer, known["token"])
        if reference is not None:
            if ref.location in ("body", "metadata") and ref.pointer:
                pointers.set_value(body, ref.pointer, reference)
            elif ref.location == "header" and ref.header:
                headers[ref.header] = reference
            elif ref.location == "query" and ref.param:
                params[ref.param] = reference
    except (pointers.PointerError, TypeError, AttributeError) as exc:
        raise BuildError(f"create: the body does not fit the profile: {exc}") from None
    has_body = prepared.has_body or (ep.multipart is None and body is not None)
    return Prepared(
        "create", prepared.method, prepared.url, headers, params or None, body, has_body,
        prepared.data, prepared.files, prepared.credentials,
    )  # fmt: skip


def _adapted(profile: Profile, kind: str, body: Any, input: Any) -> Any:
    """The adapter's create body, when it builds one; its failure is a build error (nothing
    is sent)."""
    try:
        built = profile.hooks.create_body(kind, copy.deepcopy(body), copy.deepcopy(input))
    except Exception as exc:  # the adapter's bug: refused here, never half-sent
        raise BuildError(f"create: the adapter's create_body failed: {type(exc).__name__}: "
                         f"{exc}") from None  # fmt: skip
    return body if built is None else built
