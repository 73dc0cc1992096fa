"""Completion callbacks out: outbox rows written with the state change, delivered later."""
