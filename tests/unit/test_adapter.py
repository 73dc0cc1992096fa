"""A profile's Python adapter: loaded from beside the profile, refused with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.providers.language.loader import ProfileError, load_profile
from app.providers.language.words import RemoteClass
from tests.support.scripted_provider import profile_yaml

COUNTING = '''
from app.providers.language.adapter import Adapter
from app.providers.language.counts import Counts


class Docs(Adapter):
    """Counts the entries of /docs: code 0 succeeded, any other failed."""

    def count(self, answer):
        docs = answer.get("docs") if isinstance(answer, dict) else None
        if not isinstance(docs, list):
            return None
        failed = sum(1 for d in docs if d.get("code"))
        return Counts(total=len(docs), succeeded=len(docs) - failed, failed=failed)

    def failed_items(self, document):
        return [{"id": d["uri"], "error": d} for d in document.get("docs", []) if d.get("code")]

    def classify(self, answer, counts):
        return RemoteClass.RUNNING if answer.get("state") == "warming" else None

    def create_body(self, kind, body, input):
        return {"wrapped": body, "kind": kind}


from app.providers.language.words import RemoteClass

ADAPTER = Docs()
'''


def _write(tmp_path: Path, adapter_source: str | None, name: str = "docs") -> Path:
    text = profile_yaml("scripted", itemless=True) + f"adapter: {name}\n"
    path = tmp_path / "scripted.yaml"
    path.write_text(text)
    if adapter_source is not None:
        (tmp_path / f"{name}.py").write_text(adapter_source)
    return path


def test_an_adapter_beside_the_profile_is_loaded_and_counts_items(tmp_path: Path) -> None:
    profile = load_profile(_write(tmp_path, COUNTING), {})
    assert type(profile.hooks).__name__ == "Docs"
    assert not profile.itemless  # an adapter that counts makes every job one with items
    assert profile.hooks.classify({"state": "warming"}, None) is RemoteClass.RUNNING


@pytest.mark.parametrize(
    ("source", "name", "said"),
    [
        (None, "docs", "no file"),
        ("def broken(:\n", "docs", "failed to load: SyntaxError"),
        ("raise RuntimeError('boom')\n", "docs", "failed to load: RuntimeError: boom"),
        ("ADAPTER = object()\n", "docs", "must define ADAPTER"),
        ("", "Docs-1", "adapter"),
    ],
)
def test_a_bad_adapter_stops_the_profile_with_one_line(
    tmp_path: Path, source: str | None, name: str, said: str
) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(_write(tmp_path, source, name), {})
    assert said in str(caught.value)
    assert "Traceback" not in str(caught.value)


def test_without_an_adapter_every_hook_defers(tmp_path: Path) -> None:
    path = tmp_path / "scripted.yaml"
    path.write_text(profile_yaml("scripted", itemless=True))
    hooks = load_profile(path, {}).hooks
    assert hooks.count({"docs": []}) is None
    assert hooks.classify({}, None) is None
    assert hooks.create_body("run", {}, {}) is None
    assert hooks.judge_line("output", {}) is None
