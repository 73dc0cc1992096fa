"""Provider profiles and the HTTP calls made from them, in five rooms, top to bottom (a
contract in pyproject.toml):

- `authoring/`: what a profile author uses: the published JSON Schema and its rendering
  in docs/profiles.md, `jobgate profiles check`, and the AIP-151 adapter base.
- `calls/`: the provider calls: the client, the wire under it, the one outbound
  `httpx2.AsyncClient`, request preparation, lookups, result documents, and the
  classified `CallResult` a call returns.
- `answers/`: what a provider's answer says, read through its profile (pure): the job id,
  state and progress, state rules, the outcome table, streamed result lines, poll delays.
- `language/`: the profile language: the models a YAML profile is validated into, its
  cross-field checks, the loader, count expressions, credentials by reference, and the
  Python adapter hooks for what YAML cannot say.
- `expressions/`: the two small forms fields are written in: JSON Pointers and templates.

`profiles/` holds the bundled profiles and their adapters. May import `app.core` and
`app.audit`; never `app.operations` or anything above it.
"""
