"""`jobgate keys create|list|revoke`: API keys on the configured database."""

from __future__ import annotations

import asyncio
import sys

from sqlalchemy.exc import DBAPIError

from app import audit
from app.auth import service
from app.core.config import Settings
from app.core.db.db_clock import DatabaseClock
from app.core.runtime.clock import SystemClock


def keys(command: str, name: str | None, role: str | None) -> int:
    """`keys create|list|revoke` on the configured database.

    A new key is the only thing `create` writes to stdout (so `KEY=$(jobgate keys
    create ...)` works) and it is shown this once; everything else goes to stderr.
    """

    def say(text: str) -> None:
        print(text, file=sys.stderr)

    async def run() -> int:
        settings = Settings()
        db = audit.audited_database(settings)
        clock = DatabaseClock(
            SystemClock(),
            limit_seconds=settings.clock_skew_limit_seconds,
            max_round_trip_seconds=settings.clock_max_round_trip_seconds,
        )
        await clock.try_measure(db)  # created_at, revoked_at: the database's clock
        now = clock.now()
        try:
            if command == "create":
                row, key = await service.create(db, str(name), str(role), now)
                say(f"created {row.role} key {row.name!r} (prefix {row.key_prefix}).")
                say("This is the only time the key is shown; store it now:")
                print(key)
            elif command == "revoke":
                row = await service.revoke(db, str(name), now)
                at = row.revoked_at.strftime("%Y-%m-%d %H:%M:%S") if row.revoked_at else "?"
                say(f"key {row.name!r} (prefix {row.key_prefix}) is revoked since {at} UTC.")
            else:
                rows = await service.list_keys(db)
                lines = [f"{'NAME':<24} {'ROLE':<9} {'PREFIX':<10} {'CREATED (UTC)':<20} REVOKED"]
                for r in rows:
                    created = r.created_at.strftime("%Y-%m-%d %H:%M:%S")
                    revoked = r.revoked_at.strftime("%Y-%m-%d %H:%M:%S") if r.revoked_at else "-"
                    lines.append(
                        f"{r.name:<24} {r.role:<9} {r.key_prefix:<10} {created:<20} {revoked}"
                    )
                print("\n".join(lines))
            return 0
        except DBAPIError as exc:  # e.g. no api_keys table yet
            say(f"jobgate: database error (has `jobgate migrate` run?): {exc.orig}")
            return 1
        finally:
            await db.dispose()

    return asyncio.run(run())
