"""`/dashboard` through HTTP: operations per hour by status, the time from intent to end
per provider and kind, failure and attention rates and the slowest in flight, drawn as
SVG on the server (no script, nothing fetched); the figures are the operations' own."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2

from app.auth import service as keys
from app.operations.domain.states import State
from app.operations.repository.figures import Brief
from app.operations.services import figures
from tests.conftest import Gateway
from tests.integration.test_views import _gateway_with


async def _start(gw: Gateway, name: str) -> str:
    r = await gw.start({"name": name})
    assert r.status_code == 202, r.text
    return str(r.json()["operation_id"])


def counts_by_status(page: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for status, n in re.findall(r'data-status="([a-z_]+)" data-count="(\d+)"', page):
        found[status] = found.get(status, 0) + int(n)
    return found


async def test_the_dashboard_draws_the_operations_figures(gateway: Gateway) -> None:
    ended = [await _start(gateway, n) for n in ("fast", "fast", "fast", "reject", "corrupt_result")]
    running = await _start(gateway, "never_finishes")
    for op_id in ended:
        await gateway.run_until_done(op_id)
    r = await gateway.http.get("/dashboard")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert "script" not in r.headers["content-security-policy"].replace("script-src", "")
    assert "<script" not in page and not re.search(r'(src|href)="(https?:)?//', page)
    assert page.count("<svg") == 2
    assert counts_by_status(page) == {
        "succeeded": 3, "failed": 1, "needs_attention": 1, "processing": 1
    }  # fmt: skip
    rates = page[page.index('id="rates"') : page.index('id="slowest"')]
    row = rates[rates.index(">mock</a> / report") :].split("</tr>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[:4] == ["6", "5", '20% <span class="muted small">(1)</span>',
                         '20% <span class="muted small">(1)</span>']  # fmt: skip
    assert len(re.findall(r'data-quantile="p(50|90|99)"', page)) == 3
    slowest = page[page.index('id="slowest"') :]
    assert running in slowest and not any(op_id in slowest for op_id in ended)


async def test_the_dashboard_needs_an_operator(
    database_url: str, mock_url: str, mock_client: httpx2.Client, tmp_path: Path
) -> None:
    async with _gateway_with(database_url, mock_url, mock_client, tmp_path, auth="keys") as gw:
        assert (await gw.http.get("/dashboard")).status_code == 401
        _, agent = await keys.create(
            gw.ctx.db, f"a-{uuid.uuid4().hex[:6]}", "agent", gw.clock.now()
        )
        r = await gw.http.get("/dashboard", headers={"Authorization": f"Bearer {agent}"})
        assert r.status_code == 403
        _, op = await keys.create(
            gw.ctx.db, f"o-{uuid.uuid4().hex[:6]}", "operator", gw.clock.now()
        )
        r = await gw.http.get("/dashboard", headers={"Authorization": f"Bearer {op}"})
        assert r.status_code == 200 and "Slowest in flight" in r.text


def brief(n: int, state: State, created: datetime, took: float, **kw: Any) -> Brief:
    values: dict[str, Any] = {"provider": "p", "kind": "k", "outcome": None} | kw
    return Brief(f"op_{n}", values["provider"], values["kind"], state, values["outcome"],
                 created, created + timedelta(seconds=took))  # fmt: skip


def test_quantiles_and_hours_come_from_the_rows() -> None:
    now = datetime(2026, 12, 6, 12, 30, tzinfo=UTC)
    rows = [brief(i, State.SUCCEEDED, now - timedelta(minutes=10), float(i)) for i in range(1, 101)]
    rows.append(brief(101, State.FAILED, now - timedelta(hours=3, minutes=1), 1.0))
    rows.append(brief(102, State.OBSERVING, now - timedelta(hours=20), 0.0))  # outside
    out = figures.summarize(rows, [], now, hours=12)
    [lane] = out.lanes
    assert lane.quantiles == (50.0, 90.0, 99.0)  # nearest rank over 1..100 s (and one 1 s)
    assert lane.ended == 101 and lane.failed == 1 and lane.created == 102
    assert out.hours[-1] == now.replace(minute=0) and len(out.hours) == 12
    assert out.per_hour[-1] == {"succeeded": 100} and out.per_hour[-4] == {"failed": 1}
    assert sum(sum(c.values()) for c in out.per_hour) == 101
