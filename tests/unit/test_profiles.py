"""Provider profiles: the built-in mock profile, schema errors, secrets by reference only."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.providers.expressions import pointers
from app.providers.language.loader import ProfileError, load_profile, load_profiles
from app.providers.language.profile import CredentialError, Profile
from app.providers.language.words import RemoteClass

MINIMAL: dict[str, Any] = {
    "version": 2,
    "name": "acme",
    "base_url": "https://api.acme.test/v2",
    "kinds": {"report": {"create": {"path": "/jobs", "body": {"input": "$input"}}}},
    "status": {"path": "/jobs/{job_id}"},
    "result": {"path": "/jobs/{job_id}/result"},
    "pointers": {"job_id": "/id", "state": "/status"},
    "states": {"done": "succeeded", "working": "running"},
}


def write(directory: Path, filename: str, data: Any) -> Path:
    path = directory / filename
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def with_changes(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(MINIMAL)
    data.update(changes)
    return data


# -- built-in profiles ----------------------------------------------------------------------


def test_builtin_mock_profile_describes_the_mock_provider() -> None:
    profiles = load_profiles(None, {})
    mock = profiles["mock"]
    assert mock.base_url == "http://127.0.0.1:8081"
    assert mock.credentials is not None
    assert (mock.credentials.type, mock.credentials.env) == (
        "bearer",
        "JOBGATE_MOCK_PROVIDER_TOKEN",
    )
    assert mock.credentials.optional is True
    assert (mock.idempotency.location, mock.idempotency.header) == ("header", "Idempotency-Key")
    assert mock.trace_header == "X-Trace-Id"
    assert mock.kinds["report"].create.path == "/v1/jobs"
    assert mock.status.path == "/v1/jobs/{job_id}"
    assert mock.cancel is not None and mock.cancel.idempotent is True
    assert mock.result is not None and mock.result.safe_to_repeat is True
    assert mock.lookup is not None
    assert (mock.lookup.by, mock.lookup.param) == ("token", "idempotency_key")
    assert mock.validation.checksum == "sha256_rfc8785"
    assert mock.webhooks.scheme == "standard"
    assert mock.webhooks.secret is not None
    assert mock.webhooks.secret.env == "JOBGATE_MOCK_WEBHOOK_SECRET"
    for state in ("queued", "running", "succeeded", "succeeded_partial", "failed", "cancelled"):
        assert state in mock.states
    assert mock.remote_class("cancelling") is RemoteClass.RUNNING


def test_base_url_env_overrides_the_default() -> None:
    env = {"JOBGATE_MOCK_PROVIDER_URL": "http://10.0.0.5:9999"}
    assert load_profiles(None, env)["mock"].base_url == "http://10.0.0.5:9999"
    assert load_profiles(None, {"JOBGATE_MOCK_PROVIDER_URL": ""})["mock"].base_url.endswith(":8081")


def test_bad_base_url_env_value_is_an_error_naming_the_variable() -> None:
    with pytest.raises(ProfileError, match="mock.yaml: base_url_env .JOBGATE_MOCK_PROVIDER_URL."):
        load_profiles(None, {"JOBGATE_MOCK_PROVIDER_URL": "ftp://nope"})


def test_unknown_provider_state_is_running_never_success() -> None:
    mock = load_profiles(None, {})["mock"]
    assert mock.remote_class("exploded_gloriously") is RemoteClass.RUNNING
    assert mock.remote_class("succeeded") is RemoteClass.SUCCEEDED


def test_extra_dir_profiles_are_loaded_beside_the_builtins(tmp_path: Path) -> None:
    write(tmp_path, "acme.yaml", MINIMAL)
    write(tmp_path, "notes.txt", "not a profile")
    profiles = load_profiles(tmp_path, {})
    assert {"mock", "acme"} <= set(profiles)  # beside the bundled real providers
    assert profiles["acme"].result is not None
    assert profiles["acme"].polling.initial_seconds == 2


# -- errors name the file and the field -----------------------------------------------------


def test_missing_field_error_names_file_and_field_path(tmp_path: Path) -> None:
    data = with_changes(kinds={"report": {"create": {"method": "POST"}}})
    write(tmp_path, "foo.yaml", data)
    with pytest.raises(ProfileError) as info:
        load_profiles(tmp_path, {})
    assert "foo.yaml: kinds.report.create.path: field required" in str(info.value)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"states": {"done": "finished"}}, "states.done"),
        ({"status": {"path": "/jobs/{id}"}}, "status.path"),
        ({"pointers": {"job_id": "id", "state": "/s"}}, "pointers.job_id"),
        ({"pointers": {"job_id": "/a~2", "state": "/s"}}, "pointers.job_id"),
        (
            {"kinds": {"report": {"create": {"path": "/j", "body": {"x": "$inptu"}}}}},
            "kinds.report.create.body",
        ),
        ({"result": None}, "(top level)"),
        ({"base_url": "https://user:pw@api.acme.test"}, "base_url"),
        ({"base_url": "api.acme.test"}, "base_url"),
        ({"polling": {"min_seconds": 10, "max_seconds": 5}}, "polling"),
        ({"webhooks": {"scheme": "standard"}}, "webhooks"),
        ({"idempotency": {"location": "body"}}, "idempotency"),
        ({"surprise": 1}, "surprise"),
        ({"name": "Bad Name"}, "name"),
    ],
)
def test_invalid_profiles_are_refused_with_the_field(
    tmp_path: Path, changes: dict[str, Any], field: str
) -> None:
    path = write(tmp_path, "bad.yaml", with_changes(**changes))
    with pytest.raises(ProfileError) as info:
        load_profile(path, {})
    assert str(info.value).startswith(f"{path}: {field}: ")


def test_invalid_yaml_and_non_mapping_are_refused(tmp_path: Path) -> None:
    broken = write(tmp_path, "broken.yaml", "name: [unclosed\n")
    with pytest.raises(ProfileError, match=r"broken\.yaml: invalid YAML at line"):
        load_profile(broken, {})
    listy = write(tmp_path, "list.yaml", "- 1\n- 2\n")
    with pytest.raises(ProfileError, match=r"list\.yaml: \(top level\): must be a mapping"):
        load_profile(listy, {})


def test_duplicate_names_are_refused_naming_both_files(tmp_path: Path) -> None:
    write(tmp_path, "my-mock.yaml", with_changes(name="mock"))
    with pytest.raises(ProfileError) as info:
        load_profiles(tmp_path, {})
    assert "my-mock.yaml: name: profile 'mock' is already in" in str(info.value)
    assert "profiles/mock.yaml" in str(info.value)


def test_missing_extra_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="does not exist"):
        load_profiles(tmp_path / "nope", {})


# -- credentials: by reference only ---------------------------------------------------------


@pytest.mark.parametrize("key", ["value", "token", "secret", "password", "api_key"])
def test_inline_secret_is_refused_and_not_echoed(tmp_path: Path, key: str) -> None:
    creds = {"type": "bearer", key: "sk-live-DO-NOT-LEAK"}
    path = write(tmp_path, "inline.yaml", with_changes(credentials=creds))
    with pytest.raises(ProfileError) as info:
        load_profile(path, {})
    assert "credentials: inline secrets are not allowed" in str(info.value)
    assert "DO-NOT-LEAK" not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_secret_pasted_into_env_field_is_refused_without_echo(tmp_path: Path) -> None:
    path = write(tmp_path, "pasted.yaml", with_changes(credentials={"env": "sk-live-DO-NOT-LEAK"}))
    with pytest.raises(ProfileError) as info:
        load_profile(path, {})
    assert "credentials.env" in str(info.value)
    assert "DO-NOT-LEAK" not in str(info.value)


def test_inline_webhook_secret_is_refused(tmp_path: Path) -> None:
    hooks = {"scheme": "standard", "secret": {"value": "whsec_abc"}}
    path = write(tmp_path, "hook.yaml", with_changes(webhooks=hooks))
    with pytest.raises(ProfileError, match="webhooks.secret: inline secrets are not allowed"):
        load_profile(path, {})


def profile_with(**changes: Any) -> Profile:
    return Profile.model_validate(with_changes(**changes))


def test_bearer_credential_resolves_at_call_time_and_hides_its_value() -> None:
    profile = profile_with(credentials={"env": "ACME_TOKEN"})
    credential = profile.resolve_credential({"ACME_TOKEN": "tok-123"})
    assert credential is not None
    assert credential.header == "Authorization"
    assert credential.value.reveal() == "Bearer tok-123"
    assert credential.secret.reveal() == "tok-123"
    for text in (repr(credential), str(credential.value), repr(credential.secret)):
        assert "tok-123" not in text
    assert "tok-123" not in repr(profile) and "tok-123" not in str(profile.model_dump())


def test_header_credential_from_file(tmp_path: Path) -> None:
    secret_file = tmp_path / "key.txt"
    secret_file.write_text("file-key-9\n")
    creds = {"type": "header", "header": "X-Api-Key", "file": str(secret_file)}
    credential = profile_with(credentials=creds).resolve_credential({})
    assert credential is not None
    assert (credential.header, credential.value.reveal()) == ("X-Api-Key", "file-key-9")


def test_missing_credential_required_raises_optional_gives_none() -> None:
    required = profile_with(credentials={"env": "ACME_TOKEN"})
    with pytest.raises(CredentialError, match="env ACME_TOKEN is not set"):
        required.resolve_credential({})
    optional = profile_with(credentials={"env": "ACME_TOKEN", "optional": True})
    assert optional.resolve_credential({}) is None
    assert profile_with().resolve_credential({"ACME_TOKEN": "x"}) is None


def test_header_type_needs_a_header_and_exactly_one_source(tmp_path: Path) -> None:
    for creds in ({"type": "header", "env": "K"}, {"env": "K", "file": "/k"}, {"type": "bearer"}):
        path = write(tmp_path, "c.yaml", with_changes(credentials=creds))
        with pytest.raises(ProfileError, match="c.yaml: credentials"):
            load_profile(path, {})


def test_webhook_secret_resolves_by_reference() -> None:
    mock = load_profiles(None, {})["mock"]
    secret = mock.resolve_webhook_secret({"JOBGATE_MOCK_WEBHOOK_SECRET": "whsec_x"})
    assert secret is not None and secret.reveal() == "whsec_x" and "whsec_x" not in repr(secret)
    assert mock.resolve_webhook_secret({}) is None


# -- JSON pointers (RFC 6901) ---------------------------------------------------------------


def test_pointer_escaping_and_lookup() -> None:
    doc = {"a/b": {"m~n": [10, {"x": None}]}, "": 1}
    assert pointers.get(doc, "/a~1b/m~0n/0") == 10
    assert pointers.get(doc, "/a~1b/m~0n/1/x") is None
    assert pointers.get(doc, "/a~1b/m~0n/2") is pointers.MISSING
    assert pointers.get(doc, "/a~1b/m~0n/01") is pointers.MISSING
    assert pointers.get(doc, "/") == 1
    assert pointers.get(doc, "") is doc
    assert pointers.get(doc, None) is pointers.MISSING
    assert pointers.get("scalar", "/x") is pointers.MISSING
    assert pointers.parse("/~01") == ("~1",)
    assert pointers.escape("a/~b") == "a~1~0b"
    with pytest.raises(pointers.PointerError):
        pointers.parse("/bad~")


def test_pointer_set_creates_objects() -> None:
    doc: dict[str, Any] = {"keep": 1}
    pointers.set_value(doc, "/metadata/jobgate~1ref", "op_1")
    assert doc == {"keep": 1, "metadata": {"jobgate/ref": "op_1"}}
    with pytest.raises(pointers.PointerError):
        pointers.set_value(doc, "/keep/x", 2)
    with pytest.raises(pointers.PointerError):
        pointers.set_value(doc, "", 2)


def test_the_manual_search_hint_follows_an_overridden_base_url() -> None:
    from app.providers.language.loader import BUILTIN_DIR, load_profile

    path = BUILTIN_DIR / "google_translate.yaml"
    moved = load_profile(path, {"JOBGATE_GOOGLE_TRANSLATE_BASE_URL": "http://127.0.0.1:9"})
    assert moved.manual_search.list_call == (
        "GET http://127.0.0.1:9/v3/projects/{project}/locations/{location}/operations"
    )
    assert "translation.googleapis.com" in (load_profile(path, {}).manual_search.list_call or "")
    # The variables are filled where a person reads it; an unset one is named, never blank.
    env = {"GOOGLE_CLOUD_PROJECT": "my-proj"}
    call, _ = moved.manual_search.filled(moved.var_values(env))
    assert call == "GET http://127.0.0.1:9/v3/projects/my-proj/locations/us-central1/operations"
    call, _ = moved.manual_search.filled(moved.var_values({}))
    assert call == "GET http://127.0.0.1:9/v3/projects/PROJECT/locations/us-central1/operations"
