"""Counters a fake keeps so tests can prove one remote job per logical operation.

Counting happens at the provider, never in jobgate's tables: every create call is
counted under each client reference it carried (metadata pair, custom_id, label,
webhook URL or display name, depending on the API), even a call that a fault
refused, and every job it made is listed under the same references.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any


class Stats:
    """Create calls and jobs per client reference; status/cancel/list calls per job."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything (POST /_fake/reset)."""
        self.creates_by_reference: Counter[str] = Counter()
        self.jobs_by_reference: defaultdict[str, list[str]] = defaultdict(list)
        self.jobs: dict[str, Counter[str]] = {}
        self.list_calls = 0
        self.create_calls = 0
        self.other_calls: Counter[str] = Counter()  # calls about no job, by op

    def create_call(self, references: Iterable[str]) -> None:
        """One create call arrived carrying these client references."""
        self.create_calls += 1
        for ref in set(references):
            self.creates_by_reference[ref] += 1

    def job_created(self, job_id: str, references: Iterable[str]) -> None:
        """A create call made `job_id`."""
        self.jobs.setdefault(job_id, Counter())
        for ref in sorted(set(references)):
            self.jobs_by_reference[ref].append(job_id)

    def call(self, job_id: str, op: str) -> None:
        """One call of `op` (status, cancel, results, ...) about an existing job."""
        self.jobs.setdefault(job_id, Counter())[f"{op}_calls"] += 1

    def op_call(self, op: str) -> None:
        """One call of an op about no job (e.g. Replicate's webhook secret)."""
        self.other_calls[op] += 1

    def list_call(self) -> None:
        """One call of the provider's list endpoint."""
        self.list_calls += 1

    def to_json(self, reference: str | None = None) -> dict[str, Any]:
        """The `GET /_fake/stats` body, optionally limited to one client reference."""
        refs = [reference] if reference is not None else sorted(self.creates_by_reference)
        job_ids = (
            self.jobs_by_reference.get(reference, []) if reference is not None else list(self.jobs)
        )
        return {
            "create_calls": self.create_calls,
            "creates_by_reference": {r: self.creates_by_reference[r] for r in refs},
            "jobs_by_reference": {r: list(self.jobs_by_reference.get(r, [])) for r in refs},
            "jobs": {j: dict(self.jobs.get(j, {})) for j in job_ids},
            "list_calls": self.list_calls,
            "calls": dict(self.other_calls),
        }
