"""Everything a step needs, passed in explicitly so tests control time and randomness."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from app.core.clock import Clock
from app.core.config import Settings
from app.core.db import Database
from app.observer.notify import Notifier
from app.providers.client import ProviderClient
from app.providers.profile import Profile
from app.results.store import ResultStore


@dataclass
class Engine:
    """The shared machinery of one process: database, provider client, clock, profiles."""

    db: Database
    client: ProviderClient
    profiles: dict[str, Profile]
    clock: Clock
    settings: Settings
    notifier: Notifier
    results: ResultStore
    worker_id: str
    env: dict[str, str] = field(default_factory=dict)  # what profiles may reference, built once
    rng: random.Random = field(default_factory=random.Random)

    def now(self) -> datetime:
        return self.clock.now()

    @property
    def lease_seconds(self) -> float:
        return self.settings.lease_seconds
