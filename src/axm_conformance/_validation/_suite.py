"""Run a validator on the JSON-Schema-Test-Suite of one draft (4, 6, 7, 2019-09, 2020-12),
shipped with this package.

A test group runs when every keyword its schema uses is claimed, or never constrains (annotations,
the ``$defs`` container); groups that need ``$id``, ``$anchor`` or ``$dynamicRef`` run only when
those are claimed. Groups that refer to the suite's remote documents run when every keyword is
claimed, with the documents served on localhost:1234 (`serve_remotes`); groups that refer to
any other document (a meta-schema on the web) or use a custom meta-schema never run.

The outcome is a table per keyword, the keyword being the suite file it comes from
(``maxLength.json`` is ``maxLength``): cases passed, failed (wrong verdict) and errored (the
validator raised, crashed or returned something that is not a verdict), and skipped (the file's
cases that need what the validator does not claim).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal
from urllib.parse import urldefrag, urljoin

from axm_conformance._schema_keywords import SCHEMA_LISTS, SCHEMA_MAPS, SCHEMA_VALUED
from axm_conformance._validation._load import Crashed, Judged, ValidatorLike, as_claim, resolve
from axm_conformance._validation._oracle import declared, metaschema
from axm_conformance._validation._remotes import is_remote, serve_remotes

Status = Literal["passed", "failed", "errored"]

_SUITE: Final = ("data", "json-schema-test-suite")


@dataclass(frozen=True)
class Case:
    """One test of the suite: the file (its keyword), group, description, schema, data, verdict."""

    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool
    draft: str = "2020-12"
    remote: bool = False  # refers to the suite's remote documents

    @property
    def keyword(self) -> str:
        """The row of the table this case counts in: its file name without ``.json``."""
        return self.file

    @property
    def id(self) -> str:
        return f"{self.file}: {self.group}: {self.description}"


@dataclass(frozen=True)
class LeftOut:
    """A test group not selected, with the number of its tests and what it needs."""

    file: str
    group: str
    tests: int
    needs: tuple[str, ...]


@dataclass(frozen=True)
class CaseResult:
    """How the validator did on one case; `detail` says what went wrong, if anything."""

    case: Case
    status: Status
    detail: str = ""


@dataclass(frozen=True)
class KeywordRow:
    """One row of the table: suite counts, and the differential run when there was one."""

    keyword: str
    draft: str = "2020-12"
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    fuzzed: int | None = None  # examples asked of the differential run
    disagreements: int | None = None
    ambiguous: int = 0  # differential pairs where the specification leaves room
    oracle: int = 0  # differential pairs where the oracle alone disagrees with two validators

    @property
    def ok(self) -> bool:
        return not (self.failed or self.errored or self.disagreements)


# Keywords that never make an instance invalid in 2020-12 (the meta-data, format-annotation and
# content vocabularies), and the containers of schemas that only $ref reaches.
NON_CONSTRAINING: Final = frozenset(
    {"$schema", "$comment", "title", "description", "default", "examples", "deprecated",
     "readOnly", "writeOnly", "format", "contentEncoding", "contentMediaType", "contentSchema",
     "$defs", "definitions"}
)  # fmt: skip
_REMOTE: Final = "a $ref to another document"
_SERVED: Final = "the suite's remote documents"  # a need the kit meets (`serve_remotes`)
_CUSTOM_DIALECT: Final = "a custom $schema"


def _children(keyword: str, value: Any) -> list[Any]:
    """The subschemas in a keyword's value: the walk descends only through these, so that
    property names are never taken for keywords."""
    if keyword in SCHEMA_VALUED:
        return [value]
    if keyword in SCHEMA_LISTS and isinstance(value, list):
        return value
    if keyword in SCHEMA_MAPS and isinstance(value, dict):
        return list(value.values())
    return []  # a value such as enum's or const's is data, not schema


def walk(schema: Any, base: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object subschema with its base URI (changed by ``$id`` on the way down)."""
    if not isinstance(schema, dict):
        return
    identifier = schema.get("$id")
    if isinstance(identifier, str):
        base = _join(base, identifier)
    yield schema, base
    for keyword, value in schema.items():
        for child in _children(keyword, value):
            yield from walk(child, base)


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``, fragment dropped; "" when it cannot be resolved here."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref):
        return urldefrag(ref).url
    if ref.startswith("#"):
        return base
    # urljoin knows hierarchical URIs only (a relative reference against a urn: is not joined).
    return urldefrag(urljoin(base, ref)).url if "://" in base else ""


def _needs(schema: Any, claimed: frozenset[str] | None, draft: str) -> set[str]:
    """What `schema` needs beyond the claimed keywords: keywords, other documents (`_SERVED`
    when the kit serves them all), a meta-schema."""
    if not isinstance(schema, dict):
        return set()  # a boolean schema needs nothing
    walked = list(walk(schema, ""))
    documents = {base for _, base in walked}
    needs: set[str] = set()
    for node, base in walked:
        for keyword, value in node.items():
            if claimed is not None and keyword not in claimed | NON_CONSTRAINING:
                needs.add(keyword)
            if keyword == "$ref" and isinstance(value, str):
                target = _join(base, value)
                if not value.startswith("#") and (not target or target not in documents):
                    needs.add(_SERVED if is_remote(target) else _REMOTE)
            if keyword == "$schema" and str(value).rstrip("#") != metaschema(draft).rstrip("#"):
                needs.add(_CUSTOM_DIALECT)
    return needs


def _suite_files(draft: str) -> list[tuple[str, list[dict[str, Any]]]]:
    folder = resources.files("axm_conformance").joinpath(*_SUITE, f"draft{draft}")
    files = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".json")), key=str)
    return [
        (entry.name.removesuffix(".json"), json.loads(entry.read_text(encoding="utf-8")))
        for entry in files
    ]


@functools.cache
def _suite(draft: str) -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    return tuple((name, tuple(groups)) for name, groups in _suite_files(draft))


def _select(keywords: Iterable[str] | None, draft: str) -> tuple[list[Case], list[LeftOut]]:
    claimed = as_claim(keywords)
    cases: list[Case] = []
    left_out: list[LeftOut] = []
    for name, groups in _suite(draft):
        for group in groups:
            needs = _needs(group["schema"], claimed, draft)
            remote = _SERVED in needs
            if claimed is None:  # fetching other documents is part of a claim of everything
                needs.discard(_SERVED)
            if needs:
                left_out.append(
                    LeftOut(name, group["description"], len(group["tests"]), tuple(sorted(needs)))
                )
                continue
            cases.extend(
                Case(
                    name,
                    group["description"],
                    test["description"],
                    group["schema"],
                    test["data"],
                    test["valid"],
                    draft,
                    remote,
                )
                for test in group["tests"]
            )
    return cases, left_out


def suite_cases(keywords: Iterable[str] | None = None, draft: str = "2020-12") -> list[Case]:
    """Every case of the draft's suite whose schema uses only the claimed keywords.

    ``keywords`` are JSON Schema keywords (``["type", "required", "$ref"]``); None claims them
    all. Annotations and ``$defs`` never need claiming. A ``$ref`` within the document needs only
    ``$ref`` (and ``$id`` or ``$anchor`` when it goes through one); one to the suite's remote
    documents is selected when every keyword is claimed (they are served when it runs); a case
    that needs any other document or a custom meta-schema is never selected.
    """
    return _select(keywords, draft)[0]


@dataclass(frozen=True)
class SuiteReport:
    """The outcome of every selected suite case, and the groups left out."""

    validator: str
    keywords: frozenset[str] | None
    results: tuple[CaseResult, ...]
    left_out: tuple[LeftOut, ...]
    draft: str = "2020-12"

    @property
    def ok(self) -> bool:
        """Whether every selected case passed."""
        return all(result.status == "passed" for result in self.results)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        """The failed and errored cases."""
        return tuple(result for result in self.results if result.status != "passed")

    def for_keyword(self, keyword: str) -> tuple[CaseResult, ...]:
        """The results of one row (a suite file name such as ``maxLength`` or ``ref``)."""
        return tuple(result for result in self.results if result.case.keyword == keyword)

    def rows(self) -> list[KeywordRow]:
        """One row per suite file, in file order: passed, failed, errored, skipped."""
        counts: dict[str, dict[str, int]] = {name: {} for name, _ in _suite(self.draft)}
        for result in self.results:
            row = counts[result.case.keyword]
            row[result.status] = row.get(result.status, 0) + 1
        for group in self.left_out:
            row = counts[group.file]
            row["skipped"] = row.get("skipped", 0) + group.tests
        return [KeywordRow(name, self.draft, **row) for name, row in counts.items()]


def run_suite(
    validator: ValidatorLike | Judged,
    keywords: Iterable[str] | None = None,
    *,
    only: Iterable[str] | None = None,
    draft: str = "2020-12",
) -> SuiteReport:
    """Run the validator on every case of the draft's suite its claimed keywords select.

    ``only`` restricts the run to some rows (suite file names), e.g. ``["maxLength"]`` for one
    pytest item; the groups of other files are then not counted as left out either. Each
    schema is given with its root declaring the draft (`declared`).
    """
    ref, judge = resolve(validator)
    cases, left_out = _select(keywords, draft)
    if only is not None:
        rows = set(as_claim(only) or ())
        cases = [case for case in cases if case.keyword in rows]
        left_out = [group for group in left_out if group.file in rows]
    results = []
    crashed: dict[str, str] = {}  # schema text: how the validator's worker crashed on it
    unserved = serve_remotes() if any(case.remote for case in cases) else ""
    for case in cases:
        if case.remote and unserved:
            results.append(CaseResult(case, "errored", unserved))
            continue
        schema = declared(case.schema, draft)
        text = json.dumps(schema, sort_keys=True)
        try:
            answer = crashed.get(text) or judge(case.data, schema)
        except Crashed as exc:  # the group's other tests would each cost the timeout again
            answer = crashed[text] = f"crashed: {exc}"
        if isinstance(answer, str):
            results.append(CaseResult(case, "errored", answer))
        elif answer is case.valid:
            results.append(CaseResult(case, "passed"))
        else:
            said = "accepted an invalid" if answer else "rejected a valid"
            results.append(CaseResult(case, "failed", f"{said} instance"))
    return SuiteReport(ref, as_claim(keywords), tuple(results), tuple(left_out), draft)


def skipped_rows(keywords: Iterable[str] | None = None, draft: str = "2020-12") -> list[KeywordRow]:
    """One row per suite file, in file order, counting only the tests the claim leaves out.

    The table before any case is run: the rows of the keywords that run are filled in from their
    results.
    """
    left_out = tuple(_select(keywords, draft)[1])
    return SuiteReport("", as_claim(keywords), (), left_out, draft).rows()
