"""The provider calls (the only I/O of `app.providers`): `client.py` (one profile-driven
call in, one classified `CallResult` out), `wire.py` (send, read under a cap, classify),
`outbound.py` (the process's one `httpx2.AsyncClient`), `prepare.py` (the exact request
from a profile and values), `lookup.py` (paging through a provider's jobs),
`collect_documents.py` (a finished job's result documents), `http_util.py` (classifying
answers, Retry-After, scrubbing secrets) and `types.py` (what a call returns). May import
`answers`, `language` and `expressions`.
"""
