"""The database: one place transactions begin and end (`database.py`), the `Txn` every
repository is handed (`txn.py`) and the statements it runs (`sqlexec.py`, `rows.py`,
`sql.py`), column types, migrations and the schema check, the leased work queue, the
database's clock, and what a failed write means. The connections themselves are in
`drivers/`. May import `app.core.obs`, `app.core.runtime`,
`config` and `text`.
"""
