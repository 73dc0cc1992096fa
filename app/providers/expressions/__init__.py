"""The two small forms a profile's fields are written in, evaluated over JSON: RFC 6901 JSON
Pointers (`pointers.py`) and request templates with placeholders (`templates.py`). Pure;
imports nothing of `app`.
"""
