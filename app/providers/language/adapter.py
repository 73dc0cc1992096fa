"""A profile's Python adapter: hooks for what a profile's YAML cannot say.

The profile language stays declarative and small. A provider whose answers need a
loop, a count over an array, or a body the templates cannot build names an adapter:

```yaml
adapter: google_document_ai   # loads google_document_ai.py beside the profile file
```

The file sits in the same directory as the profile (the bundled profiles, or
``JOBGATE_PROFILES_DIR``) and defines ``ADAPTER``, an instance of a subclass of
`Adapter`. Every hook is optional: one that returns ``None`` (as the base class does)
leaves the decision to the profile's YAML. Hooks are pure functions of the answer they
are given: no I/O, no clock, no state kept between calls, and quick (they run on the
gateway's event loop); `sign` alone is given the time, since a request signature
names it. An exception in a hook is a bug in the adapter: in `create_body` the create
is not sent and the operation ends `failed` (`request_build_failed`); in `sign` the
request is not sent (a refusal, as for a request that cannot be built); anywhere else
the step that called it fails, is retried, and after `max_step_failures` in a row the
operation stalls for a person (docs/profiles.md, "Python adapters").

Loading Python from the profiles directory runs it with the gateway's rights, like the
gateway's own code: that directory is configuration, writable by operators only.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from app.providers.language.counts import Counts
from app.providers.language.words import RemoteClass

NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


@dataclass(frozen=True)
class SigningRequest:
    """A request as it will be sent, for `Adapter.sign`: every header is final (the
    credential's included), `url` carries the query, `body` is the exact bytes."""

    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes
    secret: str | None  # the profile's credential, revealed (None without one)
    now: datetime  # this host's UTC time, for the signature's date


class AdapterError(Exception):
    """The adapter named by a profile cannot be loaded; the message says why."""


class Adapter:
    """The hooks a profile's adapter may override; each returns None to defer to the YAML."""

    def classify(self, answer: Any, counts: Counts | None) -> RemoteClass | None:
        """The remote class of a status (or create) answer, before the state rules.
        ``counts`` are the answer's item counts as read (by `count` or the profile)."""
        return None

    def count(self, answer: Any) -> Counts | None:
        """Item counts of the answer the profile reads counts from (``counts.source``:
        the status answer by default, or the JSON result document). An adapter that
        overrides this counts items, so its jobs are never itemless (the outcome table)."""
        return None

    def result(self, document: Any) -> Any:
        """The result data of a JSON result document (or of the status answer, when the
        result is inline), instead of ``pointers.result.data``."""
        return None

    def failed_items(self, document: Any) -> list[dict[str, Any]] | None:
        """The items of a JSON result document (or inline result) that did not succeed,
        each a JSON object (``id``, ``status``, ``error`` are what `/errors` shows best),
        instead of ``pointers.result.failed_items``."""
        return None

    def create_body(self, kind: str, body: Any, input: Any) -> Any:
        """The create body to send for ``kind``: ``body`` is what the profile's template
        built (the input itself without a template). The token and the client reference
        are set into the returned body afterwards, where the profile says."""
        return None

    def sign(self, request: SigningRequest) -> Mapping[str, str] | None:
        """Headers to add to ``request`` just before it is sent: a signature over its
        method, URL, headers and body (an HMAC, a cloud's request signing) that the
        profile's credential schemes cannot say. Their values are treated as secrets:
        never in history, logs or `profiles check` output."""
        return None

    def judge_line(self, document: str, line: Any) -> bool | None:
        """Whether one JSON Lines line of ``document`` is an item that succeeded, instead
        of the document's ``items`` rules."""
        return None


DEFAULT = Adapter()


def counts_items(adapter: Adapter) -> bool:
    """Whether the adapter counts items (overrides `Adapter.count`)."""
    return type(adapter).count is not Adapter.count


def load(directory: Path, name: str, profile: str) -> Adapter:
    """Load ``directory/name.py`` and return its ``ADAPTER``; `AdapterError` says why not."""
    if not NAME.match(name):
        raise AdapterError(f"{name!r} is not an adapter name (lower-case letters, digits, _)")
    path = directory / f"{name}.py"
    if not path.is_file():
        raise AdapterError(f"no file {path} (an adapter lives beside its profile)")
    module_name = f"jobgate_adapters.{profile}.{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise AdapterError(f"{path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # any error in the operator's file is reported, not raised
        sys.modules.pop(module_name, None)
        raise AdapterError(f"{path} failed to load: {type(exc).__name__}: {exc}") from None
    found = getattr(module, "ADAPTER", None)
    if not isinstance(found, Adapter):
        raise AdapterError(f"{path} must define ADAPTER, an instance of an Adapter subclass")
    return found
