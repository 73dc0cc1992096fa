"""What a provider's answer says, read through its profile; pure, no I/O: `extract.py`
(job id, state, progress, the provider's error, hints), `state_rules.py`, `outcome.py`
(the outcome table: may an agent report success?), `documents.py` (result lines judged as
they stream), `backoff.py` (when to poll next), `values.py` (plain values out of JSON). May
import `language` and `expressions`.
"""
