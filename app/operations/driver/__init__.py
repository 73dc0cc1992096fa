"""The driver: moves one operation forward under a lease (step -> decision -> apply).

`runner.py` runs the loop and `apply`, the one path a step's write takes; `lease.py`
renews the lease; `steps.py` dispatches on the state to the create, watch, collect,
reconcile and approval steps. Used by the create request (first lease) and by observer
ticks; it imports the ledger and repository, never the other way round.
"""
