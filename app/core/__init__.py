"""What every layer stands on. Imports nothing else of `app` (docs/architecture.md has the graph).

- `config.py`: the one `Settings` object (`JOBGATE_*`); `config_doc.py` renders
  docs/configuration.md from it. `text.py`: text the gateway can store and show.
- `runtime/`: the process itself: clocks, crash points, background work, wake-ups,
  the event loop, start-up refusals.
- `db/`: the database: transactions, statements, migrations, the leased queue, the
  database's clock; `db/drivers/` holds the SQLite and PostgreSQL connections.
- `http/`: the HTTP edge: the server, body limits, the JSON guard, dev mode, the error
  shape, and the outbound address guard.
- `obs/`: what operators see: logs, metrics hooks, traces.

Top to bottom: `http`, `db`, `obs`, `runtime`, then `config | text` (a contract in
pyproject.toml).
"""
