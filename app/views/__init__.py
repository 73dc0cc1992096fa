"""The operator's HTML view (`/operations`): Jinja2 pages over the same services
the REST API uses. May import `app.operations` and everything below it.
"""
