"""The bundled mock provider: a small async-job API whose scenarios (partial, failed,
never finishes, lost create answer, rate limits...) are chosen by the create input
(docs/mock-provider.md). `jobgate mock-provider` serves it.
"""
