"""Client profiles: what each LLM client accepts of a tool's name and input schema.

A profile is a list of rules, each citing its source (conformance/clients.md); the checks
``portable-to-CLIENT`` judge a tool against the profiles of one client, and the run's summary
gives the table of tools by client (:func:`portability`).
"""

from axm_conformance._clients._profiles import CLIENTS, PROFILES, Profile
from axm_conformance._clients._rules import Breach, Rule

__all__ = [
    "CLIENTS",
    "PROFILES",
    "Breach",
    "Profile",
    "Rule",
    "breaches",
    "portability",
    "portability_table",
]


def breaches(profile: Profile, name: object, schema: object) -> list[Breach]:
    """What a tool of this name and input schema breaks of one profile (its own rules only,
    not those of the profile it adds to)."""
    return list(profile.judge(name, schema))


def portability(name: object, schema: object) -> dict[str, Breach | None]:
    """Per profile, the first rule the tool breaks (those of the profile a strict mode adds to
    first), or None where it is portable."""
    table: dict[str, Breach | None] = {}
    for profile in PROFILES.values():
        found = breaches(profile, name, schema)
        if profile.beyond and table.get(profile.beyond) is not None:
            found = [table[profile.beyond], *found]  # type: ignore[list-item]
        table[profile.id] = found[0] if found else None
    return table


def portability_table(rows: list[list[str]]) -> list[str]:
    """Rows of a tool and, per profile, "ok" or the rule it breaks first, as aligned lines
    under a title and a header; none for no rows."""
    if not rows:
        return []
    header = ["tool", *PROFILES]
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    lines = ["portability to LLM clients (the first rule each breaks: conformance/clients.md):"]
    for row in [header, *rows]:
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return lines
