"""The `jobgate` command: serve, observe, mock-provider, fake-provider, profiles, policy,
migrate, keys, audit, prune, backup, clock, mcp, ops."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from app.core.config import Settings


def _checked_settings(**overrides: object) -> Settings:
    """Settings, every provider profile and the policy file, validated before anything starts."""
    from app.core.obs import tracing
    from app.policy.loader import load_policy
    from app.providers.language.loader import load_profiles

    settings = Settings(**overrides)  # type: ignore[arg-type]
    tracing.require(settings.otel)  # JOBGATE_OTEL=on without the `otel` extra: one line, exit 3
    profiles = load_profiles(settings.profiles_dir, settings.provider_env())
    load_policy(settings.policy_file, profiles)  # a bad file: one line per problem, exit 2
    return settings


# Exit codes of `serve` and `observe` besides 0 (docs/operations.md, "Exit codes"): 2 a
# setting or profile refused, 3 the database not ready (StartRefused), 4 the port cannot
# be bound (PortBusy), 5 the application failed during its start-up (the log says why).
APP_START_FAILED = 5


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.core.http.listener import bind_listener
    from app.core.http.server import guarded_protocol
    from app.main import create_app

    settings = _checked_settings(host=args.host, port=args.port)
    # The port first: a busy one is refused before the database is touched.
    sock = bind_listener(args.host, args.port)
    try:
        _require_schema(settings)
        app = create_app(settings, run_observer=not args.no_observer)
        # log_config=None: uvicorn's lines go through jobgate's handler (JSON or text, one format).
        logging.getLogger().setLevel(args.log_level.upper())
        config = uvicorn.Config(
            app,
            host=args.host,
            port=args.port,
            log_level=args.log_level,
            log_config=None,
            access_log=not args.no_access_log,
            timeout_graceful_shutdown=30,
            # A request head that trickles in, or is too long, is refused (app/core/http/server.py).
            http=guarded_protocol(
                head_timeout=settings.request_head_timeout_seconds,
                max_head_bytes=settings.max_header_bytes,
            ),
        )
        server = uvicorn.Server(config)
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        print("jobgate: the gateway did not start; the log above says why", file=sys.stderr)
        return APP_START_FAILED
    return 0


async def _observe_forever(settings: Settings) -> None:
    from app.callbacks.delivery import CallbackDelivery
    from app.core.db.db_clock import measuring
    from app.core.db.drivers.pg_listen import listening
    from app.main import build_context
    from app.observer.worker import Observer
    from app.providers.calls.outbound import outbound_client

    async with outbound_client() as http:
        ctx = build_context(settings, http=http)
        observer = Observer(ctx)
        callbacks = CallbackDelivery(ctx, http)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            observer.stop()
            callbacks.stop()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)  # one handler per signal: a second replaces it
        try:
            # PostgreSQL: operations other processes hand back to the queue are claimed
            # when they fall due, not at the next interval (app/core/db/drivers/pg_listen.py).
            async with (
                measuring(ctx.clock, ctx.db, settings.clock_check_seconds),
                listening(settings.database_url, ctx.notifier),
            ):
                # Both return after stop(): in-flight work finishes and releases its leases.
                await asyncio.gather(observer.run(), callbacks.run())
        finally:
            await ctx.db.dispose()


def _require_schema(settings: Settings) -> None:
    """Refuse to start on a database not at the head migration; the SQLite default (no
    JOBGATE_DATABASE_URL) is migrated here instead, so a first `jobgate serve` just works."""
    from app.core.db.schema_state import require_ready

    require_ready(settings.database_url, may_migrate=settings.database_is_default)


def _observe(args: argparse.Namespace) -> int:
    settings = _checked_settings()
    _require_schema(settings)
    from app.core.runtime import event_loop

    event_loop.run(_observe_forever(settings))
    return 0


def _fakes_installed() -> bool:
    """The mock provider and the fakes ship beside the gateway (package `jobgate_fakes`),
    but not in the gateway's Docker image: there their commands say so in one line."""
    if importlib.util.find_spec("jobgate_fakes") is None:
        print("the mock provider and the fakes are not installed here (package jobgate_fakes)")
        return False
    return True


def _mock(args: argparse.Namespace) -> int:
    if not _fakes_installed():
        return 2
    from jobgate_fakes.mock.app import run

    run(args.host, args.port, access_log=not args.no_access_log)
    return 0


def _fake(args: argparse.Namespace) -> int:
    if not _fakes_installed():
        return 2
    from jobgate_fakes.providers import FAKES, run

    if args.name not in FAKES:
        print(f"no fake called {args.name!r}; the fakes: {', '.join(sorted(FAKES))}")
        return 2

    run(args.name, args.host, args.port)
    return 0


def _profiles_check(args: argparse.Namespace) -> int:
    """Validate a profile and print the requests it would send; exit 2 when it is invalid."""
    import os

    from app.providers.authoring.check_command import run

    code, text = run(Path(args.file), os.environ, args.input)
    print(text, file=sys.stdout if code == 0 else sys.stderr)  # noqa: T201
    return code


def _policy_check(args: argparse.Namespace) -> int:
    """Check a policy file and print what each rule matches; exit 2 when it is invalid."""
    from app.policy.check import run
    from app.providers.language.loader import load_profiles

    settings = Settings()
    profiles = load_profiles(settings.profiles_dir, settings.provider_env())
    code, text = run(Path(args.file), profiles)
    print(text, file=sys.stdout if code == 0 else sys.stderr)  # noqa: T201
    return code


def _profiles_schema(args: argparse.Namespace) -> int:
    """Print the profile's JSON Schema (docs/profile.schema.json), or its field reference."""
    if args.markdown:
        from app.providers.authoring.schema_doc import markdown

        sys.stdout.write(markdown())
    else:
        from app.providers.authoring.schema import text

        sys.stdout.write(text())
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from app.core.db.migrate import upgrade

    settings = Settings()
    if args.check:  # a health check for processes without HTTP (compose's observers)
        from app.core.db.schema_state import check_sync

        state = check_sync(settings.database_url)
        print(state.reason if not state.ready else f"database is at {state.head}")  # noqa: T201
        return 0 if state.ready else 1
    upgrade(settings.database_url)
    print("database is at the latest schema")  # noqa: T201
    return 0


def _keys(args: argparse.Namespace) -> int:
    from app.auth.commands import keys

    return keys(args.keys_command, getattr(args, "name", None), getattr(args, "role", None))


def _audit(args: argparse.Namespace) -> int:
    from app.audit.commands import cli

    return cli(
        args.audit_command,
        file=getattr(args, "file", None),
        anchor_file=getattr(args, "anchor", None),
        save_anchor_to=getattr(args, "save_anchor", None),
        out=getattr(args, "out", None),
    )


def _prune(args: argparse.Namespace) -> int:
    from app.retention.commands import cli

    return cli(args.older_than, dry_run=args.dry_run)


def _backup(args: argparse.Namespace) -> int:
    from app.retention.commands import backup_cli

    return backup_cli(args.dir)


def _mcp(args: argparse.Namespace) -> int:
    """The MCP server over stdio; stdout carries only the protocol (logs go to stderr)."""
    import os

    from app.mcp import stdio

    key = os.environ.get(args.key_env) or None
    asyncio.run(stdio.serve(args.url, key))
    return 0


# Commands that run until stopped: their INFO lines are what a person watches.
LONG_RUNNING = frozenset({"serve", "observe", "mock-provider", "fake-provider", "mcp", "migrate"})


def with_verbose(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`--verbose` on a command that runs and ends: it also prints the INFO log lines."""
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also print the INFO log lines"
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="the gateway (with an in-process observer)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--no-observer", action="store_true")
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--no-access-log", action="store_true", help="no line per HTTP request (`make run`)"
    )
    serve.set_defaults(func=_serve)

    observe = sub.add_parser("observe", help="a standalone observer")
    observe.set_defaults(func=_observe)

    mock = sub.add_parser("mock-provider", help="the bundled mock provider")
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=8081)
    mock.add_argument("--no-access-log", action="store_true", help="no line per HTTP request")
    mock.set_defaults(func=_mock)

    fake = sub.add_parser("fake-provider", help="a local fake of a real provider API")
    fake.add_argument("name", help="the fake's name (docs/provider-fakes.md lists them)")
    fake.add_argument("--host", default="127.0.0.1")
    fake.add_argument("--port", type=int, default=8090)
    fake.set_defaults(func=_fake)

    profiles = sub.add_parser("profiles", help="provider profiles: check one, print the schema")
    profiles_sub = profiles.add_subparsers(dest="profiles_command", required=True)
    check = profiles_sub.add_parser(
        "check", help="validate a profile and print the requests it would send (nothing is sent)"
    )
    check.add_argument("file", help="the profile (YAML)")
    check.add_argument("--input", help="a sample input (JSON); default: the kind's example")
    with_verbose(check).set_defaults(func=_profiles_check)
    schema = profiles_sub.add_parser(
        "schema", help="print the JSON Schema of a profile (docs/profile.schema.json)"
    )
    schema.add_argument(
        "--markdown", action="store_true", help="print the field reference (docs/profiles.md)"
    )
    with_verbose(schema).set_defaults(func=_profiles_schema)

    policy = sub.add_parser("policy", help="the policy file: check one (docs/policy.md)")
    policy_sub = policy.add_subparsers(dest="policy_command", required=True)
    policy_check = policy_sub.add_parser(
        "check", help="check a policy file and print what each rule matches"
    )
    policy_check.add_argument("file", help="the policy file (YAML)")
    with_verbose(policy_check).set_defaults(func=_policy_check)

    migrate = sub.add_parser("migrate", help="alembic upgrade head on the configured database")
    migrate.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 unless at the head migration"
    )
    migrate.set_defaults(func=_migrate)

    keys = sub.add_parser("keys", help="API keys: create (printed once), list, revoke")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    create = keys_sub.add_parser("create", help="mint a key and print it once")
    create.add_argument("--name", required=True, help="the principal its operations record")
    create.add_argument("--role", required=True, choices=("agent", "operator", "admin"))
    keys_sub.add_parser("list", help="names, roles, prefixes, created/revoked (never keys)")
    revoke = keys_sub.add_parser("revoke", help="revoke a key; its next request answers 401")
    revoke.add_argument("--name", required=True)
    for command in (create, revoke, keys_sub.choices["list"]):
        with_verbose(command).set_defaults(func=_keys)

    audit = sub.add_parser("audit", help="the tamper-evident audit trail: verify, export")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True)
    verify = audit_sub.add_parser(
        "verify", help="recompute the chain; exit 1 naming the first broken entry"
    )
    verify.add_argument("--file", type=Path, help="verify an export instead of the database")
    verify.add_argument(
        "--anchor",
        type=Path,
        help="an anchor (or an export) kept outside the database: the chain must still "
        "hold its entry, unchanged (catches a head rolled back)",
    )
    verify.add_argument(
        "--save-anchor",
        type=Path,
        help="after an intact verify, write where the chain ends to this file (keep it "
        "where the database's owner cannot write)",
    )
    export = audit_sub.add_parser("export", help="write every entry as JSON Lines")
    export.add_argument("--out", type=Path, help="a file (default: stdout)")
    for command in (verify, export):
        with_verbose(command).set_defaults(func=_audit)

    prune = sub.add_parser(
        "prune",
        help="remove finished operations older than a duration, leaving tombstones "
        "(docs/operations.md, Retention)",
    )
    prune.add_argument(
        "--older-than", required=True, help="e.g. 30d, 12h, 90m, 0s (finished before then)"
    )
    prune.add_argument("--dry-run", action="store_true", help="count what would go; remove nothing")
    prune.set_defaults(func=_prune)

    backup = sub.add_parser(
        "backup",
        help="a consistent copy of the database (SQLite) and the result files, usable as a "
        "JOBGATE_DATA_DIR (docs/operations.md, Backup and restore)",
    )
    backup.add_argument("dir", help="a new or empty directory")
    backup.set_defaults(func=_backup)

    mcp = sub.add_parser("mcp", help="the MCP server over stdio, for desktop agents")
    mcp.add_argument("--url", required=True, help="the gateway, e.g. http://127.0.0.1:8080")
    mcp.add_argument(
        "--key-env",
        default="JOBGATE_API_KEY",
        help="the environment variable holding the API key (default JOBGATE_API_KEY)",
    )
    mcp.set_defaults(func=_mcp)

    from app.clock_command import add_parser as add_clock
    from app.ops_cli.commands import add_parser as add_ops

    add_clock(sub)  # `jobgate clock [--adopt-host]` (app/clock_command.py)

    add_ops(sub)  # `jobgate ops ...` (app/ops_cli)
    return parser


def settings_problem(exc: Any) -> str:
    """A refused setting in one line: pydantic's reasons, without its form-letter frame."""
    reasons = []
    for err in exc.errors():
        msg = str(err.get("msg", "")).removeprefix("Value error, ")
        where = ".".join(str(p) for p in err.get("loc", ()))
        reasons.append(msg if not where or "JOBGATE_" in msg else f"JOBGATE_{where.upper()}: {msg}")
    return "; ".join(reasons) or str(exc)


def main(argv: list[str] | None = None) -> int:
    import os

    from app.core.obs.logs import configure

    args = build_parser().parse_args(argv)
    # JSON lines, or readable text when stderr is a terminal (JOBGATE_LOG_FORMAT overrides).
    # A command that runs and ends prints what it is for and warnings, not the INFO lines
    # of the machinery it starts (the database clock, the audit writer); --verbose: all.
    chatty = args.command in LONG_RUNNING or getattr(args, "verbose", False)
    configure("INFO" if chatty else "WARNING", os.environ.get("JOBGATE_LOG_FORMAT", "auto"))
    from pydantic import ValidationError

    from app.core.runtime.refusal import StartRefused
    from app.providers.language.loader import ProfileError

    try:
        return int(args.func(args))
    except ValidationError as exc:  # a setting refused: its reasons, never its value
        print(f"jobgate: {settings_problem(exc)}", file=sys.stderr)
        return 2
    except (ValueError, ProfileError) as exc:  # unsafe settings, a bad profile or policy
        for line in str(exc).splitlines() or [""]:  # a policy's problems: one line each
            print(f"jobgate: {line}", file=sys.stderr)
        return 2
    except StartRefused as exc:  # one line that says what to run, no traceback
        print(f"jobgate: not starting: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
