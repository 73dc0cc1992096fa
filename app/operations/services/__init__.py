"""What the API and the operator view ask of operations: create (`intake`), cancel,
resolve (`attention`, `accept_check`), list and read (`queries`), wait (`waiting`),
and the gateway-side options of a create. May import the driver and the layers below,
never `api`.
"""
