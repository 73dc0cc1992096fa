"""Provider profiles and the HTTP calls made from them.

Holds the profile model and loader (`profile`, `profiles/`), the outbound client
(`client`, `outbound`), what is read from answers (`extract`, `counts`, `outcome`,
`pointers`) and Python adapters for what YAML cannot say (`adapter`).
May import `app.core` and `app.audit`; never `app.operations` or anything above it.
"""
