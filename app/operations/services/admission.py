"""Policy before effect: a create's limits, budget and approval gate, decided before
anything is written or sent (docs/policy.md).

`admit` runs in the create's own transaction, before its insert: a refusal raises (429,
nothing recorded, nothing sent); otherwise it says what the create costs and which rule,
if any, holds it for an operator's approval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.core.db.txn import Txn
from app.core.http.errors import ApiError
from app.operations.repository import gate as repo
from app.policy import cost as costs
from app.policy.counters import REFUSALS
from app.policy.rules import Policy, Rule, Subject, matches, same_scope

RATE_WINDOW = timedelta(minutes=1)  # `creates_per_minute` counts creates in this window
NOT_STARTED = "NOT started and nothing recorded"  # every refusal's first words


@dataclass(frozen=True)
class Admission:
    """A create the policy lets through: its cost and the rule that gates it, if any."""

    cost: float
    gate_rule: str | None = None


def day_start(now: datetime) -> datetime:
    """The UTC day a budget counts in."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


async def admit(
    txn: Txn, policy: Policy | None, s: Subject, input_: Any, now: datetime
) -> Admission:
    """Check every matching rule in order; the first limit passed refuses the create."""
    if policy is None:
        return Admission(cost=0.0)
    cost = costs.create_cost(policy, s, input_)
    chosen = [(name, rule) for name, rule in policy.named() if matches(rule, s)]
    counting = [
        (n, r)
        for n, r in chosen
        if r.max_in_flight is not None or r.creates_per_minute is not None or r.budget
    ]
    if counting:
        await repo.lock_key(txn, s.key)
        since = min(day_start(now), now - RATE_WINDOW)
        seen = await repo.key_operations(txn, s.key, since=since)
        for name, rule in counting:
            mine = [o for o in seen if same_scope(rule, o.provider, o.kind, o.labels)]
            _check(name, rule, mine, cost, now)
    for name, rule in chosen:
        if rule.approval == "always" or (
            rule.approval is not None and cost > rule.approval.above_cost
        ):
            return Admission(cost=cost, gate_rule=name)
    return Admission(cost=cost)


def _check(
    name: str, rule: Rule, mine: list[repo.KeyOperation], cost: float, now: datetime
) -> None:
    if rule.max_in_flight is not None:
        n = sum(o.in_flight for o in mine)
        if n >= rule.max_in_flight:
            raise _refusal(
                name,
                "max_in_flight",
                f"this key already has {n} operations in flight under policy rule {name!r}, "
                f"the most it allows ({rule.max_in_flight}). Send the same request again, "
                "with the same Idempotency-Key, once one of them is done (GET "
                "/v1/operations?in_flight=true lists them).",
                {"limit": rule.max_in_flight, "in_flight": n},
                retry_after=None,
            )
    if rule.creates_per_minute is not None:
        recent = sorted(o.created_at for o in mine if o.created_at > now - RATE_WINDOW)
        if len(recent) >= rule.creates_per_minute:
            # A place frees when enough of the oldest creates leave the window.
            seconds: int | None = None
            if rule.creates_per_minute:
                free_at = recent[-rule.creates_per_minute] + RATE_WINDOW
                seconds = max(1, math.ceil((free_at - now).total_seconds()))
            raise _refusal(
                name,
                "creates_per_minute",
                f"this key started {len(recent)} creates in the last minute under policy "
                f"rule {name!r}, the most it allows ({rule.creates_per_minute}). Send the "
                f"same request again, with the same Idempotency-Key, in {seconds or 60} seconds "
                "(Retry-After).",
                {"limit": rule.creates_per_minute, "in_last_minute": len(recent)},
                retry_after=seconds,
            )
    if rule.budget is not None:
        today = day_start(now)
        spent = sum(o.cost for o in mine if o.created_at >= today)
        if spent + cost > rule.budget.per_day:
            until = max(1, math.ceil((today + timedelta(days=1) - now).total_seconds()))
            raise _refusal(
                name,
                "budget",
                f"this create costs {cost:g} cost units and this key has spent {spent:g} of "
                f"the {rule.budget.per_day:g} policy rule {name!r} allows per UTC day. Send "
                f"the same request again, with the same Idempotency-Key, when the day's "
                f"budget starts over in {until} seconds (Retry-After), or ask for a "
                "larger budget.",
                {"budget": rule.budget.per_day, "spent": spent, "cost": cost},
                retry_after=until,
            )


def _refusal(
    rule: str,
    limit: str,
    why: str,
    details: dict[str, Any],
    *,
    retry_after: int | None,
) -> ApiError:
    """429: NOT started, why, and when to send it again; nothing was written or sent."""
    REFUSALS.labels(rule, limit).inc()
    code = {
        "max_in_flight": "policy_in_flight_limit",
        "creates_per_minute": "policy_rate_limit",
        "budget": "policy_budget_exhausted",
    }[limit]
    err = ApiError(
        429,
        code,
        f"{NOT_STARTED}: {why} Nothing was sent to the provider.",
        {"rule": rule, **details, "retry_after_seconds": retry_after},
    )
    if retry_after is not None:
        err.headers["Retry-After"] = str(retry_after)
    return err
