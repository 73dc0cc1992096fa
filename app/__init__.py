"""jobgate: a gateway that owns long-running provider jobs on behalf of AI agents."""
