"""The running process: the clock abstraction, crash points for fault tests, background
work that outlives a request, in-process wake-ups, the event loop, and start-up refusals
with their exit codes. May import only `app.core.config` and `text`.
"""
