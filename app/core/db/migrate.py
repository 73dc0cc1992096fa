"""`alembic upgrade head` on a configured database, callable from the CLI and tests."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config

from alembic import command
from app.core.db.database import is_sqlite, sync_url

ROOT = Path(__file__).resolve().parents[3]


def alembic_config(database_url: str) -> Config:
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(ROOT / "alembic"))
    cfg.attributes["database_url"] = database_url
    return cfg


def upgrade(database_url: str) -> None:
    """Create or upgrade every table; makes the SQLite file's folder if needed."""
    if is_sqlite(database_url):
        from sqlalchemy.engine import make_url

        db = make_url(sync_url(database_url)).database
        if db and db != ":memory:":
            Path(db).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(database_url), "head")
