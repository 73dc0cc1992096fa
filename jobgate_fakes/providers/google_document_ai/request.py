"""A BatchProcessRequest body, parsed as Google's REST front end parses proto3 JSON, then checked.

Two layers refuse a request with 400 INVALID_ARGUMENT (a google.rpc.BadRequest detail
names the field), and neither makes an operation:

- the front end's proto3 JSON parsing: an unknown field name, a value of the wrong
  type, or two members of one oneof (`inputDocuments.gcsPrefix` and `.gcsDocuments`).
  Field names are accepted in lowerCamelCase or as the proto spells them (snake_case),
  as every proto3 JSON parser does; messages name fields the proto way.
- Document AI's own checks: an input source with at least one and at most 5,000
  documents (the documented limit per batch request), `gs://bucket/object` URIs, a
  `mimeType` per listed document, an output `gcsUri`, and labels as the proto says
  (keys and values at most 63 characters of lowercase letters, digits, `_` and `-`,
  international characters allowed; keys start with a letter; values may be empty).

What a document's `mimeType` is never refuses the request: an unsupported type is
that document's failure, reported in the operation (model.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jobgate_fakes.providers.base import FakeError
from jobgate_fakes.providers.googleapis import GoogleErrors

MAX_DOCUMENTS = 5000  # "files per batch process request" on the Document AI limits page
PREFIX_DOCUMENTS = 3  # objects the fake "finds" under a gcsPrefix (it has no bucket to list)
_LABEL_MAX = 63
_GCS_OBJECT = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9]/.+$")
_GCS_PREFIX = re.compile(r"^gs://[a-z0-9][a-z0-9._-]{1,221}[a-z0-9](/.*)?$")

# Each message of the request: JSON field name -> a scalar kind or a nested message
# (name, fields); a one-item list is a repeated field. Unlisted names are unknown.
Schema = dict[str, Any]
_SHARDING: Schema = {"pagesPerShard": "TYPE_INT32", "pagesOverlap": "TYPE_INT32"}
_GCS_OUTPUT: Schema = {
    "gcsUri": "TYPE_STRING",
    "fieldMask": "TYPE_STRING",
    "shardingConfig": ("DocumentOutputConfig.GcsOutputConfig.ShardingConfig", _SHARDING),
}
_GCS_DOCUMENT: Schema = {"gcsUri": "TYPE_STRING", "mimeType": "TYPE_STRING"}
_INPUT: Schema = {
    "gcsPrefix": ("GcsPrefix", {"gcsUriPrefix": "TYPE_STRING"}),
    "gcsDocuments": ("GcsDocuments", {"documents": [("GcsDocument", _GCS_DOCUMENT)]}),
}
_REQUEST: Schema = {
    "name": "TYPE_STRING",
    "inputDocuments": ("BatchDocumentsInputConfig", _INPUT),
    "documentOutputConfig": (
        "DocumentOutputConfig",
        {"gcsOutputConfig": ("DocumentOutputConfig.GcsOutputConfig", _GCS_OUTPUT)},
    ),
    "skipHumanReview": "TYPE_BOOL",
    "processOptions": "ProcessOptions",  # accepted as any object; not modelled
    "labels": "MAP",
}
_SCALARS: dict[str, Callable[[Any], bool]] = {
    "TYPE_STRING": lambda x: isinstance(x, str),
    "TYPE_BOOL": lambda x: isinstance(x, bool),
    "TYPE_INT32": lambda x: isinstance(x, int) and not isinstance(x, bool),
    "MAP": lambda x: isinstance(x, dict) and all(isinstance(v, str) for v in x.values()),
}
_ONEOFS = {"inputDocuments": ("source", ("gcsPrefix", "gcsDocuments"))}
_PACKAGE = "type.googleapis.com/google.cloud.documentai.v1."


@dataclass(frozen=True)
class BatchRequest:
    """What the fake needs of a valid request."""

    documents: list[tuple[str, str]]  # (gcsUri, mimeType), in input order
    output_uri: str  # gcsOutputConfig.gcsUri, without a trailing slash
    labels: dict[str, str]


def parse(body: dict[str, Any], errors: GoogleErrors) -> BatchRequest:
    """The request, or the 400 Google answers for it."""
    request = _message(body, _REQUEST, "", errors)
    inputs = request.get("inputDocuments") or {}
    if "gcsDocuments" in inputs:
        documents = _listed(inputs["gcsDocuments"].get("documents") or [], errors)
    elif "gcsPrefix" in inputs:
        documents = _prefixed(inputs["gcsPrefix"].get("gcsUriPrefix", ""), errors)
    else:
        raise errors.invalid("inputDocuments must set gcsDocuments or gcsPrefix.", "inputDocuments")
    out = request.get("documentOutputConfig", {}).get("gcsOutputConfig", {}).get("gcsUri", "")
    if not _GCS_PREFIX.match(out):
        raise errors.invalid(
            f"Invalid output Cloud Storage URI {out!r}: give a gs://bucket/prefix/ directory.",
            "documentOutputConfig.gcsOutputConfig.gcsUri",
        )
    labels = request.get("labels", {})
    _check_labels(labels, errors)
    return BatchRequest(documents, out.rstrip("/"), dict(labels))


def _listed(items: list[dict[str, Any]], errors: GoogleErrors) -> list[tuple[str, str]]:
    where = "inputDocuments.gcsDocuments.documents"
    if not items:
        raise errors.invalid("At least one input document is required.", where)
    if len(items) > MAX_DOCUMENTS:
        raise errors.invalid(
            f"A batch process request takes at most {MAX_DOCUMENTS} documents; "
            f"this one has {len(items)}.",
            where,
        )
    for i, item in enumerate(items):
        if not _GCS_OBJECT.match(item.get("gcsUri", "")):
            raise errors.invalid(
                f"Invalid Cloud Storage URI {item.get('gcsUri', '')!r}: give gs://bucket/object.",
                f"{where}[{i}].gcsUri",
            )
        if not item.get("mimeType"):
            raise errors.invalid("mimeType is required.", f"{where}[{i}].mimeType")
    return [(item["gcsUri"], item["mimeType"]) for item in items]


def _prefixed(prefix: str, errors: GoogleErrors) -> list[tuple[str, str]]:
    if not _GCS_PREFIX.match(prefix):
        raise errors.invalid(
            f"Invalid Cloud Storage URI prefix {prefix!r}: give gs://bucket/prefix.",
            "inputDocuments.gcsPrefix.gcsUriPrefix",
        )
    return [(f"{prefix}{i}.pdf", "application/pdf") for i in range(PREFIX_DOCUMENTS)]


def _check_labels(labels: dict[str, str], errors: GoogleErrors) -> None:
    for key, value in labels.items():
        if not (0 < len(key) <= _LABEL_MAX and _label_letter(key[0]) and _label_text(key)):
            raise errors.invalid(
                f"Invalid label key {key!r}: at most {_LABEL_MAX} lowercase letters, digits, "
                "_ or -, starting with a letter.",
                "labels",
            )
        if not (len(value) <= _LABEL_MAX and _label_text(value)):
            raise errors.invalid(
                f"Invalid value for label {key!r}: at most {_LABEL_MAX} lowercase letters, "
                "digits, _ or -.",
                f"labels[{key!r}]",
            )


def _label_letter(char: str) -> bool:
    return char.isalpha() and not char.isupper()  # international letters without case pass


def _label_text(text: str) -> bool:
    return all(c in "_-" or c.isdigit() or _label_letter(c) for c in text)


def _message(value: Any, schema: Schema, path: str, errors: GoogleErrors) -> dict[str, Any]:
    """`value` parsed as a message of `schema`: keys made lowerCamelCase, nested ones too."""
    parsed: dict[str, Any] = {}
    for key, item in value.items():
        name = _camel(key)
        if name not in schema:
            raise _parse_error(
                f'Invalid JSON payload received. Unknown name "{key}"{_at(path)}: '
                "Cannot find field.",
                path,
                errors,
            )
        if name in parsed:
            raise _parse_error(
                f'Invalid JSON payload received. Duplicate field "{key}"{_at(path)}.',
                path,
                errors,
            )
        parsed[name] = _value(item, schema[name], _join(path, _snake(name)), errors)
    for members_of, (oneof, members) in _ONEOFS.items():
        if path == _snake(members_of) and sum(m in parsed for m in members) > 1:
            second = [m for m in members if m in parsed][1]
            raise _parse_error(
                f"Invalid JSON payload received. Oneof field '{oneof}' is already set. "
                f"Cannot set '{_snake(second)}'",
                path,
                errors,
            )
    return parsed


def _value(item: Any, kind: Any, path: str, errors: GoogleErrors) -> Any:
    if isinstance(kind, list):
        if not isinstance(item, list):
            raise _type_error(path, f"{_PACKAGE}{kind[0][0]}", item, errors)
        return [_value(x, kind[0], f"{path}[{i}]", errors) for i, x in enumerate(item)]
    if isinstance(kind, tuple):
        if not isinstance(item, dict):
            raise _type_error(path, f"{_PACKAGE}{kind[0]}", item, errors)
        return _message(item, kind[1], path, errors)
    expected = _SCALARS.get(kind, _is_object)
    if not expected(item):
        raise _type_error(path, kind if kind.startswith("TYPE_") else _PACKAGE + kind, item, errors)
    return item


def _is_object(item: Any) -> bool:
    return isinstance(item, dict)


def _type_error(path: str, kind: str, item: Any, errors: GoogleErrors) -> FakeError:
    shown = json.dumps(item) if not isinstance(item, str) else f'"{item}"'
    return _parse_error(f"Invalid value at '{path}' ({kind}), {shown}", path, errors)


def _parse_error(message: str, path: str, errors: GoogleErrors) -> FakeError:
    return errors.invalid(message, path or None)


def _at(path: str) -> str:
    return f" at '{path}'" if path else ""


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
