"""Tools built on the published packages (fixtures/published), certified with no adapter code.

axio 0.12 (its frozen, slotted ``Tool`` with its own semaphore, argument coercion and guards, and
bare handlers published in ``axio.tools``), amplifier-core 2.0 (its pydantic ``ToolResult``,
modules published in ``amplifier.modules``) and axm 0.10 (entry-point classes in ``axm.tools``
and ``axm.tribunal.tools``, axm's frozen ``ToolResult``), plus the real tools axm-config
publishes. Each fixture is correct for its runtime, so anything the kit fails is either a real
defect of the runtime (asserted as such) or a gap of the kit, marked ``xfail(strict=True)`` with
the gap named; conformance/published-runtimes.md describes each.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("axio")
pytest.importorskip("amplifier_core")
pytest.importorskip("axm")

from axm_conformance import check_tool

SEED = 20261122
EXAMPLES = 20

ENTRY_POINTS = {
    "axio.tools": {"shout": "pub_axio:shout"},
    "amplifier.modules": {
        "pub-words": "pub_amplifier:mount",
        "pub-cleanup": "pub_amplifier:mount_with_cleanup",
    },
    "axm.tools": {"axm_word_count": "pub_axm:WordCountTool"},
    "axm.tribunal.tools": {"axm_word_count": "pub_axm:TribunalWordCountTool"},
}


def failures(ref: str | list[str]) -> dict[str, dict[str, list[str]]]:
    """tool key -> {failed check id: messages}; warnings and inconclusive checks count as
    failures here, so that an empty dict is the verdict certified with no warning."""
    report = check_tool(ref, examples=EXAMPLES, seed=SEED, timeout=5.0)
    return {
        tool.key: {
            outcome.check_id: list(outcome.messages)
            for outcome in tool.outcomes
            if outcome.status in ("failed", "warning", "inconclusive")
        }
        for tool in report.tools
    }


@pytest.fixture
def published(entry_points: Callable[[dict[str, dict[str, str]]], Path]) -> None:
    entry_points(ENTRY_POINTS)


@pytest.mark.slow
@pytest.mark.usefixtures("published")
@pytest.mark.parametrize(
    "ref",
    [
        "pub_axio:greet",
        "pub_axio:clamp",
        "pub_axio:quote_blocks",
        "entry-point:axio.tools:shout",
        "pub_amplifier:WordCountTool",
        "pub_amplifier:FailingLookupTool",
        "entry-point:amplifier.modules:pub-words",
        "entry-point:amplifier.modules:pub-cleanup",
        "pub_axm:WordCountTool",
        "entry-point:axm.tools:axm_word_count",
        "entry-point:axm.tribunal.tools:axm_word_count",
        "entry-point:axm.tools",
        pytest.param(
            [
                "entry-point:axm.tools:axm_word_count",
                "entry-point:axm.tribunal.tools:axm_word_count",
            ],
            id="axm-both-groups",
        ),
    ],
)
def test_certified(ref: Any) -> None:
    found = failures(ref)
    assert found, f"{ref} names no tool"
    assert all(not failed for failed in found.values()), found


@pytest.mark.slow
@pytest.mark.usefixtures("published")
def test_the_published_entry_points_are_all_certified() -> None:
    """axm.tools holds axm-config's real tools next to the fixture: each is certified."""
    found = failures("entry-point:axm.tools")
    assert {"config_doctor", "profile_isolation", "axm_word_count"} <= set(found)


NULL_REACHES_THE_HANDLER = "TypeError: '>' not supported between instances of 'int' and 'NoneType'"


@pytest.mark.slow
@pytest.mark.usefixtures("published_fixtures")
@pytest.mark.parametrize("name", ["word_count", "word_count_guarded"])
def test_published_axio_lets_null_reach_the_handler(name: str) -> None:
    """A real defect of published axio: null passes its argument checks for a parameter that is
    not strict, although the schema it publishes forbids it.

    ``check_scalar`` skips the type check of ``None``, so ``{"limit": null}`` reaches a handler
    typed ``limit: int = 10``, which crashes. Its refusal of ``{"text": null}`` (a ``StrictStr``),
    with a HandlerError caused by TypeError before the handler runs, is not a finding.
    """
    found = failures(f"pub_axio:{name}")[name]
    assert set(found) == {"invalid-input-handled"}, found
    assert NULL_REACHES_THE_HANDLER in found["invalid-input-handled"][0]


@pytest.mark.slow
@pytest.mark.usefixtures("published_fixtures")
def test_the_published_axio_semaphore_is_bound_to_one_event_loop() -> None:
    """A real defect of published axio, reported as a verdict, not a crash of the run.

    axio's ``Tool`` makes its ``asyncio.Semaphore`` in ``__post_init__``; it binds to the first
    event loop in which a call waits, and a contended call from another loop raises a bare
    RuntimeError. concurrency-limit probes exactly that and fails; nothing else breaks.
    """
    found = failures("pub_axio:word_count_limited")["word_count_limited"]
    assert "concurrency-limit" in found, found
    assert any("bound to a different event loop" in m for m in found["concurrency-limit"])
    assert set(found) == {"concurrency-limit", "invalid-input-handled"}, found
    assert NULL_REACHES_THE_HANDLER in found["invalid-input-handled"][0]


@pytest.mark.usefixtures("published_fixtures")
def test_published_tool_objects_keep_their_own_runtime() -> None:
    """The kit calls published axio's Tool itself: its class and guards are what is certified."""
    from axm_conformance import load_tool

    tool = load_tool("pub_axio:word_count_guarded")
    assert type(tool).__module__ == "axio.tool"
    assert type(tool).__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_portability_table_of_the_published_tools_is_the_one_written() -> None:
    """conformance/clients.md gives, per tool axio-tools-local and axm-config publish, the
    first rule each client profile finds it breaking, as the kit computes it."""
    from importlib import metadata

    from axm_conformance._clients import CLIENTS
    from tests.clients_table import rows, written

    checks = tuple(f"portable-to-{client}" for client in CLIENTS)
    homes = {"axio.tools": "axio-tools-local", "axm.tools": "axm-config"}
    computed = [
        row
        for group, home in homes.items()
        for entry in metadata.entry_points(group=group)
        if entry.dist is not None and entry.dist.name == home
        for row in rows(home, [check_tool(f"entry-point:{group}:{entry.name}", checks=checks)])
    ]
    assert computed == written("Published tools", homes.values()), "\n".join(computed)
