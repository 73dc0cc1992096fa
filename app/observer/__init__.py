"""The observer process loop: claims due operations under a lease and hands each to
`app.operations.driver`; holds polls that are due soon. May import `app.operations`
and everything below it; what a step does lives in the driver, not here.
"""
