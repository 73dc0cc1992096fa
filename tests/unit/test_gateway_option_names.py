"""Which input fields a bundled profile sends by name, and so which gateway option names
inside `input` are the provider's own (Google's `labels`) rather than misplaced options."""

from __future__ import annotations

import pytest

from app.core.http.errors import Invalid
from app.operations.services.gateway_options import check_input, sent_input_fields
from app.providers.language.loader import load_profiles

PROFILES = load_profiles(None, {})


def test_the_input_fields_each_bundled_kind_sends() -> None:
    assert sent_input_fields(PROFILES["mock"], "report") is None  # `$input` whole
    assert sent_input_fields(PROFILES["openai_batch"], "batch") == {"requests", "endpoint"}
    assert sent_input_fields(PROFILES["anthropic_message_batches"], "batch") == {"requests"}
    google = sent_input_fields(PROFILES["google_translate"], "batch_translate_text")
    assert google is not None and "labels" in google


def test_a_provider_field_named_like_an_option_is_the_providers() -> None:
    google = PROFILES["google_translate"]
    check_input(google, "batch_translate_text", {"labels": {"team": "a"}})  # Google's labels
    with pytest.raises(Invalid) as refused:
        check_input(google, "batch_translate_text", {"validation": {}})
    assert refused.value.details == {
        "field": "input.validation",
        "belongs": "validation",
        "misplaced": ["validation"],
    }


def test_an_option_the_profile_does_not_send_is_still_refused() -> None:
    # openai_batch would silently drop it: refused, so the agent learns where it belongs.
    with pytest.raises(Invalid):
        check_input(PROFILES["openai_batch"], "batch", {"requests": [], "labels": {}})
