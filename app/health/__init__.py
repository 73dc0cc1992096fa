"""Readiness, the landing page and (later) the metrics endpoint: what operators probe."""
