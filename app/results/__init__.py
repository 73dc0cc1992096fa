"""A finished job's result, before any success is written: its checks (`validate.py`:
the profile's and the agent's JSON Schema, size and checksum) and its storage on disk
(`store.py`: written atomically, a reserve kept free, refused with 507 when full). May
import `app.core` only.
"""
