"""Provider webhooks in: signature checks (Standard Webhooks and the profiles' own),
secret fetching, and the wake-up of the operation the event names. May import
`app.operations` and everything below it.
"""
