"""Completion callbacks out: the outbox row written in the transaction that made the
operation done (`outbox.py`, the ledger's done handler), and its delivery later, signed
(Standard Webhooks), to the address the SSRF guard checked (`delivery.py`); the tables
are `models.py`. May import `app.operations` and everything below it.
"""
