"""A local fake of AssemblyAI's transcripts API: the offline target of the profile walk-through
(docs/profiles.md, "Add your provider in ten minutes"; docs/provider-fakes.md).

Built from AssemblyAI's public API reference, read 2026-12-03:
<https://www.assemblyai.com/docs/api-reference/transcripts> (submit and get a transcript)
and <https://www.assemblyai.com/docs/pre-recorded-audio/transcript-status> (the statuses).
"""

from jobgate_fakes.providers.assemblyai_transcripts.app import create_app

__all__ = ["create_app"]
