"""The app-wide context: everything a request or a step needs, passed in explicitly.

Tests control time and randomness through it. It sits low in `app.operations` (only
`hold`, `repository` and `domain` are below it), so the ledger, the driver and the
services all take it; the holder, policy, provider and result types it carries are named
for type checking only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from app.core.config import Settings
from app.core.db.database import Database
from app.core.db.db_clock import ClockHealth
from app.core.db.group_commit import GroupCommit
from app.core.http.ssrf import Resolver, system_resolver
from app.core.runtime.background import Background
from app.core.runtime.clock import Clock
from app.core.runtime.notify import Notifier
from app.operations.domain.estimate import EstimateCache
from app.operations.domain.events import DoneHandler

if TYPE_CHECKING:
    from app.operations.hold import Holder
    from app.policy.rules import Policy
    from app.providers.calls.client import ProviderClient
    from app.providers.language.profile import Profile
    from app.results.store import ResultStore


@dataclass
class AppContext:
    """The shared machinery of one process: database, provider client, clock, profiles."""

    db: Database
    client: ProviderClient
    profiles: dict[str, Profile]
    clock: Clock
    settings: Settings
    notifier: Notifier
    results: ResultStore
    worker_id: str
    # The in-process observer while its loop runs: the create request hands it the new
    # operation's first poll (app/operations/hold.py); None in a process without one.
    holder: Holder | None = None
    env: dict[str, str] = field(default_factory=dict)  # what profiles may reference, built once
    # Creates still running after their request answered (app/core/runtime/background.py).
    background: Background = field(default_factory=Background)
    # The clock's last measurement against the database's (app/core/db/db_clock.py); a
    # test's clock needs none and is always trusted.
    clock_health: ClockHealth = field(default_factory=ClockHealth)
    rng: random.Random = field(default_factory=random.Random)
    # The policy file's rules (docs/policy.md); None: no policy, every create goes at once.
    policy: Policy | None = None
    # Callback hosts are resolved through this (tests inject one; no outside DNS).
    resolver: Resolver = system_resolver
    # Run by the ledger, in the writer's transaction, when an operation is done (the
    # callback outbox's enqueue, given where the app is built).
    on_done: tuple[DoneHandler, ...] = ()
    # How long jobs of each provider and kind took, read at most once per cache period
    # (app/operations/services/estimates.py); bodies read it without a query.
    estimates: EstimateCache = field(default_factory=EstimateCache)
    # The steps' writes, a group per transaction under load (app/core/db/group_commit.py).
    writes: GroupCommit = field(init=False)
    # Provider answers waiting in this process for the database to come back
    # (`write.apply`, docs/operations.md "When storage or the database fails").
    answers_waiting: int = 0

    def __post_init__(self) -> None:
        self.writes = GroupCommit(self.db, max_group=self.settings.group_commit_max)

    def now(self) -> datetime:
        return self.clock.now()

    @property
    def lease_seconds(self) -> float:
        return self.settings.lease_seconds
