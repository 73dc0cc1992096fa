"""The Grafana dashboard (deploy/grafana/) and the Prometheus alert rules
(deploy/prometheus/) name only metrics that `/metrics` serves: a renamed metric would
leave a panel empty and an alert silent, so every name is checked against a scrape
after operations ran."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Gateway

ROOT = Path(__file__).resolve().parents[2]
GRAFANA = ROOT / "deploy" / "grafana" / "jobgate.json"
ALERTS = ROOT / "deploy" / "prometheus" / "jobgate-alerts.yml"
NAME = re.compile(r"\bjobgate_[a-z_]+\b")
SUFFIXES = {
    "counter": ("_total", "_created"),
    "histogram": ("_bucket", "_sum", "_count", "_created"),
}


def served(text: str) -> set[str]:
    """Every sample name a scrape can hold, from its families' names and types."""
    names = set()
    for family in text_string_to_metric_families(text):
        names.add(family.name)
        names.update(family.name + s for s in SUFFIXES.get(family.type, ()))
    return names


def exprs() -> list[str]:
    dash = json.loads(GRAFANA.read_text())
    found = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    rules = yaml.safe_load(ALERTS.read_text())
    found += [r["expr"] for g in rules["groups"] for r in g["rules"]]
    return found


async def test_every_metric_the_dashboard_and_alerts_name_is_served(gateway: Gateway) -> None:
    op_id = (await gateway.start({"name": "fast"})).json()["operation_id"]
    await gateway.run_until_done(op_id)
    r = await gateway.http.get("/metrics")
    assert r.status_code == 200
    have = served(r.text)
    named = {n for e in exprs() for n in NAME.findall(e)}
    assert len(named) >= 9, named
    assert named <= have, sorted(named - have)
    # The dashboard covers the figures /dashboard draws.
    joined = " ".join(exprs())
    for figure in ("jobgate_operation_seconds_bucket", "jobgate_operation_seconds_count",
                   "jobgate_operations", "jobgate_needs_attention"):  # fmt: skip
        assert figure in joined, figure


def test_every_alert_says_what_it_means() -> None:
    rules = yaml.safe_load(ALERTS.read_text())["groups"][0]["rules"]
    assert len(rules) >= 6
    for rule in rules:
        assert rule["alert"].startswith("Jobgate") and rule["expr"].strip()
        assert rule["annotations"]["summary"] and rule["labels"]["severity"] in ("page", "ticket")


def test_the_operation_seconds_histogram_is_documented() -> None:
    doc = (ROOT / "docs" / "operations.md").read_text()
    assert "| `jobgate_operation_seconds` | histogram |" in doc
