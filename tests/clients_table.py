"""The portability tables of conformance/clients.md: computed from what the kit reads of real
tools, and read back from the page, so that a test holds them equal."""

from __future__ import annotations

from collections.abc import Iterable

from axm_conformance import Report
from axm_conformance._clients import PROFILES, portability
from tests.conftest import REPO

PAGE = REPO / "conformance" / "clients.md"


def rows(home: str, reports: Iterable[Report]) -> list[str]:
    """One table row per tool of the reports: its home, its name, and per client profile "ok"
    or the first rule it breaks."""
    found = []
    for report in reports:
        for tool in report.tools:
            if tool.subject.kind != "tool":
                continue
            table = portability(tool.subject.name, tool.subject.input_schema)
            cells = [b.rule.id if b is not None else "ok" for b in table.values()]
            found.append(f"| {home} | `{tool.subject.name}` | " + " | ".join(cells) + " |")
    return found


def header(first: str) -> list[str]:
    return [
        f"| {first} | tool | " + " | ".join(f"`{profile}`" for profile in PROFILES) + " |",
        "|---|---|" + "---|" * len(PROFILES),
    ]


def written(section: str, homes: Iterable[str]) -> list[str]:
    """The table rows of these homes under the page's heading ``## {section}``."""
    text = PAGE.read_text(encoding="utf-8").split(f"## {section}\n")[1].split("\n## ")[0]
    wanted = set(homes)
    return [
        line
        for line in text.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip() in wanted
    ]
