"""Prometheus counters of the policy, by rule (served at `/metrics`)."""

from __future__ import annotations

from prometheus_client import Counter

REFUSALS = Counter(
    "jobgate_policy_refusals",
    "Creates the policy refused (nothing recorded), by rule and limit.",
    ["rule", "limit"],
)
APPROVALS = Counter(
    "jobgate_policy_approvals",
    "Approval gate events by rule: required, approved, denied, expired.",
    ["rule", "decision"],
)
