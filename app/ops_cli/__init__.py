"""`jobgate ops`: the operator's terminal tool. Over the REST API with `jobgate_client`
(`backend.py`), or on the database directly with the gateway's own context (`local.py`);
`commands.py` holds the subcommands. Sits above `app.main`, whose context it may build.
"""
