"""`jobgate ops`: the operator's terminal tool, over the REST API with `jobgate_client`."""
