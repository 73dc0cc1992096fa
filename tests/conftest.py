"""Shared fixtures: a fresh migrated database per test, the real mock provider, the gateway.

The back-end comes from JOBGATE_DATABASE_URL as given to `make test` (SQLite when
unset); every other JOBGATE_* variable, and every credential a bundled provider
profile reads, is stripped so the machine's environment never leaks into a test
(and no test can reach a real provider with a developer's key).
"""

from __future__ import annotations

import inspect
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy.engine import make_url

from app.core.config import Settings
from app.core.db.migrate import upgrade
from app.core.runtime.clock import FakeClock
from app.operations.context import AppContext
from tests.support.processes import started_count, stop_started_since
from tests.support.servers import serve_app
from tests.support.timing import TEST_TIMEOUT_S, budget

# pytest-xdist workers start after the strip below and inherit its result: the back-end
# under test reaches them under a name that is not stripped (and that jobgate never reads).
BACKEND_URL = os.environ.get("JOBGATE_DATABASE_URL") or os.environ.get(
    "PYTEST_JOBGATE_DATABASE_URL", ""
)
os.environ["PYTEST_JOBGATE_DATABASE_URL"] = BACKEND_URL
_PROVIDER_ENV = ("OPENAI_", "ANTHROPIC_", "REPLICATE_", "AZURE_LANGUAGE_", "GOOGLE_")
for _name in list(os.environ):
    if _name.startswith(("JOBGATE_", *_PROVIDER_ENV)):
        del os.environ[_name]

IS_POSTGRES = BACKEND_URL.startswith("postgresql")


def pytest_configure(config: pytest.Config) -> None:
    from tests.support import load_report

    load_report.register(config)  # says so when start-up timeouts pile up on a loaded machine


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="run slow soak/scale tests")
    parser.addoption("--run-fuzz", action="store_true", help="run the schemathesis fuzz run")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: Any) -> None:
    """Every `async def` test runs on anyio's asyncio backend (marked before parametrizing)."""
    if collector.funcnamefilter(name) and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_slow = pytest.mark.skip(reason="slow: pass --run-slow")
    for item in items:
        if item.get_closest_marker("timeout") is None:  # the ini's 120 s, scaled for this machine
            item.add_marker(pytest.mark.timeout(budget(TEST_TIMEOUT_S)))
        if "slow" in item.keywords and not config.getoption("--run-slow"):
            item.add_marker(skip_slow)
        if "fuzz" in item.keywords and not config.getoption("--run-fuzz"):
            item.add_marker(pytest.mark.skip(reason="fuzz: `make fuzz` or --run-fuzz"))
        if "postgres_only" in item.keywords and not IS_POSTGRES:
            item.add_marker(pytest.mark.skip(reason="needs JOBGATE_DATABASE_URL=postgresql://"))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True, scope="session")
def _no_process_outlives_the_session() -> Iterator[None]:
    """Every process a fixture started and left running is killed when the session ends."""
    yield
    stop_started_since(0)


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test() -> Iterator[None]:
    """Every process this test started (tests/support/processes.py) is killed when it ends,
    whatever happened: a gateway not healthy in time, an assertion before the `finally`.
    Module and session fixtures started theirs before this mark: they stop their own."""
    mark = started_count()
    yield
    stop_started_since(mark)


# --- databases -------------------------------------------------------------------------


def _pg_admin(sql: str) -> None:
    import psycopg

    u = make_url(BACKEND_URL)
    with psycopg.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 5432,
        user=u.username or "postgres",
        password=u.password,
        dbname=u.database or "postgres",
        autocommit=True,
    ) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def _pg_url(name: str) -> str:
    return make_url(BACKEND_URL).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def db_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated database built once by `alembic upgrade head`; tests get copies."""
    if IS_POSTGRES:
        name = f"jobgate_tpl_{uuid.uuid4().hex[:10]}"
        _pg_admin(f'CREATE DATABASE "{name}"')
        upgrade(_pg_url(name))
        yield name
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        path = tmp_path_factory.mktemp("tpl") / "template.db"
        upgrade(f"sqlite:///{path}")
        yield str(path)


@contextmanager
def cloned_database(template: str, tmp: Path) -> Iterator[str]:
    """A fresh copy of the migrated template on the back-end under test; dropped after."""
    if IS_POSTGRES:
        name = f"jobgate_t_{uuid.uuid4().hex[:12]}"
        _pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        try:
            yield _pg_url(name)
        finally:
            _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        path = tmp / "jobgate.db"
        shutil.copy(template, path)
        yield f"sqlite:///{path}"


@pytest.fixture
def database_url(db_template: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database for one test, on the back-end under test."""
    with cloned_database(db_template, tmp_path) as url:
        yield url


@pytest.fixture(scope="module")
def module_database_url(
    db_template: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A fresh database shared by one module's tests (e.g. behind one gateway process)."""
    with cloned_database(db_template, tmp_path_factory.mktemp("moddb")) as url:
        yield url


# --- the mock provider -----------------------------------------------------------------


@pytest.fixture(scope="session")
def mock_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real mock provider on a real uvicorn server, shared by all tests.

    Tests never share a token (each operation gets a fresh one), so they read the
    mock's counters filtered by their own token.
    """
    from jobgate_fakes.mock.app import create_app as create_mock
    from jobgate_fakes.mock.settings import MockSettings

    state = tmp_path_factory.mktemp("mock") / "mock.db"
    with serve_app(create_mock(MockSettings(state_path=str(state)))) as url:
        yield url


@pytest.fixture
def mock_client(mock_url: str) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=mock_url, timeout=10) as client:
        yield client


# --- the gateway -----------------------------------------------------------------------


@dataclass
class Gateway:
    """The gateway under test: an HTTP client, its app, its clock and its observer."""

    http: httpx2.AsyncClient
    app: Any
    clock: FakeClock
    mock: httpx2.Client

    @property
    def ctx(self) -> AppContext:
        return self.app.state.ctx

    async def tick(self, advance: float = 0.0) -> int:
        """Move the clock, then run the observer's production loop until nothing is due
        (`Observer.run(until_idle=True)`); returns how many steps it started."""
        if advance:
            self.clock.advance(advance)
        return int(await self.app.state.observer.run(until_idle=True))

    async def run_until_done(self, op_id: str, *, step: float = 5.0, max_ticks: int = 200) -> Any:
        """Advance time and tick until the operation is done; returns its body."""
        for _ in range(max_ticks):
            body = (await self.http.get(f"/v1/operations/{op_id}")).json()
            if body["done"]:
                return body
            await self.tick(step)
        raise AssertionError(f"{op_id} not done after {max_ticks} ticks: {body}")

    async def start(
        self, scenario: dict[str, Any] | None = None, *, key: str | None = None, **extra: Any
    ) -> httpx2.Response:
        body: dict[str, Any] = {
            "provider": "mock",
            "kind": "report",
            "input": {"scenario": scenario or {"name": "fast"}},
        }
        body.update(extra)
        return await self.http.post(
            "/v1/operations", json=body, headers={"Idempotency-Key": key or uuid.uuid4().hex}
        )

    def stats(self, token: str) -> dict[str, Any]:
        return dict(self.mock.get("/_mock/stats", params={"token": token}).json())

    def jobs_for(self, op_id: str) -> list[str]:
        """Every remote job the mock holds for this operation, whatever token made it."""
        stats = self.mock.get("/_mock/stats", params={"client_reference": op_id}).json()
        return list(stats["jobs_by_reference"].get(op_id, []))

    async def token_of(self, op_id: str) -> str:
        async with self.ctx.db.transaction() as session:
            from app.operations import repository as repo

            op = await repo.get(session, op_id)
        assert op is not None
        return op.provider_token


def make_settings(database_url: str, mock_url: str, tmp_path: Path, **kw: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "data_dir": tmp_path / "data",
        "mock_provider_url": mock_url,
        "auth": "dev",
        "observer_id": "test-observer",
        "lease_seconds": 30.0,
        # The in-process creates answer at once; a loaded machine must not turn a create
        # answer into "still in flight" (tests/integration/test_create_answer_bound.py
        # sets its own bound).
        "create_answer_seconds": 30.0,
    }
    values.update(kw)
    return Settings(**values)


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    """Extra Settings for `gateway`; a test module overrides this fixture to change them."""
    return {}


@pytest.fixture
async def gateway(
    database_url: str,
    mock_url: str,
    mock_client: httpx2.Client,
    tmp_path: Path,
    gateway_settings: dict[str, Any],
) -> AsyncIterator[Gateway]:
    """The gateway in-process with a fake clock; the observer runs only when a test ticks."""
    from app.main import create_app

    clock = FakeClock()
    extra = dict(gateway_settings)  # may name another database_url (a proxy in front of it)
    app = create_app(
        make_settings(extra.pop("database_url", database_url), mock_url, tmp_path, **extra),
        clock=clock,
        run_observer=False,
    )
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield Gateway(http=http, app=app, clock=clock, mock=mock_client)
