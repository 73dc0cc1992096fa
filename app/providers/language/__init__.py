"""The profile language (v2): `profile.py` (the top-level model and its cross-field checks),
the parts it is made of (`spec_*.py`), `counts.py` (count expressions), `words.py` (remote
classes, single-create capabilities), `secrets.py` (credentials by reference, values only
at call time), `adapter.py` (the Python hooks a profile may name) and `loader.py` (files in,
validated profiles out). May import `expressions` only.
"""
