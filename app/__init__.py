"""jobgate: a gateway that owns long-running provider jobs on behalf of AI agents.

Packages by concept, top to bottom (docs/architecture.md draws the graph and
pyproject.toml's import contracts hold it): the commands (`cli`, `devrun`, `ops_cli`),
the app (`main`), the edges (`observer`, `webhooks`, `callbacks`, `views`, `mcp`,
`health`), `operations`, `policy`, then `providers`, `results`, `auth`, `audit` and
`core` at the bottom.
"""
