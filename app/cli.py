"""The `jobgate` command: serve, observe, mock-provider, migrate."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

from app.core.config import Settings


def _checked_settings(**overrides: object) -> Settings:
    """Settings plus every provider profile, validated before anything starts."""
    from app.providers.profile import load_profiles

    settings = Settings(**overrides)  # type: ignore[arg-type]
    load_profiles(settings.profiles_dir, settings.provider_env())
    return settings


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.main import create_app

    settings = _checked_settings(host=args.host, port=args.port)
    app = create_app(settings, run_observer=not args.no_observer)
    uvicorn.run(
        app, host=args.host, port=args.port, log_level=args.log_level, timeout_graceful_shutdown=30
    )
    return 0


async def _observe_forever(settings: Settings) -> None:
    import httpx

    from app.callbacks.delivery import CallbackDelivery
    from app.core.clock import SystemClock
    from app.main import HTTP_LIMITS, build_engine
    from app.observer.worker import Observer

    async with httpx.AsyncClient(limits=HTTP_LIMITS) as http:
        engine = build_engine(settings, clock=SystemClock(), http=http)
        observer = Observer(engine)
        callbacks = CallbackDelivery(engine, http)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            observer.stop()
            callbacks.stop()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)  # one handler per signal: a second replaces it
        try:
            # Both return after stop(): in-flight work finishes and releases its leases.
            await asyncio.gather(observer.run(), callbacks.run())
        finally:
            await engine.db.dispose()


def _observe(args: argparse.Namespace) -> int:
    asyncio.run(_observe_forever(_checked_settings()))
    return 0


def _mock(args: argparse.Namespace) -> int:
    from app.mock_provider.app import run

    run(args.host, args.port)
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from app.core.migrate import upgrade

    settings = Settings()
    upgrade(settings.database_url)
    print("database is at the latest schema")  # noqa: T201
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobgate", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="the gateway (with an in-process observer)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--no-observer", action="store_true")
    serve.add_argument("--log-level", default="info")
    serve.set_defaults(func=_serve)

    observe = sub.add_parser("observe", help="a standalone observer")
    observe.set_defaults(func=_observe)

    mock = sub.add_parser("mock-provider", help="the bundled mock provider")
    mock.add_argument("--host", default="127.0.0.1")
    mock.add_argument("--port", type=int, default=8081)
    mock.set_defaults(func=_mock)

    migrate = sub.add_parser("migrate", help="alembic upgrade head on the configured database")
    migrate.set_defaults(func=_migrate)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    args = build_parser().parse_args(argv)
    from app.providers.profile import ProfileError

    try:
        return int(args.func(args))
    except (ValueError, ProfileError) as exc:  # unsafe settings, a bad provider profile
        print(f"jobgate: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
