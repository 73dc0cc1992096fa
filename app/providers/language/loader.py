"""Reading profile files: YAML in, a validated `Profile` out, every problem reported at
once with its file and dotted field; the built-in profiles, then an operator's directory;
`base_url_env` and the adapter a profile names applied on the way."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from app.providers.language import adapter as adapters
from app.providers.language.profile import VERSION, FieldProblems, Profile
from app.providers.language.spec_lookup import ManualSearch
from app.providers.language.spec_requests import check_origin

BUILTIN_DIR = Path(__file__).resolve().parents[1] / "profiles"


class ProfileError(Exception):
    """A profile file is unreadable or invalid; the message names the file and field.

    ``problems`` holds one line per problem (file: dotted.field: what is wrong)."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


def _moved(profile: Profile, base_url: str) -> ManualSearch:
    """The manual search hint with the base URL moved too: a person told to list a
    provider's jobs is sent where this gateway really calls (a regional host, a fake),
    never to the production host the file names."""
    search = profile.manual_search
    method, _, url = (search.list_call or "").partition(" ")
    old = profile.base_url.rstrip("/")
    if not url.startswith(old):
        return search
    return search.model_copy(
        update={"list_call": f"{method} {base_url.rstrip('/')}{url[len(old) :]}"}
    )


def _format_errors(source: str, exc: ValidationError) -> list[str]:
    # Only locations and messages: pydantic's own str() echoes input values,
    # which could be a pasted secret.
    parts = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        cause = (err.get("ctx") or {}).get("error")
        found = cause.problems if isinstance(cause, FieldProblems) else None
        for where, msg in found or [("", err["msg"].removeprefix("Value error, "))]:
            path = ".".join([*loc, where] if where else loc) or "(top level)"
            parts.append(f"{source}: {path}: {msg[:1].lower()}{msg[1:]}")
    return parts


def _read(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ProfileError(f"{path}: invalid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: (top level): must be a mapping")
    return data


def load_profile(path: Path, env: Mapping[str, str]) -> Profile:
    """Load and validate one profile file, applying ``base_url_env`` from ``env``.

    Every problem is reported at once, one per field; a file without ``version: 2`` is
    still checked as v2, so its author sees what else to change.
    """
    data = _read(path)
    problems = []
    if data.get("version") != VERSION:
        problems.append(
            f"{path}: version: must be {VERSION} (profile language v{VERSION}); a profile "
            "without it is v1, which is no longer read: docs/profiles.md says what changed"
        )
    try:
        profile = Profile.model_validate({**data, "version": VERSION})
    except ValidationError as exc:
        problems += _format_errors(str(path), exc)
    if problems:
        raise ProfileError("; ".join(problems), problems) from None  # never the input values
    override = env.get(profile.base_url_env, "") if profile.base_url_env else ""
    if override:
        try:
            check_origin(override)
        except ValueError as exc:
            raise ProfileError(f"{path}: base_url_env ({profile.base_url_env}): {exc}") from None
        profile = profile.model_copy(
            update={"base_url": override, "manual_search": _moved(profile, override)}
        )
    if profile.adapter is not None:
        try:
            profile.with_hooks(adapters.load(path.parent, profile.adapter, profile.name))
        except adapters.AdapterError as exc:
            raise ProfileError(f"{path}: adapter: {exc}") from None
    return profile


def load_profiles(extra_dir: Path | None, env: Mapping[str, str]) -> dict[str, Profile]:
    """Load the built-in profiles, then ``extra_dir/*.yaml``; a duplicate name is an error."""
    files = sorted(BUILTIN_DIR.glob("*.yaml"))
    if extra_dir is not None:
        if not extra_dir.is_dir():
            raise ProfileError(f"{extra_dir}: profiles directory does not exist")
        files += sorted(extra_dir.glob("*.yaml"))
    profiles: dict[str, Profile] = {}
    origin: dict[str, Path] = {}
    for path in files:
        profile = load_profile(path, env)
        if profile.name in profiles:
            first = origin[profile.name]
            raise ProfileError(f"{path}: name: profile {profile.name!r} is already in {first}")
        profiles[profile.name] = profile
        origin[profile.name] = path
    return profiles
