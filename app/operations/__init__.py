"""Operations: the durable record an agent gets for one remote job, and everything
that moves it. Inner layers, top to bottom (pyproject.toml's import contracts):

- `api`: the REST routes, error docs and OpenAPI targets;
- `services`: what a route asks for (create, cancel, resolve, query, wait);
- `driver`: one step of one operation under a lease (create, poll, collect, cancel);
- `contract`: what an agent reads (schemas, presenter and its words, cursors, ids);
- `ledger`: the only writer of state transitions and their history;
- `context`, `hold`: the application context and the holder protocol;
- `repository`: all SQL about operations;
- `domain`: models, states and the events a transition records.

May import `app.providers`, `app.results`, `app.auth`, `app.audit` and `app.core`.
"""
