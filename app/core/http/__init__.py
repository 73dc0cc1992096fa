"""The HTTP edge: the server and its arrival limits, body limits, strict JSON and the intake
validator, the dev-mode guard, ending held requests whose client left, the one error shape,
the listening socket, and the SSRF guard for outbound callback addresses. May import
`app.core.db` (what a failed write means), `app.core.runtime`, `config` and `text`.
"""
