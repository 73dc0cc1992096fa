"""What an agent reads: request and response schemas, the presenter that turns an
operation into its body and plain words (`presenter`, `counted`, `wording`), list cursors
and id forms. May import `ledger`, `repository`, `domain` and the layers below `app.operations`.
"""
