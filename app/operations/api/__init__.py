"""The operations REST API: routes (`endpoints`, `control_routes`, `result_routes`,
`wait_routes`), the error catalogue (`error_docs`), OpenAPI targets and the per-key
cap on held requests (`holds`). The top of `app.operations`: may import any layer below.
"""
