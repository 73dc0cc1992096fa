"""The policy file: limits, rates, budgets and the approval gate, checked before any effect.

`rules` holds the file's model and how a rule selects a create, `cost` what a create
costs, `loader` reads and checks a file (one line per problem), `check` says what each
rule matches (`jobgate policy check FILE`), `counters` counts refusals and decisions by
rule for `/metrics`. docs/policy.md is the reference.
May import `app.core`, `app.audit`, `app.providers` and `app.auth`; never `app.operations`
or anything above it.
"""
