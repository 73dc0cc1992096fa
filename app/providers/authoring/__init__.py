"""What a profile author uses: the profile's JSON Schema as published (`schema.py`), the
field reference rendered from it into docs/profiles.md (`schema_doc.py`), `jobgate
profiles check` (`check_command.py`, built on the client's own request preparation), and
`aip151.py`, the base for adapters of Google-style long-running operations. May import
every other room of `app.providers`.
"""
