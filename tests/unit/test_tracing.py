"""app/core/obs/tracing.py on its own: off records and imports nothing, on refuses without
its packages, and a provider call's span id is the one its `traceparent` carried."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from app.core.config import Settings
from app.core.obs import logs, telemetry, tracecontext, tracing
from app.providers.language.profile import Profile
from tests.unit.provider_fakes import SECRET, answer

TRACE = "0af7651916cd43dd8448eb211c80319c"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def memory() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracing.export_to(exporter)
    try:
        yield exporter
    finally:
        tracing.export_to(None)
        tracing.shutdown()


def every_hook() -> None:
    telemetry.transition(
        "op_1", f"tr_{TRACE}", None, "create_pending", actor="agent:a", cause="c", version=0
    )
    telemetry.refused("op_1", f"tr_{TRACE}", "observing", "create_pending", "not allowed")
    telemetry.provider_call(
        "mock", "status", method="GET", target="http://x/v1/jobs/1", status=200,
        outcome="ok", seconds=0.01, trace_id=f"tr_{TRACE}",
    )  # fmt: skip


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JOBGATE_", "OTEL_"))}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_off_by_default_records_nothing(memory: InMemorySpanExporter) -> None:
    assert Settings().otel is False
    tracing.setup(Settings().otel)
    assert not tracing.enabled()
    every_hook()
    tracing.shutdown()
    assert memory.get_finished_spans() == ()


def test_on_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOBGATE_OTEL", "on")
    assert Settings().otel is True
    monkeypatch.setenv("JOBGATE_OTEL", "off")
    assert Settings().otel is False


def test_off_imports_nothing_of_opentelemetry(tmp_path: Path) -> None:
    """A gateway started and stopped with the hooks called: jobgate imported no module of
    OpenTelemetry beyond what FastAPI and the MCP SDK import themselves (the API only)."""
    done = run_python(
        f"""
        import asyncio, sys
        import fastapi, fastapi.routing, mcp, starlette.middleware.errors  # their own imports
        before = {{m for m in sys.modules if m.startswith("opentelemetry")}}
        from app.core.obs import telemetry, tracing
        from app.core.config import Settings
        from app.main import create_app
        from app import cli

        settings = Settings(database_url="sqlite:///{tmp_path}/j.db", data_dir="{tmp_path}",
                            auth="dev")
        app = create_app(settings, run_observer=False)

        async def main():
            async with app.router.lifespan_context(app):
                assert not tracing.enabled()
                telemetry.transition("op", "tr_" + "1" * 32, None, "create_pending",
                                     actor="a", cause="c", version=0)
                telemetry.provider_call("mock", "status", method="GET", target="t",
                                        status=200, outcome="ok", seconds=0.1)

        asyncio.run(main())
        after = {{m for m in sys.modules if m.startswith("opentelemetry")}}
        print(sorted(after - before))
        print(sorted(m for m in after if m.startswith(("opentelemetry.sdk",
                                                       "opentelemetry.exporter"))))
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "[]"], done.stdout


@pytest.mark.parametrize("command", ["serve", "observe"])
def test_on_without_the_packages_refuses_in_one_line(command: str, tmp_path: Path) -> None:
    done = run_python(
        f"""
        import sys
        for name in ("opentelemetry.sdk", "opentelemetry.sdk.trace",
                     "opentelemetry.exporter.otlp.proto.http.trace_exporter"):
            sys.modules[name] = None  # what an install without the `otel` extra looks like
        from app.cli import main
        sys.exit(main(["{command}"]))
        """,
        JOBGATE_OTEL="on",
        JOBGATE_DATA_DIR=str(tmp_path),
        JOBGATE_LOG_FORMAT="json",
    )
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("jobgate: not starting: JOBGATE_OTEL=on")
    assert "pip install 'jobgate[otel]'" in line
    assert not list(tmp_path.iterdir())  # refused before anything was made


def test_hooks_make_spans_in_the_operations_trace(memory: InMemorySpanExporter) -> None:
    tracing.setup(True)
    every_hook()
    tracing.shutdown()
    transition, refused, call = memory.get_finished_spans()
    assert {s.context.trace_id for s in (transition, refused, call)} == {int(TRACE, 16)}
    assert transition.name == "operation.transition"
    assert dict(transition.attributes or {}) == {
        "jobgate.operation_id": "op_1", "jobgate.trace_id": f"tr_{TRACE}",
        "jobgate.state.to": "create_pending", "jobgate.actor": "agent:a", "jobgate.version": 0,
    }  # fmt: skip
    assert refused.status.status_code is StatusCode.ERROR
    assert call.name == "provider.status" and call.kind is SpanKind.CLIENT
    assert "jobgate.operation_id" not in (call.attributes or {})  # none bound


def test_a_trace_id_from_before_w3c_gets_a_trace_of_its_own(
    memory: InMemorySpanExporter,
) -> None:
    tracing.setup(True)
    telemetry.transition("op_1", "tr_old", None, "create_pending", actor="a", cause="c", version=0)
    tracing.shutdown()
    [span] = memory.get_finished_spans()
    assert span.context.trace_id != 0
    assert (span.attributes or {})["jobgate.trace_id"] == "tr_old"


async def test_the_provider_sees_the_call_spans_id(
    memory: InMemorySpanExporter,
    make_client: Callable[..., Any],
    mock_profile: Profile,
) -> None:
    tracing.setup(True)
    client, recorder = make_client(answer(200, {"id": "job_1", "status": "running"}))
    with logs.bind("op_7", f"tr_{TRACE}"):
        await client.status(mock_profile, "job_1", trace_id=f"tr_{TRACE}")
    tracing.shutdown()
    [span] = memory.get_finished_spans()
    [request] = recorder.requests
    sent = tracecontext.parse(request.headers["traceparent"])
    assert sent is not None and sent.trace_id == TRACE
    assert int(sent.parent_id, 16) == span.context.span_id
    a = dict(span.attributes or {})
    assert a["jobgate.operation_id"] == "op_7" and a["http.response.status_code"] == 200
    assert request.headers["authorization"].endswith(SECRET)  # the credential was sent ...
    assert not any(SECRET in str(v) or "s3cr3t" in str(v) for v in a.values())  # ... not kept
