"""Texts of a validator's certification: the per-keyword table, and each failure explained.

`format_failures` and `format_disagreement` end with "Reproduce with:" and Python that calls the
validator on the failing pair.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Final

from axm_conformance._validation._differential import DifferentialReport, Disagreement
from axm_conformance._validation._suite import KeywordRow, SuiteReport

_INDENT: Final = "    "


def format_table(
    suite: SuiteReport | None = None,
    differentials: Iterable[DifferentialReport] = (),
    *,
    hide_empty: bool = True,
) -> str:
    """A Bowtie-like table, one row per keyword: suite cases, then the differential runs (those
    of one keyword add up).

    With ``hide_empty``, rows with no case run and no differential run are left out (their
    skipped cases still count in the total).
    """
    runs = list(differentials)
    rows: dict[str, KeywordRow] = {}
    for row in suite.rows() if suite else []:
        rows[row.keyword] = row
    for report in runs:  # several runs of one keyword (at several seeds) add up
        base = rows.get(report.keyword, KeywordRow(report.keyword))
        rows[report.keyword] = replace(
            base,
            draft=report.draft,
            fuzzed=(base.fuzzed or 0) + report.examples,
            disagreements=(base.disagreements or 0) + len(report.disagreements),
            ambiguous=base.ambiguous + report.ambiguous,
            oracle=base.oracle + report.oracle,
        )
    validator = suite.validator if suite else runs[0].validator if runs else ""
    return format_rows(validator, rows.values(), hide_empty=hide_empty)


def format_rows(validator: str, rows: Iterable[KeywordRow], *, hide_empty: bool = True) -> str:
    """The table of `format_table`, from its rows, under the validator's name (none when "").

    passed, failed, errored and skipped count suite cases; ambiguous and oracle count the
    differential pairs the specification leaves open and those where the oracle alone
    disagrees; fuzzed and disagreements are the examples and minimal pairs of the differential.
    """
    rows = list(rows)
    header = (
        *("keyword", "draft", "passed", "failed", "errored", "skipped", "ambiguous", "oracle"),
        *("fuzzed", "disagreements"),
    )
    counted = header[2:8]
    total = [sum(getattr(r, name) for r in rows) for name in counted]
    fuzzed = [r for r in rows if r.fuzzed is not None]
    lines: list[list[str]] = [list(header)]
    for row in rows:
        ran = row.passed + row.failed + row.errored
        if hide_empty and not ran and row.fuzzed is None:
            continue
        mark = "" if row.ok else "  <-"
        lines.append(
            [
                row.keyword,
                row.draft,
                *(str(getattr(row, name)) for name in counted),
                "-" if row.fuzzed is None else str(row.fuzzed),
                ("-" if row.disagreements is None else str(row.disagreements)) + mark,
            ]
        )
    drafts = {row.draft for row in rows}
    lines.append(
        [
            "total",
            drafts.pop() if len(drafts) == 1 else "",
            *(str(n) for n in total),
            str(sum(r.fuzzed or 0 for r in fuzzed)),
            str(sum(r.disagreements or 0 for r in fuzzed)),
        ]
    )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = [f"validator: {validator}"] if validator else []
    for index, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:-1], widths[1:], strict=True)
        ]
        out.append("  ".join([*cells, line[-1]]).rstrip())
        if index == 0 or index == len(lines) - 2:
            out.append("-" * len(out[-1]))
    return "\n".join(out)


def _printable(text: str) -> str:
    """`text` on one line: control characters (a newline in a key) escaped as in Python."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _valid(valid: bool) -> str:
    return "valid" if valid else "invalid"


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if not text.isprintable():  # control characters would print as nothing
        text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text):,} characters)"


def _snippet(ref: str, schema: Any, instance: Any) -> list[str]:
    """Python that calls the validator on one pair, importing it directly when it can."""
    module, _, attribute = ref.partition(":")
    if attribute.isidentifier():
        lines = [f"from {module} import {attribute} as validate"]
    elif attribute:
        lines = [
            "from axm_conformance._validation import load_validator",
            f"validate = load_validator({ref!r})",
        ]
    else:
        lines = ["validate = ...  # the validator under test"]
    return [
        *lines,
        f"schema = {schema!r}",
        f"instance = {instance!r}",
        "print(validate(instance, schema))",
    ]


_STATUS: Final = {
    "failed": "",
    "errored": "",
    "ambiguous": "ambiguous, not a failure: ",
    "oracle": "the oracle's deviation, not the validator's: ",
}


def format_disagreement(found: Disagreement) -> str:
    """What the validator did on the pair, and why it is no failure when it is not; ending with
    Python that calls it on the pair."""
    expected = _valid(found.expected)
    if found.mutation:
        expected += f" ({found.mutation}: {_printable(found.detail)})"
    said = f"{_printable(found.error)}" if found.got is None else _valid(found.got)
    draft = "" if found.draft == "2020-12" else f", draft={found.draft!r}"
    lines = [
        f"{found.validator}: {found.keyword}: {_STATUS[found.status]}{found.what}",
        f"  schema:     {_json(found.schema)}",
        f"  instance:   {_json(found.instance)}",
        f"  oracle:     {expected} (draft {found.draft})",
        f"  validator:  {said}",
    ]
    if found.third is not None:
        lines.append(f"  jsonschema-rs: {_valid(found.third)}")
    if found.reason:
        lines.append(f"  because:    {found.reason}")
    lines += [
        f"  found by:   differential({found.validator!r}, {found.keyword!r}, "
        f"examples={found.examples}, seed={found.seed}{draft})",
        "Reproduce with:",
    ]
    lines += [_INDENT + line for line in _snippet(found.validator, found.schema, found.instance)]
    return "\n".join(lines)


def format_failures(report: SuiteReport, keyword: str | None = None, limit: int = 10) -> str:
    """The suite cases a validator got wrong (of one row, or all), then how to reproduce one."""
    failures = [r for r in report.failures if keyword is None or r.case.keyword == keyword]
    if not failures:
        return f"{report.validator}: every selected case passed"
    lines = [f"{report.validator}: {len(failures)} suite case(s) wrong"]
    for result in failures[:limit]:
        case = result.case
        lines += [
            f"- {case.id}: {result.status}, {result.detail}",
            f"    schema: {_json(case.schema)}",
            f"    data:   {_json(case.data)} (the suite says {_valid(case.valid)})",
        ]
    if len(failures) > limit:
        lines.append(f"... and {len(failures) - limit} more")
    first = failures[0].case
    lines.append("Reproduce with:")
    lines += [_INDENT + line for line in _snippet(report.validator, first.schema, first.data)]
    return "\n".join(lines)
