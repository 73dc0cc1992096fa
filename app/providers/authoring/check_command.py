"""`jobgate profiles check FILE [--input JSON]`: validate a profile and show the requests
it would send, built by the same code the client uses (app.providers.calls.prepare), with the
credential masked and nothing sent anywhere."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.providers.calls import prepare
from app.providers.calls.prepare import BuildError, Prepared, Values
from app.providers.calls.wire import SENSITIVE_HEADERS
from app.providers.expressions import templates
from app.providers.language.loader import ProfileError, load_profile
from app.providers.language.profile import Profile
from app.providers.language.secrets import REDACTED

SAMPLE = {
    "token": "TOKEN",
    "client_reference": "op_01JEXAMPLE0000000000000000",
    "job_id": "JOB_ID",
    "reason": "REASON",
}


Shown = tuple[str | None, str | None, str, str]  # (header, query param, masked value, where)


def _credential(profile: Profile, env: Mapping[str, str]) -> Shown:
    """Where the credential goes (a header or a query parameter), its masked value and
    where it comes from: never the value itself."""
    spec = profile.credentials
    if spec is None:
        return None, None, "", "none"
    state = "set" if spec.resolve(env) is not None else "NOT SET"
    note = "optional" if spec.optional else "calls are refused while it is not set"
    where = f"query parameter {spec.param}" if spec.param else f"header {spec.header_name}"
    header = None if spec.param else spec.header_name
    return header, spec.param, spec.shown(), f"{spec.describe()}, sent as {where} ({state}; {note})"


def _block(title: str, prepared: Prepared, credential: Shown, trace: str | None) -> list[str]:
    header, param, shown, _ = credential
    lines = [f"== {title} ==", f"{prepared.method} {prepared.url}"]
    params = dict(prepared.params or {})
    if param is not None and prepared.credentials:
        params[param] = shown
    if params:
        lines.append(f"  query: {json.dumps(params, ensure_ascii=False)}")
    headers = dict(prepared.headers)
    if trace is not None:
        headers[trace] = "TRACE_ID"
    for name in headers:  # whatever fills them (a variable, say), these carry credentials
        if name.lower() in SENSITIVE_HEADERS:
            headers[name] = REDACTED
    if header is not None and prepared.credentials:
        headers[header] = shown
    lines += [f"  {k}: {v}" for k, v in headers.items()]
    if prepared.has_body:
        body = json.dumps(prepared.json_body, indent=2, ensure_ascii=False)
        lines += ["  body:", *("    " + line for line in body.splitlines())]
    for name, value in (prepared.data or {}).items():
        lines.append(f"  multipart {name}: {value}")
    for name, (filename, content, ctype) in (prepared.files or {}).items():
        lines.append(f"  multipart {name}: file {filename} ({ctype}, {len(content)} bytes)")
        lines += ["    " + line for line in content.decode("utf-8", "replace").splitlines()[:20]]
    return [*lines, ""]


def _nothing_created(profile: Profile) -> str:
    """The create answers that let the create go again (docs/single-create.md)."""
    rules = profile.idempotency.nothing_created
    if not rules:
        return "none listed (only a create that never reached the provider is sent again)"
    listed = "; ".join(r.describe() for r in rules)
    return f"{listed} (the create is sent again after these, within the create deadline)"


def _samples(names: set[str]) -> dict[str, str]:
    return {n: n.upper() for n in names}


def describe(profile: Profile, env: Mapping[str, str], sample_input: Any = None) -> list[str]:
    """The report: what the profile is, and every request it would send."""
    cred = _credential(profile, env)
    out = [
        f"profile {profile.name}: valid (profile language v2)",
        f"base_url: {profile.base_url}",
        f"single_create: {profile.single_create.value}",
        f"nothing_created: {_nothing_created(profile)}",
        f"credential: {cred[3]}",
        f"client reference: {profile.client_reference.where()}",
        "",
    ]

    def show(title: str, build: Any) -> None:
        try:
            out.extend(_block(title, build(), cred, profile.trace_header))
        except BuildError as exc:
            out.extend([f"== {title} ==", f"  cannot be built: {exc}", ""])

    for kind, spec in profile.kinds.items():
        given = sample_input if sample_input is not None else spec.example
        values = Values(profile, env, {**SAMPLE, "input": given if given is not None else {}})
        values.known["kind"] = kind
        steps = spec.create.prepare
        for i, step in enumerate(steps, start=1):
            title = f"kind {kind}: prepare {step.name} (step {i} of {len(steps) + 1})"
            show(title, lambda s=step, v=values: prepare.request(profile, "prepare", s, v))
            values.known.update(_samples(set(step.capture)))
        show(f"kind {kind}: create", lambda v=values, s=spec: prepare.create(profile, s.create, v))
        follow = spec.create.status_url
        if follow is not None:
            where = f"header {follow.header}" if follow.header else f"body {follow.pointer}"
            out.extend([f"  (status is then read at the URL in the create answer's {where})", ""])
    kind, spec0 = next(iter(profile.kinds.items()))
    given = sample_input if sample_input is not None else spec0.example
    # Calls about the job may name the operation's input and kind (the first kind's here).
    plain = Values(profile, env, {**SAMPLE, "input": given if given is not None else {},
                                  "kind": kind})  # fmt: skip
    show("status", lambda: prepare.request(profile, "status", profile.status, plain))
    if profile.cancel is not None:
        cancel = profile.cancel
        show("cancel", lambda: prepare.request(profile, "cancel", cancel, plain))
    fields = Values(profile, env, {**plain.known, **_samples(set(profile.pointers.fields))})
    for doc in profile.result.documents if profile.result else []:
        title = f"result document {doc.name} ({doc.role}, {doc.format})"
        if doc.url is not None:
            used = ", ".join(sorted(templates.references(doc.url)))
            out.extend([f"== {title} ==", f"GET the URL in the status answer's {used}",
                        "  (credentials only if it is on the profile's origins; else refused)",
                        ""])  # fmt: skip
            continue
        show(title, lambda d=doc: prepare.request(profile, "result", d, fields))
    lookup = profile.lookup
    if lookup is not None:
        from app.providers.calls import lookup as lk

        key = SAMPLE["token"] if lookup.by == "token" else SAMPLE["client_reference"]
        first = lk.first_page(lookup, key)
        show("lookup (first page)", lambda: prepare.request(
            profile, "lookup", lookup, plain, params=first.params))  # fmt: skip
    return out


def run(path: Path, env: Mapping[str, str], input_json: str | None) -> tuple[int, str]:
    """Exit code and text for `jobgate profiles check`."""
    try:
        profile = load_profile(path, env)
    except ProfileError as exc:
        return 2, "\n".join(["invalid profile:", *(f"  {p}" for p in exc.problems)])
    sample: Any = None
    if input_json is not None:
        try:
            sample = json.loads(input_json)
        except ValueError as exc:
            return 2, f"--input is not JSON: {exc}"
    return 0, "\n".join(describe(profile, env, sample)).rstrip() + "\n"
