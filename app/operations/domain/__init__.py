"""The operation itself: its table model (`models`), its states and the transitions
allowed between them (`states`), and the events a transition records (`events`).
The bottom of `app.operations`: imports only `app.core`.
"""
