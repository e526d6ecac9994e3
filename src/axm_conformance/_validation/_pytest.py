"""The validators' pytest plugin: one item per (validator, keyword, engine), then their tables.

Each validator is judged in a worker process of its own (`IsolatedValidator`), one per pytest
process, so that one hanging on a schema costs that pair the timeout and nothing more. Each item
records its row of the validator's table as it runs; the record travels with the item's report,
so that the tables are built where the reports arrive (the controller, under xdist).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._pytest_shared import CheckFailed, KitItem, add_items, read_setting
from axm_conformance._refs import LoadError
from axm_conformance._settings import Settings, derived_seed
from axm_conformance._validation._differential import differential
from axm_conformance._validation._format import format_disagreement, format_failures, format_rows
from axm_conformance._validation._isolation import IsolatedValidator
from axm_conformance._validation._load import load_keywords, load_validator
from axm_conformance._validation._oracle import DRAFTS, draft_of_metaschema
from axm_conformance._validation._schemas import differential_keywords
from axm_conformance._validation._suite import KeywordRow, run_suite, skipped_rows, suite_cases

__all__ = ["ValidatorItem", "ValidatorPlugin"]


# Identity, not equality: pytest keeps its plugins in sets.
@dataclass(eq=False)
class ValidatorPlugin:
    """Collects the validators' items, and prints each validator's table from what they found."""

    settings: Settings
    refs: list[str]
    claim: frozenset[str] | None
    draft: str = "2020-12"
    records: list[dict[str, Any]] = field(default_factory=list)
    isolated: dict[str, IsolatedValidator] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: pytest.Config, settings: Settings) -> ValidatorPlugin:
        """The validators to certify, the keywords they claim and their draft; bad ones are
        usage errors."""
        refs, where = read_setting(config, "axm_validators")
        keywords, keywords_where = read_setting(config, "axm_validator_keywords")
        try:
            claim = load_keywords(keywords or "all")
        except LoadError as exc:
            raise pytest.UsageError(f"{keywords_where}: {exc}") from None
        for ref in refs:
            try:
                load_validator(ref)
            except LoadError as exc:
                raise pytest.UsageError(f"{where}: {exc}") from None
        return cls(settings, list(refs), claim, _draft(config, keywords or ""))

    def validator(self, ref: str) -> IsolatedValidator:
        """The validator, judged in its worker (started on first use)."""
        if ref not in self.isolated:
            self.isolated[ref] = IsolatedValidator(ref, self.settings)
        return self.isolated[ref]

    def pytest_sessionfinish(self) -> None:
        for isolated in self.isolated.values():
            isolated.close()

    # tryfirst, as the tools' plugin: the items are there by the time -k and -m deselect.
    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        suite_rows = sorted({case.keyword for case in suite_cases(self.claim, self.draft)})
        fuzz_rows = differential_keywords(self.claim, self.draft)
        collected: list[pytest.Item] = [
            ValidatorItem.from_parent(
                session,
                name=f"{ref}[{keyword}]::{kind}",
                nodeid=f"{ref}[{keyword}]::{kind}",
                plugin=self,
                ref=ref,
                keyword=keyword,
                kind=kind,
            )
            for ref in self.refs
            for kind, rows in (("suite", suite_rows), ("differential", fuzz_rows))
            for keyword in rows
        ]
        add_items(config, items, collected)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        if isinstance(item, ValidatorItem) and item.axm_row is not None and call.when == "call":
            # Travels with the report, so pytest-xdist brings it back to the controller.
            outcome.get_result().axm_row = item.axm_row

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = getattr(report, "axm_row", None)
        if row is not None:
            self.records.append(row)

    # tryfirst: the validators' tables come before the tools' summary.
    @pytest.hookimpl(tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        ran = {record["validator"] for record in self.records}
        if not ran:
            return
        terminalreporter.section("axm-conformance validators")
        for ref in self.refs:
            if ref in ran:
                terminalreporter.write_line(ref)
                terminalreporter.write_line(format_rows(ref, self._rows(ref)))
                notes = (r["notes"] for r in self.records if r["validator"] == ref)
                for note in itertools.chain.from_iterable(notes):
                    terminalreporter.write_line("\n" + note)

    def _rows(self, ref: str) -> Iterable[KeywordRow]:
        """The validator's table: what its items found, over the cases its claim skips."""
        rows = {row.keyword: row for row in skipped_rows(self.claim, self.draft)}
        for record in self.records:
            if record["validator"] == ref:
                keyword = record["keyword"]
                base = rows.get(keyword, KeywordRow(keyword, self.draft))
                rows[keyword] = replace(base, **record["found"])
        return rows.values()


def _draft(config: pytest.Config, keywords: str) -> str:
    """The draft the option or ini names, else the one the claim's meta-schema names, else
    2020-12; a usage error for an unknown draft, or one the claim contradicts."""
    draft, where = read_setting(config, "axm_validator_draft")
    claimed = draft_of_metaschema(keywords)
    if draft is None:
        return claimed or "2020-12"
    draft = str(draft).strip().removeprefix("draft").removeprefix("-")
    if draft not in DRAFTS:
        raise pytest.UsageError(
            f"{where}: unknown JSON Schema draft {draft!r}: use one of {', '.join(DRAFTS)}"
        )
    if claimed is not None and claimed != draft:
        raise pytest.UsageError(
            f"{where}: draft {draft}, but the claimed keywords are draft {claimed}'s meta-schema: "
            "name one draft"
        )
    return draft


class ValidatorItem(KitItem):
    """One keyword of a validator: its JSON-Schema-Test-Suite cases, or differential fuzzing."""

    def __init__(
        self, *, plugin: ValidatorPlugin, ref: str, keyword: str, kind: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.plugin = plugin
        self.ref = ref
        self.keyword = keyword
        self.kind = kind
        self.axm_row: dict[str, Any] | None = None  # its row of the table, once it has run
        self.user_properties += [("axm_validator", ref), ("axm_keyword", keyword)]

    def runtest(self) -> None:
        plugin = self.plugin
        validator = plugin.validator(self.ref)
        if self.kind == "suite":
            report = run_suite(validator, plugin.claim, only=[self.keyword], draft=plugin.draft)
            (row,) = (row for row in report.rows() if row.keyword == self.keyword)
            self._found(
                passed=row.passed, failed=row.failed, errored=row.errored, skipped=row.skipped
            )
            if not report.ok:
                raise CheckFailed(format_failures(report, self.keyword))
            return
        seed = plugin.settings.seed
        found = differential(
            validator,
            self.keyword,
            examples=plugin.settings.examples,
            seed=derived_seed(self.ref, self.keyword) if seed is None else seed,
            keywords=plugin.claim,
            draft=plugin.draft,
        )
        self._found(
            [format_disagreement(x) for x in found.allowed],
            fuzzed=found.examples,
            disagreements=len(found.disagreements),
            ambiguous=found.ambiguous,
            oracle=found.oracle,
        )
        if not found.ok:
            raise CheckFailed("\n\n".join(format_disagreement(x) for x in found.disagreements))

    def _found(self, notes: list[str] | None = None, **counts: int) -> None:
        # Plain data: pytest-xdist sends a report's attributes as such. The notes explain the
        # first ambiguous and oracle-only pair, which fail nothing.
        self.axm_row = {
            "validator": self.ref,
            "keyword": self.keyword,
            "found": counts,
            "notes": notes or [],
        }

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.ref}[{self.keyword}]::{self.kind}"
