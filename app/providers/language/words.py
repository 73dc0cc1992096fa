"""The words a profile maps a provider onto: the classes of remote states, and how a
provider's single remote job per operation is ensured."""

from __future__ import annotations

from enum import StrEnum


class SingleCreate(StrEnum):
    """How a provider's single remote job per operation is ensured (docs/single-create.md)."""

    TOKEN = "token"  # the provider honours the idempotency token: a replay is safe
    LOOKUP = "lookup"  # no token; the job is found again by the stored client reference
    NONE = "none"  # neither: an unconfirmed create goes to a human, never resent


class RemoteClass(StrEnum):
    """The provider's state names mapped onto the classes jobgate reasons about."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    SUCCEEDED_PARTIAL = "succeeded_partial"
    FAILED = "failed"
    CANCELLED = "cancelled"
