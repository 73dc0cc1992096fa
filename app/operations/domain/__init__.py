"""The operation itself: its row, which declares the `operations` table (`operation.py`),
the tables (`models.py`), its states and the transitions allowed between them with
their evidence (`states.py`), and the ledger's done-handler type (`events.py`). The
bottom of `app.operations`: imports only `app.core`.
"""
