"""The written contract in ``conformance/`` documents every registered check, and its links hold.

Driven by the check registry: a check registered without a section ``## `ID` `` on the page of its
group (``conformance/checks-GROUP.md``), quoting its title, fails here with its id in the test id
and in the message. Driven by the protocol registry: every protocol has a page
(``conformance/protocol-NAME.md``) whose table ``| check | applies |`` names every check once,
and says "never" for a check that requires a capability the protocol lacks. Every relative link
of ``conformance/*.md`` must reach an existing file, and an existing heading when it carries a
``#fragment`` (GitHub-style anchors). What the contract quotes of the code (the number of hung
calls that stops the kit, a message) is the code's.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import zoo_plain
from axm_conformance._checks import CHECKS, Check, CheckContext
from axm_conformance._engine._state import MAX_CRASHES
from axm_conformance.protocols import protocol_for, registered

CONTRACT = Path(__file__).resolve().parents[2] / "conformance"
INDEX = CONTRACT / "README.md"

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_CHECK_HEADING = re.compile(r"^`([^`]+)`$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Section:
    """A section ``## `ID` `` of a checks page: the id, where it is, its text up to the next."""

    check_id: str
    page: Path
    line: int
    body: str


def page_of(group: str) -> Path:
    return CONTRACT / f"checks-{group}.md"


def rel(path: Path) -> str:
    return path.relative_to(CONTRACT.parent).as_posix()


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks; a fence line itself is left out."""
    lines: list[tuple[int, str]] = []
    fence = ""
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if match and (not fence or match.group(1) == fence):
            fence = "" if fence else match.group(1)
            continue
        if not fence:
            lines.append((number, line))
    return lines


@cache
def headings(path: Path) -> tuple[Heading, ...]:
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if match:
            found.append(Heading(len(match.group(1)), match.group(2), number))
    return tuple(found)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading: its text
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """Every anchor of a page; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(path):
        base = slug(heading.text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return frozenset(result)


@cache
def sections() -> tuple[Section, ...]:
    """Every ``## `ID` `` section of every checks page."""
    found = []
    for page in sorted(CONTRACT.glob("checks-*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        level_two = [h for h in headings(page) if h.level <= 2]
        for index, heading in enumerate(level_two):
            match = _CHECK_HEADING.match(heading.text)
            if heading.level != 2 or not match:
                continue
            end = level_two[index + 1].line - 1 if index + 1 < len(level_two) else len(lines)
            body = "\n".join(lines[heading.line : end])
            found.append(Section(match.group(1), page, heading.line, body))
    return tuple(found)


def sections_of(check_id: str) -> list[Section]:
    return [section for section in sections() if section.check_id == check_id]


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every Markdown link outside code."""
    found = []
    for number, line in prose_lines(path.read_text(encoding="utf-8")):
        for match in _LINK.finditer(_INLINE_CODE.sub("", line)):
            found.append((number, match.group(1)))
    return found


CHECK_IDS = list(CHECKS)
PAGES = sorted(CONTRACT.glob("*.md"))


def test_the_registry_and_the_contract_are_not_empty() -> None:
    assert CHECKS, "no check is registered"
    assert INDEX.is_file(), f"{rel(INDEX)} is missing"


def index_row(check: Check) -> str:
    """The row of the index's table of checks for ``check``, linking to its section."""
    anchor = slug(f"`{check.id}`")
    return (
        f"| [`{check.id}`]({page_of(check.group).name}#{anchor}) | {check.group} | {check.title} |"
    )


@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_every_check_is_documented(check_id: str) -> None:
    """One section on the page of the check's group, quoting its title; one row in the index."""
    check = CHECKS[check_id]
    page = page_of(check.group)
    found = sections_of(check_id)
    problems = []
    if not found:
        missing = "" if page.is_file() else " (the page does not exist yet)"
        problems.append(f"add a section '## `{check_id}`' to {rel(page)}{missing}")
    elif len(found) > 1:
        where = ", ".join(f"{rel(section.page)}:{section.line}" for section in found)
        problems.append(f"it has {len(found)} sections, one is allowed: {where}")
    for section in found:
        if section.page != page:
            problems.append(
                f"its section {rel(section.page)}:{section.line} belongs in {rel(page)}"
            )
        if check.title not in section.body:
            problems.append(
                f"its section {rel(section.page)}:{section.line} does not quote the title "
                f"verbatim: {check.title!r}"
            )
    rows = {line.strip() for _, line in prose_lines(INDEX.read_text(encoding="utf-8"))}
    if index_row(check) not in rows:
        problems.append(f"{rel(INDEX)} has no row for it in its table: {index_row(check)}")
    assert not problems, (
        f"check {check_id!r} (group {check.group!r}) is not documented as the contract "
        "requires:\n- " + "\n- ".join(problems)
    )


def test_every_section_names_a_registered_check() -> None:
    unknown = [
        f"{rel(section.page)}:{section.line}: {section.check_id!r}"
        for section in sections()
        if section.check_id not in CHECKS
    ]
    assert not unknown, "sections for checks that are not registered: " + "; ".join(unknown)


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for number, target in links(page):
        if _SCHEME.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        destination = (page.parent / path_part).resolve() if path_part else page
        if not destination.exists():
            broken.append(f"line {number}: {target} (no file {path_part})")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"line {number}: {target} (no heading #{fragment} in {destination.name})")
    assert not broken, f"broken links in {rel(page)}:\n" + "\n".join(broken)


def test_the_slugs_are_those_github_makes() -> None:
    assert slug("`name-valid`") == "name-valid"
    assert slug("How a tool is recognised") == "how-a-tool-is-recognised"
    assert slug("Outcomes: passed, failed, skipped") == "outcomes-passed-failed-skipped"
    assert slug("The `tool_use` protocol") == "the-tool_use-protocol"


# The table of a protocol page that says, per check, when it applies to the protocol's tools.
APPLIES_HEADER = "| check | applies |"


@dataclass(frozen=True)
class AppliesRow:
    line: int
    check_ids: tuple[str, ...]
    applies: str


def protocol_page(name: str) -> Path:
    return CONTRACT / f"protocol-{name}.md"


def applies_rows(page: Path) -> list[AppliesRow]:
    """The rows of the page's table ``| check | applies |``: the checks (in backticks) of the
    first cell, and the second cell."""
    rows: list[AppliesRow] = []
    inside = False
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        text = line.strip()
        if text == APPLIES_HEADER:
            inside = True
        elif inside and not text.startswith("|"):
            break
        elif inside and not re.fullmatch(r"[|\s:-]+", text):
            first, applies = (cell.strip() for cell in text.strip("|").split("|", 1))
            rows.append(AppliesRow(number, tuple(re.findall(r"`([^`]+)`", first)), applies))
    return rows


PROTOCOLS = list(registered())


def test_every_protocol_page_is_of_a_registered_protocol() -> None:
    pages = {page.stem.removeprefix("protocol-") for page in CONTRACT.glob("protocol-*.md")}
    assert pages - set(PROTOCOLS) == set(), "pages of protocols that are not registered"


@pytest.mark.parametrize("name", PROTOCOLS)
def test_every_protocol_page_says_when_each_check_applies(name: str) -> None:
    page = protocol_page(name)
    assert page.is_file(), f"protocol {name!r} is registered: add {rel(page)}"
    rows = applies_rows(page)
    assert rows, f"{rel(page)} has no table '{APPLIES_HEADER}'"
    named = Counter(check_id for row in rows for check_id in row.check_ids)
    protocol = registered()[name]
    problems = [f"no row names {check_id!r}" for check_id in CHECKS if check_id not in named]
    problems += [
        f"{check_id!r} is named {count} times" for check_id, count in named.items() if count > 1
    ]
    problems += [
        f"{check_id!r} is not a registered check" for check_id in named if check_id not in CHECKS
    ]
    for row in rows:
        for check_id in row.check_ids:
            requires = CHECKS[check_id].requires if check_id in CHECKS else ()
            lacking = [need for need in requires if need not in protocol.capabilities]
            if lacking and not row.applies.startswith("never"):
                problems.append(
                    f"line {row.line}: {check_id!r} requires {', '.join(lacking)}, which the "
                    f"{protocol.title} protocol does not offer: the row must say 'never'"
                )
    assert not problems, f"the table '{APPLIES_HEADER}' of {rel(page)}:\n- " + "\n- ".join(problems)


def test_the_table_parser_reads_every_row() -> None:
    rows = applies_rows(protocol_page("axm"))
    assert rows[0].check_ids == ("protocol-shape", "name-valid", "name-unique", "callable-shape")
    assert rows[0].applies == "always"
    assert any(row.applies.startswith("never") for row in rows)


def test_the_documented_crash_limit_is_the_engines() -> None:
    """After this many hung or crashed calls the kit stops calling a tool; the pages say so."""
    stated = re.compile(r"after (\d+) calls (?:that )?hung", re.IGNORECASE)
    for page in (INDEX, page_of("calls")):
        numbers = stated.findall(" ".join(page.read_text(encoding="utf-8").split()))
        assert numbers, f"{rel(page)} no longer says after how many hung calls the kit stops"
        assert set(numbers) == {str(MAX_CRASHES)}, (
            f"{rel(page)} says the kit stops after {' and '.join(sorted(set(numbers)))} hung "
            f"calls; the engine stops after {MAX_CRASHES} (MAX_CRASHES)"
        )


def test_the_protocol_shape_example_is_what_the_check_says() -> None:
    subject = protocol_for(zoo_plain.Calculator(), "zoo_plain:Calculator").describe()
    (finding,) = CHECKS["protocol-shape"].findings(subject, None, CheckContext(settings=None))
    (section,) = sections_of("protocol-shape")
    assert f"    - {finding.text}" in section.body.splitlines(), (
        f"{rel(section.page)}:{section.line}: the example should show: {finding.text}"
    )
