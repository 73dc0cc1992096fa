"""A refused setting stops `jobgate` with one line naming it, never a traceback, never
its value (it may be a secret)."""

from __future__ import annotations

import pytest

from app.cli import main

BAD_SECRETS = ["whsec_zzzzz", "whsec_", "whsec_ééé", "whsec_!!!"]


@pytest.mark.parametrize("secret", BAD_SECRETS)
def test_a_malformed_callback_secret_is_one_line_at_start(
    secret: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JOBGATE_CALLBACK_SECRET", secret)
    assert main(["serve", "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jobgate: JOBGATE_CALLBACK_SECRET is not a Standard Webhooks secret")
    assert err.count("\n") == 1 and "Traceback" not in err
    value = secret.removeprefix("whsec_")
    assert not value or value not in err  # the value is never repeated


def test_any_refused_setting_is_named_without_its_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("JOBGATE_PORT", "not-a-port-8c1f")
    assert main(["migrate", "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jobgate: JOBGATE_PORT:") and "not-a-port-8c1f" not in err
