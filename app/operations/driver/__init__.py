"""The driver: moves one operation forward under a lease (steps -> decision -> apply).

Used by the create request (first lease) and by observer ticks; it imports the
ledger and repository, never the other way round.
"""
