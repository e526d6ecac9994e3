"""Client checks: whether each LLM client takes the tool's name and input schema.

One check per client (``portable-to-openai``, ...), judging the tool against that client's
profiles (:mod:`axm_conformance._clients`): what the plain mode refuses is a warning, what an
optional mode (a strict mode, Gemini's OpenAPI ``parameters``) cannot take a note saying what the
tool loses; a client the run names (``--axm-clients``) turns its profile's findings into
failures. Where the protocol's runtime keeps a client from meeting what a profile or a rule
finds (``Policy.schema_adapters``: a transformer that rewrites the schema, a mode it never
sends), that finding is a note naming it.
They read the schema only, and call nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._clients import CLIENTS, PROFILES, Breach, Profile, breaches
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import Finding, failure, note, warning

__all__: list[str] = []

# The breaches of one profile shown, before how many more there are.
_SHOWN = 3


def _described(subject: SubjectInfo) -> str | None:
    if subject.protocol == "unknown":
        return "the object matches no tool protocol"
    if subject.schema_error:
        return f"no input schema to judge: {subject.schema_error}"
    return None


def _finding(
    profile: Profile, text: str, named: tuple[str, ...], adapter: str, breach: Breach | None
) -> Finding:
    """A breach of ``profile`` as the run weighs it: a failure where the run names the profile,
    else a note for what the runtime rewrites (``adapter``) or an optional mode cannot take,
    a warning for what a client refuses. Its kind is the rule broken (none for the count of
    breaches not shown)."""
    typed: dict[str, Any] = {
        "kind": breach.rule.id if breach else "",
        "at": breach.at if breach else "",
        "data": {"profile": profile.id},
    }
    if adapter:
        return note(f"{profile.title} would not take it as declared: {text}; {adapter}", **typed)
    if profile.id in named:
        return failure(f"{profile.title}: {text}", **typed)
    if profile.optional:
        return note(f"{profile.title} cannot take it: {text}; {profile.loses}", **typed)
    return warning(f"{profile.title} refuses it: {text}", **typed)


def _judge(client: str) -> Callable[[SubjectInfo, CheckContext], Found]:
    profiles = [profile for profile in PROFILES.values() if profile.client == client]

    def judge(subject: SubjectInfo, context: CheckContext) -> Found:
        named = tuple(context.settings.clients)
        adapters = dict(subject.policy.schema_adapters)
        for profile in profiles:
            found = breaches(profile, subject.name, subject.input_schema)
            for breach in found[:_SHOWN]:
                absorbed = adapters.get(breach.rule.id) or adapters.get(profile.id, "")
                yield _finding(profile, str(breach), named, absorbed, breach)
            if len(found) > _SHOWN:
                more = f"... and {len(found) - _SHOWN} more places"
                yield _finding(profile, more, named, adapters.get(profile.id, ""), None)

    judge.__doc__ = f"The tool's name and input schema are taken by {CLIENTS[client]}."
    judge.__name__ = f"portable_to_{client}"
    return judge


for _client in CLIENTS:
    check(f"portable-to-{_client}", "clients", applies=_described)(_judge(_client))
del _client
