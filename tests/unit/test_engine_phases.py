"""The engine's phases, run through a fake caller: what is called, in which order, and what each
phase concludes, without a worker or a tool process."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
from hypothesis.database import InMemoryExampleDatabase

from axm_conformance._certificate import call_terms, calls_said
from axm_conformance._engine import _world, certify
from axm_conformance._engine._session import PAUSES
from axm_conformance._engine._state import crash_detail
from axm_conformance._observation import Observation, SubjectInfo
from axm_conformance._process._records import Crash
from axm_conformance._settings import Settings
from axm_conformance.protocols.axio._probes import GuardTrace
from tests.unit.factories import exception, raised, subject
from tests.unit.fake_caller import FakeCaller, refused, served

SETTINGS = Settings(examples=10, sandbox="off")


@pytest.fixture(autouse=True)
def no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's pauses (a reading confirmed over one, a refusal made again after one) take
    no time here."""
    monkeypatch.setattr(_world.time, "sleep", lambda seconds: None)


@pytest.fixture(autouse=True)
def fresh_database() -> Iterator[None]:
    """An example database of each test's own: a failure an earlier run saved is replayed
    first, and would find what the test asks the phases to find."""
    profile = hypothesis.settings._current_profile  # type: ignore[attr-defined]
    hypothesis.settings.register_profile("in-memory", database=InMemoryExampleDatabase())
    hypothesis.settings.load_profile("in-memory")
    yield
    hypothesis.settings.load_profile(profile)


def schema(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def run(tool: SubjectInfo, fake: FakeCaller, checks: tuple[str, ...], *others: SubjectInfo) -> Any:
    return certify(
        tool,
        str(tool.name),
        SETTINGS,
        seed=1,
        subjects=(tool, *others),
        check_ids=checks,
        callers=fake,
    )


def test_a_bound_far_inside_the_declared_one_is_found_by_bisection() -> None:
    tool = subject(
        input_schema=schema(
            limit={"type": "integer", "minimum": 1, "maximum": 1000},
            offset={"type": "integer", "minimum": 0},
        )
    )
    fake = FakeCaller(
        lambda value: served(n=value["limit"]) if value["limit"] <= 50 else refused("too many")
    )
    report = run(tool, fake, ("schema-tells-truth",))
    (outcome,) = report.outcomes
    assert outcome.status == "warning"
    assert "50" in " ".join(outcome.messages)
    assert fake.closed


def test_a_failure_is_shrunk_from_the_input_found_and_called_again_in_a_fresh_caller() -> None:
    tool = subject(input_schema=schema(text={"type": "string"}), literals=("key=value",))

    def tool_call(value: dict[str, Any]) -> Observation:
        if "=" in value["text"]:
            return raised(exception("ValueError"))
        return served(words=len(value["text"].split()))

    fake = FakeCaller(tool_call)
    report = run(tool, fake, ("no-unexpected-exception",))
    (outcome,) = report.outcomes
    assert outcome.status == "failed"
    text = outcome.input["text"]
    assert "=" in text and len(text) < len("key=value")
    assert "shrunk from" in outcome.input_label
    assert fake.restarts == 1  # the reproduction, alone, in a fresh worker


WRITER = subject(
    ref="tools:WriteTool",
    name="write",
    input_schema=schema(path={"type": "string", "minLength": 1}),
)
READER = subject(
    ref="tools:ReadTool",
    name="read",
    input_schema=schema(
        path={"type": "string", "minLength": 1},
        limit={"type": "integer", "minimum": 0, "maximum": 10},
    ),
)


def test_a_reader_is_called_with_what_a_writer_was_given_and_its_failure_keeps_the_step() -> None:
    files: set[str] = set()

    def write(value: dict[str, Any]) -> Observation:
        files.add(value["path"])
        return served(written=value["path"])

    def read(value: dict[str, Any]) -> Observation:
        if value["path"] not in files:
            return refused(f"no file {value['path']}")
        if value["limit"] == 0:
            return raised(exception("ZeroDivisionError"))
        return served(lines=value["limit"])

    fake = FakeCaller(read, {WRITER.ref: write}, reset=files.clear)
    report = run(READER, fake, ("no-unexpected-exception",), WRITER)
    (outcome,) = report.outcomes
    assert outcome.status == "failed", outcome.messages
    ((ref, name, given),) = outcome.before
    assert (ref, name) == (WRITER.ref, "write")
    assert outcome.input == {"path": given["path"], "limit": 0}
    assert report.together == (WRITER.ref,)
    # Reproduced in a fresh world: the step made again first, then the failing call.
    restart = len(fake.calls) - 1 - fake.calls[::-1].index((WRITER.ref, given))
    assert fake.calls[restart + 1] == ("", outcome.input)


def test_a_tool_alone_has_no_sequences_and_a_step_that_fails_its_own_call_is_dropped() -> None:
    def crash(value: Any) -> Observation:
        return Observation(status="crashed", crash_kind="exited", crash_detail="killed")

    fake = FakeCaller(lambda value: served(), {WRITER.ref: crash})
    report = run(READER, fake, ("no-unexpected-exception",), WRITER)
    assert [outcome.status for outcome in report.outcomes] == ["passed"]
    # The crashing tool was called once, and prepared nothing after.
    assert [ref for ref, _ in fake.calls].count(WRITER.ref) == 1
    alone = FakeCaller(lambda value: served())
    run(READER, alone, ("no-unexpected-exception",))
    assert {ref for ref, _ in alone.calls} == {""}


def test_a_tool_that_refuses_every_valid_input_is_inconclusive_saying_what_it_answered() -> None:
    tool = subject(input_schema=schema(text={"type": "string"}))
    fake = FakeCaller(lambda value: refused("the service is closed"))
    report = run(tool, fake, ("no-unexpected-exception",))
    (outcome,) = report.outcomes
    assert outcome.status == "inconclusive"
    assert "'the service is closed' in" in outcome.messages[0]
    assert report.calls["refused"] == report.calls["valid"] > 0


def test_invalid_inputs_refused_before_the_tool_leave_nothing_to_judge() -> None:
    tool = subject(input_schema=schema(count={"type": "integer"}))
    fake = FakeCaller(lambda value: served())
    report = run(tool, fake, ("invalid-input-handled",))
    (outcome,) = report.outcomes
    assert outcome.status == "skipped"
    assert "every invalid input was refused before reaching the tool" in outcome.messages[0]
    assert all(ref == "" for ref, _ in fake.calls)


def test_a_check_no_call_reached_is_blamed_only_on_a_failure_among_its_own_calls() -> None:
    """Every valid call raised a domain error, and invalid inputs crashed the tool: the result
    checks are inconclusive (no valid call returned), not blamed on invalid-input-handled,
    which judged other calls."""
    tool = subject(
        input_schema=schema(count={"type": "integer"}),
        policy=dataclasses.replace(subject().policy, exception="domain"),
    )
    fake = FakeCaller(
        lambda value: raised(exception("LookupError", "raise", message="no such count")),
        invalid=lambda value: Observation(status="crashed", crash_detail="the worker died"),
    )
    report = run(tool, fake, ("result-type", "invalid-input-handled"))
    outcomes = {outcome.check_id: outcome for outcome in report.outcomes}
    assert outcomes["invalid-input-handled"].status == "failed"
    assert outcomes["result-type"].status == "inconclusive"
    assert "invalid-input-handled" not in outcomes["result-type"].messages[0]


READ_ONLY = {"readOnlyHint": True}
LISTER = subject(
    ref="tools:ListTermsTool", name="list_terms", input_schema=schema(), annotations=READ_ONLY
)
HISTORY = subject(
    ref="tools:RecentTool", name="recent_lookups", input_schema=schema(), annotations=READ_ONLY
)
LOOKUP = subject(
    ref="tools:LookupTool",
    name="lookup_term",
    input_schema=schema(term={"type": "string", "minLength": 1}),
    annotations=READ_ONLY,
)


def test_a_read_only_lookup_that_keeps_a_history_fails_again_when_its_failure_is_replayed() -> None:
    """The failure is saved in the example database and replayed first by the next run: with
    what the other read-only tools return read again, not skipped as a known input."""
    history: list[str] = []

    def lookup(value: dict[str, Any]) -> Observation:
        if value["term"] != "cap":
            return refused(f"{value['term']!r} is not in the glossary")
        history.append(value["term"])
        return served(meaning="an upper bound")

    fake = FakeCaller(
        lookup,
        {LISTER.ref: lambda value: served(terms=["cap"]), HISTORY.ref: lambda v: served(h=history)},
        reset=history.clear,
    )
    for _ in range(2):
        report = run(LOOKUP, fake, ("read-only-honoured",), LISTER, HISTORY)
        (outcome,) = report.outcomes
        assert outcome.status == "failed", outcome.messages
        assert "changed what recent_lookups({}) returns" in outcome.messages[0]


SET_MODE = subject(
    ref="tools:SetModeTool",
    name="set_mode",
    input_schema=schema(mode={"enum": ["a", "b"]}),
    annotations={"idempotentHint": True},
)


def idempotence(fake: FakeCaller) -> Any:
    """The one outcome of ``idempotent-honoured`` on SET_MODE, read through LISTER."""
    (outcome,) = run(SET_MODE, fake, ("idempotent-honoured",), LISTER).outcomes
    return outcome


def test_a_reading_the_reader_refused_judges_nothing() -> None:
    """A server's rate limit answers any call: a reader refused after the call made again says
    nothing of what the call changed, and an idempotent tool is not accused."""
    reads: list[int] = []

    def reader(value: Any) -> Observation:
        reads.append(1)
        return refused("rate limit exceeded") if len(reads) % 3 == 0 else served(mode="a")

    fake = FakeCaller(lambda value: served(), {LISTER.ref: reader})
    outcome = idempotence(fake)
    assert outcome.status == "passed", outcome.messages
    assert len(reads) >= 3


def test_a_reading_the_reader_served_otherwise_fails_an_idempotent_tool() -> None:
    """The twin: the reader serves every reading, and what it returns changes at each call."""
    count: list[int] = []

    def call(value: Any) -> Observation:
        count.append(1)
        return served()

    fake = FakeCaller(call, {LISTER.ref: lambda value: served(calls=len(count))})
    outcome = idempotence(fake)
    assert outcome.status == "failed", outcome.messages
    assert "changed what list_terms({}) returns" in outcome.messages[0]


def test_a_reader_whose_clock_ticked_between_two_readings_accuses_no_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A resource "created at" a time to the second: its clock ticks between the reading after
    the call once and the one after the call made again. Over a pause it ticks again, so it
    changes by itself: an idempotent tool is not accused."""
    clock = [0]
    reads: list[int] = []
    monkeypatch.setattr(_world.time, "sleep", lambda seconds: clock.__setitem__(0, clock[0] + 1))

    def reader(value: Any) -> Observation:
        reads.append(1)
        ticked = len(reads) % 3 == 0  # the third reading of each call read comes a second later
        if ticked:
            clock[0] += 1
        return served(created=clock[0])

    fake = FakeCaller(lambda value: served(), {LISTER.ref: reader})
    outcome = idempotence(fake)
    assert outcome.status == "passed", outcome.messages
    assert clock[0] >= 2, "the reading never ticked, or was never confirmed over a pause"


CREATE_BOOK = subject(
    ref="tools:CreateBookTool",
    name="create_book",
    description="Create an empty workbook at a path such as 'books/q1.xlsx'.",
    input_schema=schema(path={"type": "string"}),
)
DESCRIBE_BOOK = subject(
    ref="tools:DescribeBookTool",
    name="describe_book",
    input_schema=schema(path={"type": "string"}),
    annotations=READ_ONLY,
)
READ_CELLS = subject(
    ref="tools:ReadCellsTool",
    name="read_cells",
    input_schema=schema(
        path={"type": "string"},
        sheet={"type": "string"},
        limit={"type": "integer", "minimum": 0, "maximum": 10},
    ),
)
# Writers that need more than the reader is given, and refuse what they are given.
COLOURING = [
    subject(
        ref=f"tools:Colour{number}Tool",
        name=f"colour_{number}",
        input_schema=schema(path={"type": "string"}, colour={"type": "string"}),
    )
    for number in range(12)
]


def test_a_reader_among_many_tools_is_served_after_its_creator_and_a_describer() -> None:
    """Among a dozen writers, the one that needs least (a path, which its description names)
    makes the workbook, a read-only tool tells its sheet's name, and the reader, served in that
    world only, is judged: its crash at ``limit`` 0 is found, and shrunk to the one step it
    needs (the sheet's name, once told, needs no describer)."""
    books: dict[str, list[str]] = {}

    def create(value: dict[str, Any]) -> Observation:
        if not value["path"].endswith(".xlsx") or value["path"] in books:
            return refused(f"cannot create {value['path']!r}")
        books[value["path"]] = ["Sheet1"]
        return served(path=value["path"])

    def describe(value: dict[str, Any]) -> Observation:
        if value["path"] not in books:
            return refused(f"no workbook {value['path']!r}")
        return served(sheets=[{"name": name, "used": "A1"} for name in books[value["path"]]])

    def read(value: dict[str, Any]) -> Observation:
        if value["sheet"] not in books.get(value["path"], []):
            return refused(f"no sheet {value['sheet']!r} in {value['path']!r}")
        if value["limit"] == 0:
            return raised(exception("ZeroDivisionError"))
        return served(cells=[])

    colouring = {tool.ref: lambda value: refused("no such colour") for tool in COLOURING}
    fake = FakeCaller(
        read,
        {CREATE_BOOK.ref: create, DESCRIBE_BOOK.ref: describe, **colouring},
        reset=books.clear,
    )
    report = run(
        READ_CELLS, fake, ("no-unexpected-exception",), *COLOURING, DESCRIBE_BOOK, CREATE_BOOK
    )
    (outcome,) = report.outcomes
    assert outcome.status == "failed", outcome.messages
    assert [name for _, name, _ in outcome.before] == ["create_book"]
    assert outcome.input == {"path": "books/q1.xlsx", "sheet": "Sheet1", "limit": 0}


COUNTER = subject(
    ref="tools:CounterTool",
    name="counter",
    input_schema=schema(n={"type": "integer", "minimum": 0, "maximum": 9}),
)


def test_a_failure_made_again_neither_alone_nor_after_the_calls_before_it_is_noted() -> None:
    """The tool's seventh call, whichever it is, raises: made again alone in a fresh worker,
    and after the calls made before it, the input is served. The check passes, saying why the
    failure is not the tool's."""
    made = [0]

    def tool(value: dict[str, Any]) -> Observation:
        made[0] += 1
        if made[0] == 7:
            return raised(exception("ValueError", "other"))
        return served(n=value["n"])

    report = run(COUNTER, FakeCaller(tool), ("no-unexpected-exception",))
    (outcome,) = report.outcomes
    assert outcome.status == "passed", outcome.messages
    (said,) = outcome.messages
    assert said.startswith("flaky, not blamed on the tool: raised ValueError")
    assert "; after the 6 calls made before it, it did not fail either" in said
    assert report.calls["flaky"] == 1
    assert calls_said(report.calls).endswith("; 1 failure flaky")


def test_the_call_that_breaks_the_tool_fails_and_the_calls_it_broke_are_not_judged() -> None:
    """{"n": 0} is served and leaves the tool raising on every call until a fresh worker:
    no-unexpected-exception, found on a later input, is not judged; state-stays-usable fails
    with {"n": 0} as the one call before the input it broke."""
    broken = [False]

    def tool(value: dict[str, Any]) -> Observation:
        if broken[0]:
            return raised(exception("RuntimeError", "other"))
        broken[0] = value["n"] == 0
        return served(n=value["n"])

    fake = FakeCaller(tool, reset=lambda: broken.__setitem__(0, False))
    report = run(COUNTER, fake, ("no-unexpected-exception", "state-stays-usable"))
    unexpected, usable = report.outcomes
    assert unexpected.status == "passed", unexpected.messages
    assert unexpected.messages[-1].startswith('not judged after counter({"n":0}): raised')
    assert usable.status == "failed", usable.messages
    assert [(name, value) for _, name, value in usable.before] == [("counter", {"n": 0})]
    assert usable.messages[0].startswith('after counter({"n":0}), which it served, the tool')
    assert report.calls["not_judged"] >= 1 and "flaky" not in report.calls
    (term,) = [line for line in call_terms([{"calls": report.calls}]) if "not judged:" in line]
    assert "blamed on that call (state-stays-usable)" in term


def test_a_tool_that_raises_its_own_refusal_after_a_burst_is_paced_not_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After four calls the tool raises its own RateLimited until the kit pauses: the kit
    backs off, the calls are judged as answered after the pause, and nothing fails."""
    made = [0]

    def pause(seconds: float) -> None:
        made[0] = 0

    def tool(value: dict[str, Any]) -> Observation:
        made[0] += 1
        if made[0] > 4:
            return raised(exception("RateLimited", "raise", message="slow down"))
        return served(n=value["n"])

    monkeypatch.setattr(_world.time, "sleep", pause)
    report = run(COUNTER, FakeCaller(tool), ("no-unexpected-exception",))
    (outcome,) = report.outcomes
    assert outcome.status == "passed", outcome.messages
    assert report.calls["backoffs"] >= 1


def test_a_tool_a_call_broke_is_not_waited_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash on every call after a served one is no refusal the tool chose: the kit judges
    it at once, with none of the growing pauses it waits out a rate limit with."""
    broken, paused = [False], []

    def tool(value: dict[str, Any]) -> Observation:
        if broken[0]:
            return raised(exception("RuntimeError", "other"))
        broken[0] = True
        return served(n=value["n"])

    monkeypatch.setattr(_world.time, "sleep", paused.append)
    fake = FakeCaller(tool, reset=lambda: broken.__setitem__(0, False))
    report = run(COUNTER, fake, ("no-unexpected-exception", "state-stays-usable"))
    assert report.outcomes[1].status == "failed", report.outcomes[1].messages
    assert not set(PAUSES[2:]) & set(paused), paused


@pytest.mark.parametrize(
    ("timeout", "said"),
    [
        (1.0, "did not return within 1 s (--axm-timeout)"),
        (10.0, "did not return within 10 s (this probe is given 10 times --axm-timeout)"),
    ],
)
def test_a_call_that_hung_is_said_to_have_had_the_time_it_was_given(
    timeout: float, said: str
) -> None:
    """A probe's feed gives its calls a multiple of --axm-timeout (the concurrency probe ten
    times): the report names the time the call had, not the run's."""
    detail = crash_detail(Crash("timeout", "killed"), timeout, run_timeout=1.0)
    assert detail == f"the call {said}; the process running it was killed"


def guard_trace(*events: str, raised: Any = None) -> GuardTrace:
    return GuardTrace(events, (), (), raised, None if raised else {"words": 1})


@pytest.mark.parametrize(
    ("trace", "verdict"),
    [
        (guard_trace("injected guard raised RuntimeError", "handler"), "failed"),
        (
            guard_trace(
                "injected guard raised RuntimeError",
                raised=exception("GuardError", message="a guard crashed"),
            ),
            "passed",
        ),
    ],
    ids=["open", "closed"],
)
def test_a_probe_is_asked_of_the_caller_by_its_name_and_judged_by_its_check(
    trace: GuardTrace, verdict: str
) -> None:
    """The engine asks for a probe as it asks for a call, through the caller: a fake makes the
    crashing-guard probe answer as a guard chain that fails open, or closed."""
    fake = FakeCaller(lambda value: served(words=1), probes={"crashing-guard": lambda _: trace})
    report = run(subject(guards=1), fake, ("guards-fail-closed",))
    assert report.outcome("guards-fail-closed").status == verdict
    assert fake.probed and {name for name, _ in fake.probed} == {"crashing-guard"}
    assert all(isinstance(payload, dict) for _, payload in fake.probed)
