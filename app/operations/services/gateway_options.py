"""Gateway-side options sit beside `input` in the create request, never inside it.

`input` is the provider's: a profile sends what it names of it (the mock profile sends
it whole). The request's other fields (`deadlines`, `callback_url`, `labels`,
`approval`, `validation`) are for the gateway alone, so they are never read from
`input` and never sent. An option's name at the top of `input` is a misplaced option
(it would reach the provider, or be silently ignored), refused before anything is
written, unless the kind's requests send that input field by name (Google's
`$input/labels` is the provider's own `labels`).
"""

from __future__ import annotations

from typing import Any

from app.core.http.errors import Invalid
from app.operations.contract.schemas import GATEWAY_OPTIONS
from app.providers.expressions import templates
from app.providers.language.profile import Profile


def sent_input_fields(profile: Profile, kind: str) -> set[str] | None:
    """The top-level input fields the kind's create (and the steps before it) sends by
    name; None when one of them sends the whole input."""
    create = profile.kinds[kind].create
    found: set[str] = set()
    for endpoint in (*create.prepare, create):
        named = templates.input_fields(endpoint.template_parts())
        if named is None:
            return None
        found |= named
    return found


def check_input(profile: Profile, kind: str, input_: dict[str, Any]) -> None:
    """Refuse (422 `gateway_option_in_input`) a gateway option placed inside `input`.

    The kind's templates are walked only when `input` holds an option's name: most
    creates hold none, and the walk is most of this check's cost."""
    named = [k for k in GATEWAY_OPTIONS if k in input_]
    if not named:
        return
    sent = sent_input_fields(profile, kind)
    misplaced = [k for k in named if sent is None or k not in sent]
    if not misplaced:
        return
    name = misplaced[0]
    raise Invalid(
        "gateway_option_in_input",
        f"`input.{name}` is a gateway option, not part of the provider's input: send it "
        f"beside `input`, as the top-level field `{name}` of the create request. `input` "
        "goes to the provider and gateway options never do. Nothing was recorded.",
        {"field": f"input.{name}", "belongs": name, "misplaced": misplaced},
    )
