"""What operators see of the work: structured logs, the telemetry hooks behind `/metrics`,
optional OpenTelemetry spans and W3C trace context. May import `app.core.runtime`,
`config` and `text`, never the database or the HTTP edge (the database's clock reports
through it).
"""
