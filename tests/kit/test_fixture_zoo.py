"""The kit on every fixture tool: it must fail exactly the checks the manifest lists.

A missed defect, an extra failure on a defective tool, and any failure on a correct tool (a false
positive) each fail the tool's test with a message that says which. The detection table per
protocol is printed at the end of the run (see ``pytest_terminal_summary`` in conftest).
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._settings import parse_exemptions
from tests.conftest import FIXTURES

MANIFEST: list[dict[str, Any]] = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
SEED = 20261122


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["ref"] for entry in MANIFEST])
def test_kit_fails_exactly_the_listed_checks(entry: dict[str, Any], record_property: Any) -> None:
    refs = [entry["ref"], *entry.get("with", [])]
    exempt = parse_exemptions([entry["nondeterministic"]]) if "nondeterministic" in entry else ()
    files = str(FIXTURES / entry["worker_files"]) if "worker_files" in entry else None
    report = check_tool(
        refs, examples=30, seed=SEED, timeout=1.0, nondeterministic=exempt, worker_files=files
    )
    tool = next(tool for tool in report.tools if tool.subject.ref == entry["ref"])
    found = {outcome.check_id for outcome in tool.failed}
    expected = set(entry["fails"])
    warned = {outcome.check_id for outcome in tool.outcomes if outcome.status == "warning"}
    declared = set(entry.get("warns", []))
    # A leaves-no-trace warning can come from another process writing into the project while a
    # call runs (a parallel test, an editor): only a declared one is held to.
    if "leaves-no-trace" not in declared:
        warned.discard("leaves-no-trace")
    assert warned == declared, f"{entry['ref']}: warnings {sorted(warned)}"
    record_property("zoo", (entry["protocol"], sorted(expected), sorted(found)))
    assert tool.subject.protocol == entry["protocol"]
    problems = []
    if expected - found:
        problems.append(f"missed defect: {sorted(expected - found)} did not fail")
    if not expected and found:
        problems.append(f"false positive on a correct tool: {sorted(found)} failed")
    elif found - expected:
        problems.append(f"extra failure: {sorted(found - expected)} failed too")
    details = [
        f"  {outcome.check_id}: {'; '.join(outcome.messages)} input={outcome.input!r}"
        for outcome in tool.failed
    ]
    assert not problems, "\n".join([f"{entry['ref']} ({entry['why']})", *problems, *details])


def test_a_tribunal_entry_point_shadows_its_legacy_homonym(make_distribution: Any) -> None:
    """axm resolves a name published in both axm groups to the tribunal entry: no clash."""
    make_distribution(
        "shadowing-tools",
        {
            "axm.tools": {"make_slug": "zoo_axm:SlugTool", "slug": "zoo_axm:SlugTool"},
            "axm.tribunal.tools": {"make_slug": "zoo_axm:SlugTool"},
        },
        {},
    )
    refs = [
        "entry-point:axm.tools:make_slug",
        "entry-point:axm.tools:slug",
        "entry-point:axm.tribunal.tools:make_slug",
    ]
    report = check_tool(refs, checks=("name-unique",))
    outcomes = {tool.subject.ref: tool.outcome("name-unique") for tool in report.tools}
    legacy = outcomes["entry-point:axm.tools:make_slug"]
    assert (legacy.status, legacy.messages) == (
        "passed",
        ("shadowed by entry-point:axm.tribunal.tools:make_slug, to which axm resolves the name",),
    )
    # A second entry point under another name is a second tool with the same name.
    for ref in ("entry-point:axm.tools:slug", "entry-point:axm.tribunal.tools:make_slug"):
        assert outcomes[ref].status == "failed", outcomes[ref]
    assert outcomes["entry-point:axm.tools:slug"].messages == (
        "the name 'make_slug' is also the name of entry-point:axm.tribunal.tools:make_slug",
    )


def test_without_its_worker_files_a_tool_that_reads_them_is_not_tested() -> None:
    """Every note read_note_file may be asked for is missing: each call is a domain error."""
    report = check_tool("zoo_tricky:read_note_file", examples=5, seed=SEED, timeout=1.0)
    failed = {outcome.check_id: outcome.messages for outcome in report.tools[0].failed}
    assert set(failed) == {"result-type", "result-json", "result-size"}
    assert failed["result-type"][0].startswith("nothing tested: no call returned a value")
