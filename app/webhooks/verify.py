"""Signature checks for provider webhooks, as the provider's profile declares them.

Pure: the caller passes the clock's `now`, the resolved secret and the raw body.
Standard Webhooks: the library computes the expected signature; the timestamp is
checked here against `now` and the profile's tolerance, because the library's own
check is fixed at 5 minutes of the wall clock (tests and replays need the
injected clock). HMAC: a hex HMAC-SHA256 of the raw body in a named header,
optionally prefixed `sha256=`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

from app.providers.language.profile import WebhookSpec


class SignatureError(Exception):
    """The webhook is not authentic or not fresh; the message is safe to show."""


class SecretInvalid(Exception):
    """The configured secret cannot be used (a configuration error, not the sender's)."""


def verify(
    spec: WebhookSpec,
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime,
) -> None:
    """Raise `SignatureError` unless `body` is signed as `spec` says and is fresh."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if spec.scheme == "standard":
        _verify_standard(secret, lowered, body, now, spec.tolerance_seconds)
    elif spec.scheme == "hmac":
        assert spec.signature_header is not None  # the profile validator guarantees it
        _verify_hmac(secret, lowered.get(spec.signature_header.lower(), ""), body)
    else:
        raise SignatureError("this provider has no webhook scheme configured")


def _verify_standard(
    secret: str, headers: Mapping[str, str], body: bytes, now: datetime, tolerance: float
) -> None:
    msg_id = headers.get("webhook-id", "")
    stamp = headers.get("webhook-timestamp", "")
    signatures = headers.get("webhook-signature", "")
    if not (msg_id and stamp and signatures):
        raise SignatureError("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = datetime.fromtimestamp(int(stamp), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise SignatureError("webhook-timestamp is not a unix time in seconds") from None
    # Both directions: an old message may be a replay, a future one a skewed signer.
    if abs((now - sent_at).total_seconds()) > tolerance:
        raise SignatureError("webhook-timestamp is outside the accepted tolerance")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise SignatureError("the body is not UTF-8") from None
    try:
        signer = Webhook(secret)
    except Exception:  # malformed base64 or empty: never echo the value
        raise SecretInvalid("the webhook secret is not a valid Standard Webhooks secret") from None
    expected = _sig_bytes(signer.sign(msg_id, sent_at, text).split(",", 1)[1])
    for versioned in signatures.split(" "):
        version, _, sig = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(expected, _sig_bytes(sig)):
            return
    raise SignatureError("no matching signature")


def _sig_bytes(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _verify_hmac(secret: str, header: str, body: bytes) -> None:
    given = header.strip().removeprefix("sha256=").lower()
    if not given:
        raise SignatureError("missing signature header")
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), given.encode()):
        raise SignatureError("no matching signature")
