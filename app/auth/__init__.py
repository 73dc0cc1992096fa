"""API keys and who is calling: key storage, hashing and the FastAPI dependencies.

May import `app.core` and `app.audit`; never `app.operations` or anything above it.
"""
