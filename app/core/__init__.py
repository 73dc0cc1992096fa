"""What every layer stands on: settings, clock, database and transactions, the HTTP
edge (body limits, JSON guard, dev-mode guard, server), errors, logs, telemetry, SSRF
checks. Imports nothing else of `app` (docs/architecture.md has the graph).
"""
