"""Inputs come from the tool's side only: never a literal of the kit's own modules.

Hypothesis mixes the constants of every module it deems local into its draws; with the kit
installed editable (as the README installs it), the kit's modules are local. The tripwire
fixture crashes on any string literal of the kit, so a run that borrowed one fails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from hypothesis import settings

import axm_conformance
from axm_conformance import check_tool
from axm_conformance._engine import _certify

# Hypothesis mixes local constants into its draws from 6.131 on; before, it borrows none.
is_local_module_file = pytest.importorskip(
    "hypothesis.internal.constants_ast", reason="this Hypothesis mixes in no local constants"
).is_local_module_file

pytestmark = pytest.mark.slow

TRIPWIRE = "tripwire:EchoTool"
# Enough draws that, with the kit's constants mixed in, one of them is drawn.
EXAMPLES = 400
SEED = 20261127


@pytest.fixture(autouse=True)
def no_example_database() -> Iterator[None]:
    """No input is replayed from an earlier run: each run draws afresh."""
    previous = settings.get_current_profile_name()
    settings.register_profile("axm-fresh", settings.get_profile(previous), database=None)
    settings.load_profile("axm-fresh")
    yield
    settings.load_profile(previous)


def borrowed(report: object) -> list[str]:
    (tool,) = report.tools  # type: ignore[attr-defined]
    return [
        message
        for outcome in tool.outcomes
        if outcome.status in ("failed", "warning")
        for message in outcome.messages
    ]


def test_the_kit_draws_none_of_its_own_literals() -> None:
    report = check_tool(TRIPWIRE, examples=EXAMPLES, seed=SEED)
    assert borrowed(report) == []
    assert report.certified


def test_without_the_guard_the_tripwire_catches_a_borrowed_literal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The control: the tripwire does catch what Hypothesis borrows when nothing stops it."""
    if not is_local_module_file(axm_conformance.__file__):
        pytest.skip("the kit is not installed editable: Hypothesis borrows none of its literals")
    monkeypatch.setattr(_certify, "without_local_constants", contextlib.nullcontext)
    found = borrowed(check_tool(TRIPWIRE, examples=EXAMPLES, seed=SEED))
    assert any("the kit sent its own literal" in message for message in found), found
