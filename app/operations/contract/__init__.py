"""What an agent reads: request and response schemas, the presenter that turns an
operation into its body and plain words (`presenter`, `wording`), list cursors and id
forms. May import `ledger`, `repository`, `domain` and the layers below `app.operations`.
"""
