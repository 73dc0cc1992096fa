"""The driver connections under `Txn`: SQLite on a thread, PostgreSQL on asyncpg, the pool
both share, and PostgreSQL's LISTEN for wake-ups across processes. May import the rest of
`app.core.db`'s lower layers, `app.core.runtime` and `app.core.config`.
"""
