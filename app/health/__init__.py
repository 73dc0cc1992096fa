"""What operators and orchestrators probe: liveness and readiness (`routes.py`), the
landing page, `/metrics` (`metrics_route.py`) and `/docs` served offline (`api_docs.py`).
May import `app.operations` and everything below it.
"""
