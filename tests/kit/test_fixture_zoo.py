"""The kit on every fixture tool: it must fail exactly the checks the manifest lists.

A missed defect, an extra failure on a defective tool, and any failure on a correct tool (a false
positive) each fail the tool's test with a message that says which. The detection table per
protocol is printed at the end of the run (see ``pytest_terminal_summary`` in conftest).
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from axm_conformance import check_tool
from axm_conformance._checks import CHECKS
from axm_conformance._outcomes import Status
from axm_conformance._process.parent._worker import Worker, WorkerConfig
from axm_conformance._process.system import _sandbox
from axm_conformance._settings import parse_exemptions
from tests.conftest import FIXTURES, unsupported
from zoo_amplifier import SESSION_FILES

MANIFEST: list[dict[str, Any]] = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
SEED = 20261122
# A tool's verdict, and the checks it fails, must not depend on the seed or on the way it is
# contained. Each tool is certified Linux's way at the first seed (the run the detection table
# reports), and every fourth tool down the manifest once more, in one of the other RUNS taken in
# turn, so that each seed and the portable way (as on macOS) meet a twelfth of every protocol's
# tools; AXM_TEST_EVERY_RUN=1 certifies every tool in every run.
SEEDS = (SEED, 7, 424242)
RUNS = [*((seed, "native") for seed in SEEDS), (SEED, "portable")]
EVERY_RUN = os.environ.get("AXM_TEST_EVERY_RUN") == "1"
VERDICTS = ("failed", "inconclusive", "certified", "certified with warnings")


def test_the_manifest_states_a_verdict_that_agrees_with_the_failing_checks() -> None:
    for entry in MANIFEST:
        assert entry["verdict"] in VERDICTS, entry["ref"]
        assert (entry["verdict"] == "failed") is bool(entry["fails"]), entry["ref"]
        if entry["verdict"] == "certified with warnings":
            assert entry.get("warns"), entry["ref"]


# A hostile tool is certified here once, at the first seed, Linux's way: what is tested is that
# the kit survives it, and test_hostile certifies them all again, in one run each way (the
# portable way, and without the sandbox), holding each to its listed failures; each of its runs
# costs whole timeouts.
def _runs_of(index: int, entry: dict[str, Any]) -> list[tuple[int, str]]:
    if entry.get("hostile"):
        return RUNS[:1]
    if EVERY_RUN:
        return RUNS
    if index % 4:
        return RUNS[:1]
    return [RUNS[0], RUNS[1 + index // 4 % (len(RUNS) - 1)]]


ZOO_RUNS = [
    (entry, seed, way)
    for index, entry in enumerate(MANIFEST)
    for seed, way in _runs_of(index, entry)
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "seed", "way"),
    ZOO_RUNS,
    ids=[f"{entry['ref']}-{seed}-{way}" for entry, seed, way in ZOO_RUNS],
    indirect=["way"],
)
def test_kit_gives_the_listed_verdict_and_fails_exactly_the_listed_checks(
    entry: dict[str, Any], seed: int, way: str, record_property: Any
) -> None:
    if unsupported(entry):
        pytest.skip(unsupported(entry))
    refs = [entry["ref"], *entry.get("with", [])]
    exempt = parse_exemptions([entry["nondeterministic"]]) if "nondeterministic" in entry else ()
    files = str(FIXTURES / entry["worker_files"]) if "worker_files" in entry else None
    report = check_tool(
        refs,
        examples=30,
        seed=seed,
        timeout=1.0,
        nondeterministic=exempt,
        worker_files=files,
        allow_root=entry.get("allow_root", False),
        # A plain function is a tool of the protocol named for it only (Pydantic AI's).
        protocol=entry["protocol"] if entry.get("named") else "auto",
        tool_budget=entry.get("tool_budget", 600.0),
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
    verdict = tool.verdict.verdict
    if verdict == "certified" and warned:
        verdict = "certified with warnings"
    if (seed, way) == RUNS[0]:
        record_property("zoo", (entry["protocol"], sorted(expected), sorted(found)))
    assert tool.subject.protocol == entry["protocol"]
    problems = []
    if expected - found:
        problems.append(f"missed defect: {sorted(expected - found)} did not fail")
    if not expected and found:
        problems.append(f"false positive on a correct tool: {sorted(found)} failed")
    elif found - expected:
        problems.append(f"extra failure: {sorted(found - expected)} failed too")
    if verdict != entry["verdict"]:
        problems.append(f"verdict {verdict!r}, expected {entry['verdict']!r}")
    details = [
        f"  {outcome.check_id} ({outcome.status}): {'; '.join(outcome.messages)} "
        f"input={outcome.input!r}"
        for outcome in tool.outcomes
        if outcome.status in ("failed", "inconclusive") or outcome.not_run
    ]
    assert not problems, "\n".join([f"{entry['ref']} ({entry['why']})", *problems, *details])


# The defects that only a literal of the tool's own source triggers (fixtures/zoo_literals.py).
LITERAL_DEFECTS = [
    entry["ref"]
    for entry in MANIFEST
    if entry["ref"].startswith("zoo_literals:") and entry["fails"]
]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_defects_behind_source_literals_are_found_on_every_seed(seed: int) -> None:
    """At the default 100 examples, whatever the seed (only the check that finds them runs)."""
    assert len(LITERAL_DEFECTS) >= 4
    report = check_tool(LITERAL_DEFECTS, seed=seed, checks=("no-unexpected-exception",))
    outcomes = {tool.subject.ref: tool.outcome("no-unexpected-exception") for tool in report.tools}
    missed = [ref for ref, outcome in outcomes.items() if outcome.status != "failed"]
    assert not missed, f"seed {seed}: missed {missed}"
    for outcome in outcomes.values():
        assert "a literal in the tool's source" in outcome.input_label, outcome


@pytest.mark.slow
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
        (
            "shadowed by entry-point:axm.tribunal.tools:make_slug, to which the AXM runtime "
            "resolves the name",
        ),
    )
    # A second entry point under another name is a second tool with the same name.
    for ref in ("entry-point:axm.tools:slug", "entry-point:axm.tribunal.tools:make_slug"):
        assert outcomes[ref].status == "failed", outcomes[ref]
    assert outcomes["entry-point:axm.tools:slug"].messages == (
        "the name 'make_slug' is also the name of entry-point:axm.tribunal.tools:make_slug",
    )


@pytest.mark.slow
def test_without_its_worker_files_a_tool_that_reads_them_is_inconclusive() -> None:
    """Every note read_note_file may be asked for is missing: each call is a domain error, so the
    result checks judge nothing, the other checks of valid calls saw none served, and each says
    which errors and what would help."""
    report = check_tool("zoo_tricky:read_note_file", examples=5, seed=SEED, timeout=1.0)
    (tool,) = report.tools
    inconclusive = {o.check_id: o.messages for o in tool.outcomes if o.status == "inconclusive"}
    valid = {
        o.check_id
        for o in tool.outcomes
        if CHECKS[o.check_id].per_call
        and CHECKS[o.check_id].feed.name == "valid"
        and o.status != "skipped"
    }
    assert set(inconclusive) == valid >= {"result-type", "result-json", "result-size"}
    assert (tool.verdict.verdict, tool.certified, tool.failed) == ("inconclusive", False, ())
    assert tool.calls["served"] == 0 and tool.calls["refused"] == tool.calls["valid"] > 0
    (message,) = inconclusive["result-type"]
    assert message.startswith("inconclusive: no call returned a value")
    assert "FileNotFoundError (raised through HandlerError) in " in message
    assert message.endswith("or, for a server, the environment it needs (--axm-server-env)")
    (unserved,) = inconclusive["call-completes"]
    assert unserved.startswith(
        f"inconclusive: no valid call was served ({tool.calls['valid']} valid calls: 0 served, "
    )
    assert (
        "the most frequent answers: 'FileNotFoundError (raised through HandlerError)' in"
        in unserved
    )


@pytest.fixture
def modules(make_distribution: Any) -> None:
    """zoo_amplifier's modules, published in amplifier.modules."""
    make_distribution(
        "amplifier-modules",
        {
            "amplifier.modules": {
                "words": "zoo_amplifier:mount",
                "returned": "zoo_amplifier:mount_returning_the_tool",
            }
        },
        {},
    )


@pytest.mark.slow
@pytest.mark.usefixtures("modules")
@pytest.mark.parametrize("name", ["words", "returned"])
def test_an_amplifier_module_is_mounted_as_real_modules_expect(name: str) -> None:
    """Config, session id, capabilities, hooks and cleanups of the coordinator; a returned tool."""
    report = check_tool(f"entry-point:amplifier.modules:{name}", examples=10, seed=SEED)
    (tool,) = report.tools
    assert tool.subject.ref == f"entry-point:amplifier.modules:{name}[todo]"
    assert tool.certified, [(outcome.check_id, outcome.messages) for outcome in tool.failed]


@pytest.mark.slow
@pytest.mark.usefixtures("modules")
def test_a_module_is_cleaned_up_when_its_worker_closes(tmp_path: Path) -> None:
    config = WorkerConfig(
        sys_path=tuple(sys.path),
        workdir=tmp_path,
        setup="axm_conformance._process.child._agent:open_tool",
        setup_args=("entry-point:amplifier.modules:words", "auto", 1 << 20),
        teardown="axm_conformance._process.child._agent:close_tool",
    )
    with Worker(config) as worker:
        assert worker.call("axm_conformance._process.child._agent:describe_all").ok
        assert all((tmp_path / name).exists() for name in SESSION_FILES)
    assert not any((tmp_path / name).exists() for name in SESSION_FILES)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("euid", "options", "refused"),
    [
        (0, {"sandbox": "off"}, True),
        (0, {"sandbox": "off", "allow_root": True}, False),
        (1000, {"sandbox": "off"}, False),
        (0, {"sandbox": "required"}, False),
    ],
    ids=["root", "root-allowed", "not-root", "root-sandboxed"],
)
@pytest.mark.parametrize(
    ("ref", "effects", "declares"),
    [
        ("zoo_tricky:save_note", ("write",), "declares write access"),
        ("zoo_tricky:save_draft", ("unknown",), "declares unknown access"),
    ],
    ids=["declares-writes", "declaration-raises"],
)
def test_a_tool_that_declares_writes_is_not_called_as_root(
    monkeypatch: pytest.MonkeyPatch,
    euid: int,
    options: dict[str, Any],
    refused: bool,
    ref: str,
    effects: tuple[str, ...],
    declares: str,
) -> None:
    """save_note declares write access, save_draft's declaration raises: as root, without a
    sandbox or a worker user, no call is made."""
    if options.get("sandbox") == "required" and _sandbox.support():
        pytest.skip(f"no sandbox here: {_sandbox.support()}")
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    report = check_tool(ref, examples=5, seed=SEED, timeout=1.0, **options)
    (tool,) = report.tools
    assert tool.subject.effects == effects
    assert tool.certified is not refused
    per_call = [outcome for outcome in tool.outcomes if CHECKS[outcome.check_id].per_call]
    called = [o.check_id for o in per_call if o.status not in (Status.SKIPPED, Status.NOT_RUN)]
    assert not called if refused else called
    first = tool.outcome("call-completes").messages[:1]
    assert (first == (REFUSED_AS_ROOT.format(declares=declares),)) is refused


@pytest.mark.slow
def test_a_tool_that_declares_execute_access_is_not_held_to_determinism() -> None:
    """run_probe reports how long its command took: axio promises no determinism, and the tool
    declares that it acts on the world, so the check is skipped, and it is still certified."""
    report = check_tool("zoo_severity:run_probe", examples=5, seed=SEED, allow_root=True)
    (tool,) = report.tools
    outcome = tool.outcome("deterministic")
    assert (outcome.status, outcome.messages) == (
        "skipped",
        (
            "the tool declares execute access, so the same input may meet a changed world, "
            "and the axio protocol does not promise determinism",
        ),
    )
    assert tool.certified, [(outcome.check_id, outcome.messages) for outcome in tool.failed]


REFUSED_AS_ROOT = (
    "not run: the tool {declares} and the kit runs as root without a sandbox or "
    "--axm-worker-user; a skip is never a pass, and the tool is not certified: install "
    "bubblewrap (the sandbox), run it as an unprivileged user (--axm-worker-user=nobody), or "
    "give --axm-allow-root to fuzz it as root"
)
