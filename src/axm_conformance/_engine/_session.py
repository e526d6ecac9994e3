"""The engine: certify one tool by running every selected check, sharing calls between them.

Static checks read the tool's description. Per-call checks all judge the same calls: each input
(the boundary examples, then each hint put in each place, then the inputs Hypothesis generates
with the hints mixed in) is sent once to the tool's worker, and every per-call check judges the
observation. The hints are what may reach the tool's domain beyond the schema: the literals of
its source, the names of its worker files, the values its schema names. Generation is the
expensive part of a run, so an input is drawn once per tool, not once per check. Each check keeps
its own first failure, which is then shrunk on its own, so one defect never hides another.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from axm_conformance._checks import Check, Context, checks_for
from axm_conformance._engine._caller import Caller, Callers
from axm_conformance._engine._stateful import Together, explore_together, make_steps, read_world
from axm_conformance._failure import stderr_tail
from axm_conformance._feeds import (
    CONCURRENCY,
    CRASHING_GUARD,
    GUARDS,
    INVALID,
    OFFLINE,
    VALID,
    Feed,
)
from axm_conformance._observation import (
    Call,
    ExceptionInfo,
    Observation,
    Step,
    SubjectInfo,
    Varied,
    canonical_json,
)
from axm_conformance._outcomes import Evidence, Finding, Severity, Status, not_run, note
from axm_conformance._process.parent._pool import WorkersAhead, tool_worker
from axm_conformance._process.parent._worker import Crash
from axm_conformance._report import Outcome, ToolReport
from axm_conformance._settings import Settings, derived_seed
from axm_conformance._strategies import (
    SOURCES,
    Cap,
    Example,
    Hints,
    Mutation,
    Served,
    boundary_inputs,
    described_values,
    discarded_count,
    generated_inputs,
    hinted_inputs,
    invalid_examples,
    invalid_inputs,
    is_valid_input,
    keywords_exercised,
    shrink_size,
    smaller,
    structured_strings,
    variations,
    without_local_constants,
)
from axm_conformance.protocols import protocol_named

__all__ = ["CALL_KINDS", "Progress", "certify"]

# What became of the valid calls a tool was judged on: made, served (a success that is not an
# error in disguise), refused (a failed result, an error in disguise, a refusal raised on
# purpose or by the operating system) and errored (a crash, a hang, an error response).
CALL_KINDS = ("valid", "served", "refused", "errored")

# Told what a certification is doing: "valid inputs, 42 calls".
Progress = Callable[[str], None]

# After this many calls that hung or killed the worker, the tool is not called again: the
# failure is established and every further call could cost a whole timeout.
_MAX_CRASHES = 3
# Seconds spent shrinking one check's failure (each attempt is a real call of the tool).
_SHRINK_BUDGET = 15.0
# The variations of at most this many refused valid inputs are called, per tool (and as many
# again of those refused after other tools prepared their world): a tool that refuses most inputs
# would otherwise cost several calls for each.
_MOST_VARIED = 25
# Calls a bisection for the bound a tool serves may make: enough for integers up to 2**24 apart;
# and the other inputs it served that must refuse the value past it.
_MOST_BISECTIONS = 24
# The values inside a bound found that must be served too for it to be a cap.
_CAP_RANGE = 2
# A source's values that come before the strings built of its tokens: the tool's nearest.
_NEAREST_HINTS = 16
_CONFIRMATIONS = 2
# Seconds between two progress reports, at most one per call.
_PROGRESS_EVERY = 0.2
# Inputs a tool served that are sent again with the tool cut off from the network.
_OFFLINE_CALLS = 3
# A server's pacing: after this many valid calls in a row refused with one answer the tool had
# not given before, the kit pauses for each of these seconds in turn until the tool serves
# again (see _Session.pace).
_STREAK = 3
_PAUSES = (1.0, 2.0, 4.0, 8.0, 16.0)
# Guards are probed with a crashing guard in front on this many valid inputs.
_CRASHING_GUARD_CALLS = 3
# Strings that a guard protecting paths, URLs, shells or queries should think twice about.
ADVERSARIAL_STRINGS = (
    "../../../../etc/passwd",
    "..\\..\\windows\\system32",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "notes.txt\x00.png",
    "file:///etc/passwd",
    "FILE:///ETC/PASSWD",
    "http://169.254.169.254/latest/meta-data/",
    "Http://localhost:22",
    "; rm -rf / #",
    "$(id)",
    "`id`",
    "| cat /etc/shadow",
    "' OR '1'='1",
    "1; DROP TABLE users; --",
    "\u2025/\u2025/etc/passwd",
    "\uff0e\uff0e\uff0fetc\uff0fpasswd",
    "\u202etxt.exe",
    "A" * 10_000,
)
_STATUS_PHRASES = {
    frozenset({"returned"}): "returned a value",
    frozenset({"returned", "raised"}): "returned or raised",
}


@dataclass(frozen=True)
class _Held:
    """A valid call not yet judged: where its input came from, when the call began, and the
    shape of its answer when it was not served (see _Session.pace)."""

    call: Call
    source: str
    started: float
    answer: str = ""


def _shape(text: str) -> str:
    return re.sub(r"\d+", "#", text)


class _NotRunnable(Exception):
    """The tool cannot be called at all (its schema gives no inputs, or it does not load)."""


class _Stop(Exception):
    """Ends a Hypothesis run early without it counting as a failure of anything."""


@dataclass
class _Run:
    """One per-call check's tally over the shared calls."""

    check: Check
    examples: int = 0
    failure: tuple[Call, tuple[Finding, ...]] | None = None
    notes: list[Finding] = field(default_factory=list)
    keywords: set[str] = field(default_factory=set)
    # The examples judged, by where their values came from (see _strategies.SOURCES).
    sources: dict[str, int] = field(default_factory=dict)
    # The time spent on this check: its share of each call it judged, its shrinking.
    seconds: float = 0.0


@dataclass
class _Session:
    subject: SubjectInfo
    runs: list[_Run]
    context: Context
    worker: Caller
    settings: Settings
    invalid: SearchStrategy[Mutation]
    # The valid inputs as Examples that name their source.
    drawn: SearchStrategy[Example]
    # Calls that hung or killed the worker, by feed: each feed gets its own allowance, so that
    # a tool that hangs on valid inputs is still probed (on a fresh worker) for the rest.
    crashes: dict[Feed, int] = field(default_factory=dict)
    # Calls made, by feed and by what happened.
    statuses: dict[Feed, dict[str, int]] = field(default_factory=dict)
    # Generated valid inputs the strategy threw away as invalid.
    discarded: int = 0
    # The tool's time budget: past this (time.monotonic) no call is made, and the feeds that
    # had not finished leave their checks failing as "not run".
    deadline: float = math.inf
    exhausted: bool = False
    finished: set[Feed] = field(default_factory=set)
    # The errors calls ended in, by feed: how often each, and one message it came with.
    errors: dict[Feed, Counter[str]] = field(default_factory=dict)
    error_messages: dict[str, str] = field(default_factory=dict)
    # Hypothesis' example database (None: the profile keeps none, as its ci profile does), and
    # the inputs replayed from it, by feed, which are not sent again when met again.
    database: ExampleDatabase | None = None
    replayed: set[tuple[Feed, str]] = field(default_factory=set)
    # Who is told what is being done (the phase), and how many calls were made.
    progress: Progress | None = None
    phase: str = ""
    calls: int = 0
    told: float = -math.inf
    # What the tool served, and the refused valid inputs to vary, at most _MOST_VARIED.
    served: Served = field(default_factory=Served)
    # The bounds bisections found, by property: the last value served and the first refused.
    capped: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    refused: list[Call] = field(default_factory=list)
    # The valid calls judged, by what became of them (see CALL_KINDS), and what the refusals
    # and errors among them said, by how often.
    tally: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    # The server's pacing (see pace): the valid calls held back while their refusals may be
    # pacing, the shapes of the answers given outside a streak and of those found to be pacing,
    # how often the kit backed off and for how long, and when the tool was last called (for
    # --axm-pace).
    held: list[_Held] = field(default_factory=list)
    answers: set[str] = field(default_factory=set)
    pacing: set[str] = field(default_factory=set)
    backoffs: int = 0
    paused: float = 0.0
    last_call: float = -math.inf
    # What makes a caller of the tool that reaches the network (see _served_online).
    online: Callers = tool_worker
    # The other tools of its home and what their calls made (see _stateful), and how many of
    # the calls made after them were varied.
    together: Together | None = None
    varied_after: int = 0

    def finish(self, *feeds: Feed) -> None:
        """Mark feeds whose calls were all made (not cut short by the budget)."""
        if not self.exhausted:
            self.finished.update(feeds)

    def call(
        self,
        value: Any,
        label: str,
        *,
        feed: Feed,
        repeat: bool,
        vary: bool = False,
        before: tuple[Step, ...] = (),
        again: bool = False,
        world: bool = False,
    ) -> Call:
        """Call the tool through ``feed`` (twice when ``repeat``) and observe it; when ``vary``
        and the tool refused the valid input, call its variations too. ``before`` are the calls
        of other tools that prepared it, made ``again`` first when asked; with ``world``, what
        the read-only tools of its home return after a served call is read (see _stateful)."""
        if again and before and not make_steps(self, before):
            before = ()
        first, trace = self.observe(value, feed)
        second = None
        if repeat and first.status != "crashed":
            second = self.observe(value, feed)[0]
        call = Call(value, first, label, second, feed is INVALID, trace, before=before)
        if feed is VALID and self.subject.result.served(first):
            self.served.add(value)
            if world:
                call = dataclasses.replace(call, world=read_world(self, value))
        elif vary and feed is VALID and self.subject.result.refused(first):
            call = dataclasses.replace(call, variations=self.vary(value))
        return call

    def vary(self, value: Any) -> tuple[Varied, ...]:
        """Call the variations of a refused valid input, and, for each one served, the inputs
        that confirm the refusal, until one of them is served (see _strategies.variations); or,
        for a value served further inside a declared bound, look for the bound the tool serves
        (find_cap)."""
        found: list[Varied] = []
        for variation in variations(self.subject.input_schema, value, self.served):
            if variation.cap is not None and any(
                varied.kind == "bound" and self.subject.result.served(varied.observation)
                for varied in found
            ):
                continue  # the bound's neighbour served: the bound is off by one, not capped
            observation = self.observe(variation.value, VALID)[0]
            confirmations: list[Observation] = []
            if self.subject.result.served(observation):
                self.served.add(variation.value)
                if variation.cap is not None:
                    capped = self.find_cap(value, variation.value, observation, variation.cap)
                    found += [] if capped is None else [capped]
                    continue
                confirmations = self.confirm_refused(variation.confirmations)
            found.append(
                Varied(
                    variation.kind,
                    variation.said,
                    observation,
                    variation.confirming,
                    tuple(confirmations),
                )
            )
        return tuple(found)

    def confirm_refused(self, inputs: Iterable[dict[str, Any]]) -> list[Observation]:
        """Call the inputs that confirm a refusal until one of them is served."""
        confirmations: list[Observation] = []
        for confirmation in inputs:
            confirmations.append(self.observe(confirmation, VALID)[0])
            if self.subject.result.served(confirmations[-1]):
                self.served.add(confirmation)
                break
        return confirmations

    def find_cap(
        self, refused: dict[str, Any], inside: dict[str, Any], served: Observation, cap: Cap
    ) -> Varied | None:
        """The bound the tool serves, when it refuses ``refused`` and serves it with ``cap``'s
        property set to a value further ``inside``: found by bisection between the two; then
        the first value past it is put into other inputs it served, which must be refused too.
        None when the bound is not found within the calls allowed, or does not end a range of
        values served."""
        schema = self.subject.input_schema
        calls = 0
        good, bad = inside[cap.name], refused[cap.name]
        # A bound found before is tried first: found again, it costs two calls.
        known = list(self.capped.get(cap.name, ()))
        while (middle := cap.between(good, bad)) is not None:
            guesses = [guess for guess in known if cap.lies_between(guess, good, bad)]
            middle = guesses[0] if guesses else middle
            probe = {**refused, cap.name: middle}
            if calls == _MOST_BISECTIONS or not is_valid_input(schema, probe):
                return None
            calls += 1
            answer = self.observe(probe, VALID)[0]
            if self.subject.result.served(answer):
                self.served.add(probe)
                good, served = middle, answer
            else:
                bad = middle
        # A bound that ends a range served, not a value served among refused ones (a status
        # code the tool knows among the codes it does not).
        for inner in cap.within(good, _CAP_RANGE):
            probe = {**refused, cap.name: inner}
            if not is_valid_input(schema, probe):
                continue  # past the schema's other bound: the range is all there is
            calls += 1
            if not self.subject.result.served(self.observe(probe, VALID)[0]):
                return None
        past = cap.past(good)
        self.capped[cap.name] = (good, past)
        here = {**refused, cap.name: good}
        others = [
            {**context, cap.name: past}
            for context in reversed(self.served.inputs)
            if context != here and context.get(cap.name) != past
        ]
        others = [other for other in others if is_valid_input(schema, other)][:_CONFIRMATIONS]
        found = f" (found by bisection, {calls} calls)" if calls else ""
        said = (
            f"{cap.name!r} set to {canonical_json(good)}: it {cap.said(good)}{found}, though "
            f"its schema declares {cap.declared}"
        )
        confirming = f"{cap.name!r} = {canonical_json(past)} in other inputs it served"
        return Varied("cap", said, served, confirming, tuple(self.confirm_refused(others)))

    def vary_refused(self) -> None:
        """Judge the refused valid inputs by their variations, once every valid input has been
        called: what the tool serves is then known best."""
        runs = [run for run in self.runs if run.check.varies]
        for refused in self.refused:
            if time.monotonic() > self.deadline:
                self.exhausted = True
                raise _Stop
            started = time.perf_counter()
            call = dataclasses.replace(refused, variations=self.vary(refused.input))
            for run in runs:
                self.record(run, call)
            _charge(runs, started)

    def go_on(self, feed: Feed) -> None:
        """Stop (raise _Stop) when the tool is not to be called again through ``feed``: its
        calls hung or crashed too often, or its time is up."""
        if self.crashes.get(feed, 0) >= _MAX_CRASHES:
            raise _Stop
        if time.monotonic() > self.deadline:
            self.exhausted = True
            raise _Stop

    def observe(self, value: Any, feed: Feed) -> tuple[Observation, Any]:
        if self.settings.pace:
            time.sleep(max(self.last_call + self.settings.pace - time.monotonic(), 0.0))
            self.last_call = time.monotonic()
        self.calls += 1
        if self.progress is not None and time.monotonic() - self.told > _PROGRESS_EVERY:
            self.told = time.monotonic()
            self.progress(f"{self.phase}, {self.calls} calls")
        target = feed.target or protocol_named(self.subject.protocol).probes[feed.name]
        timeout = self.settings.timeout * feed.scale
        outcome = self.worker.call(target, *feed.arguments(value), timeout=timeout)
        if outcome.error is not None:
            raise _NotRunnable(
                f"the tool could not be loaded or called in the worker: "
                f"{outcome.error.type_name}: {outcome.error.message}"
            )
        if outcome.crash is None:
            if isinstance(outcome.value, Observation):
                if outcome.value.status == "crashed":  # a server that died, out of process
                    self.crashes[feed] = self.crashes.get(feed, 0) + 1
                return outcome.value, None
            return Observation(status="returned"), outcome.value
        self.crashes[feed] = self.crashes.get(feed, 0) + 1
        observation = Observation(
            status="crashed",
            crash_kind=outcome.crash.kind,
            crash_detail=self.crash_detail(outcome.crash),
            stderr_tail=outcome.crash.stderr_tail,
        )
        return observation, None

    def crash_detail(self, crash: Crash) -> str:
        """What a crash means for the tool, in its terms rather than the worker's."""
        if crash.kind == "timeout":
            return (
                f"the call did not return within {self.settings.timeout:g} s "
                "(--axm-timeout); the process running it was killed"
            )
        if crash.kind == "exited":
            return f"the process running the tool exited with status {crash.exit_code}"
        if crash.kind == "signalled":
            return f"the process running the tool was killed by {crash.signal_name}"
        if crash.kind == "memory":
            return f"the process running the tool ran out of memory: {crash.detail}"
        return crash.detail

    def judge(
        self,
        value: Any,
        label: str,
        *,
        feed: Feed = VALID,
        source: str = "generated",
        before: tuple[Step, ...] = (),
    ) -> None:
        """Make one call and let every check fed by ``feed`` judge it; ``source`` says where
        the input came from (see _strategies.SOURCES), ``before`` the calls of other tools
        just made to prepare it."""
        runs = [run for run in self.runs if run.check.feed == feed]
        if not runs or (self.replayed and (feed, repr(value)) in self.replayed):
            return
        self.go_on(feed)
        repeat = any(run.check.repeats for run in runs)
        world = (
            bool(before)
            and self.together is not None
            and self.together.readings > 0
            and any(run.check.reads_world for run in runs)
        )
        # A call after other tools is varied at once, in the world they made, within its own
        # allowance (see vary_refused for the calls made alone).
        vary = (
            bool(before)
            and self.varied_after < _MOST_VARIED
            and any(run.check.varies for run in runs)
        )
        started = time.perf_counter()
        call = self.call(
            value, label, feed=feed, repeat=repeat, vary=vary, before=before, world=world
        )
        self.varied_after += bool(call.variations)
        held = _Held(call, source, started)
        for settled in self.pace(held) if feed is VALID else [held]:
            self.account(settled, feed, runs)

    def account(self, held: _Held, feed: Feed, runs: list[_Run]) -> None:
        """Let every check fed by ``feed`` judge a call, and count it."""
        call, source, started = held.call, held.source, held.started
        value = call.input
        answer = held.answer or (self.answer(call.observation) if feed is VALID else "")
        if answer and answer not in self.pacing:
            self.answers.add(answer)
        # A call made after other tools was varied in their world, when it was made.
        if (
            any(run.check.varies for run in runs)
            and self.subject.result.refused(call.observation)
            and not call.before
            and len(self.refused) < _MOST_VARIED
        ):
            self.refused.append(call)
        status = call.observation.status
        if feed is VALID:
            self.count(call.observation)
        made = self.statuses.setdefault(feed, {})
        made[status] = made.get(status, 0) + 1
        if call.observation.exception is not None:
            error, message = _ended_in(call.observation.exception)
            self.errors.setdefault(feed, Counter())[error] += 1
            self.error_messages.setdefault(error, message)
        exercised = (
            keywords_exercised(self.subject.input_schema, value) if feed.fuzzed else frozenset()
        )
        judging = [run for run in runs if status in run.check.considers]
        for run in judging:
            run.examples += 1
            run.keywords |= exercised
            if feed.fuzzed:
                run.sources[source] = run.sources.get(source, 0) + 1
            self.record(run, call)
        _charge(judging or runs, started)

    def answer(self, observation: Observation) -> str:
        """The shape of what a call was answered when it was not served (its digits left out,
        so that "retry in 3 s" and "retry in 2 s" are one); "" when it was served or crashed."""
        model = self.subject.result
        if observation.result is not None:
            return "" if model.served(observation) else _shape(model.says(observation.result))
        if observation.exception is not None:
            return _shape(observation.exception.summary())
        return ""

    def pace(self, held: _Held) -> list[_Held]:
        """The valid calls to judge now, in order: ``held`` and those held back before it.

        A server may refuse every call for a while after a burst of calls (MCP's tools page
        says servers must rate-limit): such a refusal is the server's pacing, not a defect of
        the input. When _STREAK calls in a row are answered alike with an answer the tool never
        gave otherwise, and the tool served calls before them, the kit
        backs off until the tool serves again (see back_off) and sends the streak's inputs
        again. When they are then answered otherwise, the streak was pacing: its calls are
        judged as answered the second time, and that answer never again counts as one the tool
        gives. Otherwise they are judged as they were answered.
        """
        answer = self.answer(held.call.observation)
        streaking = bool(self.held) and self.held[0].answer == answer
        if not answer or answer in self.answers or not self.served.inputs:
            settled, self.held = [*self.held, held], []
            return settled
        settled = [] if streaking else self.held
        self.held = [*(self.held if streaking else []), dataclasses.replace(held, answer=answer)]
        if len(self.held) < _STREAK:
            return settled
        streak, self.held = self.held, []
        waited = self.back_off()
        if not waited:
            return [*settled, *streak]
        again = [
            _Held(
                self.call(
                    item.call.input,
                    item.call.label,
                    feed=VALID,
                    repeat=item.call.repeat is not None,
                ),
                item.source,
                time.perf_counter(),
            )
            for item in streak
        ]
        if any(self.answer(item.call.observation) != answer for item in again):
            self.pacing.add(answer)
            self.backoffs += 1
            self.paused += waited
            return [*settled, *again]
        return [*settled, *streak]

    def flush(self) -> None:
        """Judge the valid calls still held back: no streak followed them."""
        held, self.held = self.held, []
        runs = [run for run in self.runs if run.check.feed is VALID]
        for item in held:
            self.account(item, VALID, runs)

    def back_off(self) -> float:
        """Pause for growing times until the tool serves again what it served last; the seconds
        paused, or 0 when it never did within the pauses and the tool's time budget."""
        model, served = self.subject.result, self.served.inputs[-1]
        waited = 0.0
        for pause in _PAUSES:
            if time.monotonic() + pause > self.deadline:
                break
            time.sleep(pause)
            waited += pause
            if model.served(self.observe(served, VALID)[0]):
                return waited
        return 0.0

    def count(self, observation: Observation) -> None:
        """Count a valid call as served, refused or errored (see CALL_KINDS)."""
        model = self.subject.result
        self.tally["valid"] += 1
        if model.served(observation):
            self.tally["served"] += 1
            return
        result, exception = observation.result, observation.exception
        while exception is not None and exception.cause is not None:
            exception = exception.cause  # a runtime's wrapper: what the tool itself raised
        errored = observation.status == "crashed" or (
            exception is not None and exception.origin == "other"
        )
        if result is not None and model.error_type and result.type_name == model.error_type:
            errored = True
        self.tally["errored" if errored else "refused"] += 1
        if result is not None:
            said = model.says(result)
        elif observation.exception is not None:
            said = _ended_in(observation.exception)[0]
        else:
            said = observation.crash_kind or observation.rejected_because or observation.status
        self.refusals[said] += 1

    def record(self, run: _Run, call: Call) -> None:
        """Let ``run``'s check judge ``call``, and keep what it found."""
        found = run.check.findings(self.subject, call, self.context)
        run.notes.extend(item for item in found if item.severity is Severity.NOTE)
        violations = tuple(item for item in found if item.severity is not Severity.NOTE)
        # Keep the first failure, unless it was only a warning and this one is not.
        if violations and (
            run.failure is None or (_severe(violations) and not _severe(run.failure[1]))
        ):
            run.failure = (call, violations)

    def judge_mutation(self, mutation: Mutation) -> None:
        label = _mutation_label(mutation)
        self.judge(mutation.value, label, feed=INVALID, source=mutation.source)

    def judge_example(self, example: Example, label: str) -> None:
        self.judge(example.value, label, source=example.source)

    def violations(self, check: Check, call: Call) -> tuple[Finding, ...]:
        if call.observation.status not in check.considers:
            return ()
        return check.violations(self.subject, call, self.context)

    def feeds(self, feed: Feed) -> bool:
        return any(run.check.feed is feed for run in self.runs)

    def explore(self, seed: int, *, feed: Feed) -> None:
        """Judge the inputs Hypothesis generates, valid ones or one-mistake mutations."""
        if not self.feeds(feed):
            return
        invalid = feed is INVALID

        # Settings not given here come from the active Hypothesis profile (the "ci" one when CI
        # is set): derandomize, print_blob and the example database are the user's to choose.
        @hypothesis.seed(seed)
        @hypothesis.settings(
            max_examples=_invalid_count(self.settings) if invalid else self.settings.examples,
            deadline=None,
            phases=(Phase.generate,),
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
        )
        @hypothesis.given(self.invalid if invalid else self.drawn)
        def generated(case: Any) -> None:
            if invalid:
                self.judge_mutation(case)
            else:
                self.judge_example(case, "")

        with contextlib.suppress(_Stop):
            generated()

    def replay(self, feed: Feed) -> None:
        """Judge first the failing inputs that earlier runs saved in the example database.

        An entry is dropped when the schema no longer classes its input as this feed's (valid,
        or breaking the schema), and when it does not fail again: the tool was fixed. (A
        failure that does not reproduce within one run is reported as flaky: see confirm.)
        """
        if self.database is None:
            return
        validator = self.context.validator(self.subject.input_schema)
        for run in self.runs:
            if run.check.feed is not feed:
                continue
            key = _failure_key(self.subject, run.check)
            for entry in list(self.database.fetch(key)):
                try:
                    saved = json.loads(entry)
                    value, label = saved["input"], f"{saved['label']} {_REPLAYED}".lstrip()
                    before = tuple(Step(*step) for step in saved.get("before", ()))
                    replayable = validator.is_valid(value) is (feed is VALID)
                except (ValueError, KeyError, TypeError):
                    replayable = False
                if not replayable or not self.prepared(before):
                    self.database.delete(key, entry)
                    continue
                self.judge(value, label, feed=feed, before=before)
                self.replayed.add((feed, repr(value)))
                if run.failure is None or run.failure[0].input != value:
                    self.database.delete(key, entry)

    def prepared(self, before: tuple[Step, ...]) -> bool:
        """Make the steps of a saved failure again: whether they could be (their tools are
        still beside the tool, and none crashed)."""
        together = self.together
        if not before:
            return True
        if together is None or any(step.ref not in together.tools for step in before):
            return False
        return make_steps(self, before)

    def save(self, run: _Run) -> None:
        """Keep a failure's (minimal) input in the example database, to be replayed first by the
        next run, whatever its seed."""
        if self.database is None or run.failure is None:
            return
        call = run.failure[0]
        label = call.label.removesuffix(_REPLAYED).rstrip()
        saved = {"input": call.input, "label": label}
        if call.before:
            saved["before"] = [[step.ref, step.name, step.input] for step in call.before]
        entry = json.dumps(saved, sort_keys=True)
        self.database.save(_failure_key(self.subject, run.check), entry.encode())

    def reproduce(self, run: _Run) -> None:
        """Call a failure's input once more, alone, in a fresh worker (a fresh server), as its
        reproduction will: after a pause when the tool refused it, as pacing would.

        A refusal that does not happen again is not blamed on the input: it came from the
        server's pacing or from what earlier calls left, and the failure is dropped with a note.
        Any other failure that does not happen again is kept, saying so. A call that hung or
        killed the process is not made again: it would cost a whole timeout, and the crash is
        a fact.
        """
        assert run.failure is not None
        call, violations = run.failure
        observation = call.observation
        if observation.status == "crashed" or time.monotonic() > self.deadline:
            return
        refusal = observation.result is not None and not self.subject.result.served(observation)
        self.worker.restart()
        if refusal:
            time.sleep(_PAUSES[0])
        again = self.call_again(run)
        if again is None:
            return
        happened, found = again
        how = "alone" if not call.before else "after the same calls of other tools"
        if refusal:
            run.failure = None
            run.notes.append(
                note(
                    f"not blamed on an input: {violations[0]}; called again {how} in a fresh "
                    f"worker after a pause, {happened} (the server's pacing, or what earlier "
                    "calls left)"
                )
            )
            return
        self.add_to_failure(
            run,
            f"called again {how} in a fresh worker: {happened}; {found}: the failure depends "
            "on the calls made before it",
        )

    def happened(self, observation: Observation) -> str:
        """What one call came to, in a few words, served or not."""
        if self.subject.result.served(observation):
            return "it was served"
        return _happened(observation)

    def call_again(self, run: _Run) -> tuple[str, str] | None:
        """Call a failure's input once more: None when the failure happens again, else what the
        call came to and what the check then found, in words."""
        assert run.failure is not None
        call, violations = run.failure
        again = self.call(
            call.input,
            call.label,
            feed=run.check.feed,
            repeat=False,
            vary=run.check.varies,
            before=call.before,
            again=True,
            world=bool(call.world),
        )
        found = self.violations(run.check, again)
        if found and _severe(found) == _severe(violations):
            return None
        second = f"found only a warning: {found[0]}" if found else "found nothing"
        return self.happened(again.observation), f"this check then {second}"

    def add_to_failure(self, run: _Run, text: str) -> None:
        """Add a sentence to a failure, as severe as the failure."""
        assert run.failure is not None
        call, violations = run.failure
        severity = Severity.FAILURE if _severe(violations) else Severity.WARNING
        run.failure = (call, (*violations, Finding(text, severity)))

    def confirm(self, run: _Run) -> None:
        """Call a failure's input once more: a failure that does not happen again is flaky,
        and is reported so, with both outcomes, never dropped.

        A call that hung or killed the process is not made again: it would cost a whole timeout,
        and the crash is a fact.
        """
        assert run.failure is not None
        if run.failure[0].observation.status == "crashed" or time.monotonic() > self.deadline:
            return
        again = self.call_again(run)
        if again is not None:
            happened, found = again
            self.add_to_failure(
                run, f"flaky: called again with the same input: {happened}; {found}"
            )

    def shrink(self, run: _Run) -> None:
        """Replace the run's failure by a smaller input that still fails the same way, shrunk
        from it (see _strategies.smaller): one that the schema classes as before (valid, or
        breaking it in the same places), whose call fails the check as severely and comes to
        the same kind of end (the same exception, the same crash). At most as many calls as
        the run had examples (20 at least), within the shrinking budget.
        """
        assert run.failure is not None
        feed = run.check.feed
        deadline = min(time.monotonic() + _SHRINK_BUDGET, self.deadline)
        calls = max(self.settings.examples, 20)
        failing, violations = run.failure
        kind = self.failure_kind(failing, violations)
        if failing.before:
            calls -= self.fewer_steps(run, kind, deadline)
            failing, violations = run.failure
        mistakes = self.mistakes(failing.input)
        tried = {canonical_json(failing.input)}
        current = failing.input
        # A mutation's label names its mistake, which a shrunk input keeps; a valid input's
        # names what it exercised, which it may not.
        label = (
            failing.label
            if feed is INVALID or not failing.label
            else (f"shrunk from: {failing.label}")
        )
        while True:
            for candidate in smaller(current):
                text = canonical_json(candidate)
                if text in tried or shrink_size(candidate) >= shrink_size(current):
                    continue
                tried.add(text)
                if self.mistakes(candidate) != mistakes:
                    continue
                if (
                    not calls
                    or time.monotonic() > deadline
                    or self.crashes.get(feed, 0) >= (2 * _MAX_CRASHES)
                ):
                    return
                calls -= 1
                call = self.call(
                    candidate, label, feed=feed, repeat=run.check.repeats,
                    vary=run.check.varies, before=failing.before, again=True,
                    world=bool(failing.world),
                )  # fmt: skip
                found = self.violations(run.check, call)
                if found and self.failure_kind(call, found) == kind:
                    run.failure, current = (call, found), candidate
                    break
            else:
                return

    def fewer_steps(self, run: _Run, kind: tuple[bool, str], deadline: float) -> int:
        """Leave out the steps before a failure one at a time, each time in a fresh worker,
        keeping each leaving-out after which the input still fails the same way: the shortest
        sequence found that fails. Returns the calls made."""
        assert run.failure is not None
        made = 0
        failing = run.failure[0]
        at = len(failing.before) - 1
        while at >= 0 and time.monotonic() < deadline:
            fewer = failing.before[:at] + failing.before[at + 1 :]
            self.worker.restart()
            made += 1 + len(fewer)
            call = self.call(
                failing.input,
                failing.label,
                feed=run.check.feed,
                repeat=run.check.repeats,
                vary=run.check.varies,
                before=fewer,
                again=True,
                world=bool(failing.world),
            )
            found = self.violations(run.check, call)
            if found and self.failure_kind(call, found) == kind:
                run.failure = (call, found)
                failing = call
            at -= 1
        return made

    def mistakes(self, value: Any) -> frozenset[tuple[str, str]]:
        """Where and how ``value`` breaks the tool's input schema: what a shrunk input must keep
        (none, for a valid input; the same mistakes, for a mutation)."""
        validator = self.context.validator(self.subject.input_schema)
        return frozenset(
            (error.json_path, str(error.validator)) for error in validator.iter_errors(value)
        )

    def failure_kind(self, call: Call, violations: tuple[Finding, ...]) -> tuple[bool, str]:
        """What a smaller input's failure must share with the one found: as severe, and the
        same end of the call (the same exception raised, the same crash, a result)."""
        observation = call.observation
        end: str = observation.status
        if observation.exception is not None:
            end = f"raised {observation.exception.qualified_name}"
        elif observation.crash_kind:
            end = f"crashed {observation.crash_kind}"
        return _severe(violations), end


def _severe(violations: tuple[Finding, ...]) -> bool:
    """Whether a finding fails a run whatever its settings (not only a warning)."""
    return any(violation.severe for violation in violations)


def _mutation_label(mutation: Mutation) -> str:
    return f"invalid input, {mutation.kind}: {mutation.detail}"


# Said of an input an earlier run saved as failing, when this run replays it.
_REPLAYED = "(replayed: it failed in an earlier run)"


def _failure_key(subject: SubjectInfo, check: Check) -> bytes:
    """Where a check's failing inputs of a tool are kept in the example database."""
    return f"axm-conformance failure {subject.ref} {check.id}".encode()


def _ended_in(exception: ExceptionInfo) -> tuple[str, str]:
    """An error as calls are counted by it (the innermost class of its cause chain, and the
    wrappers it came through), and its message, shortened."""
    chain = [exception]
    while chain[-1].cause is not None:
        chain.append(chain[-1].cause)
    innermost = chain[-1]
    through = " through ".join(info.type_name for info in reversed(chain[:-1]))
    name = innermost.type_name + (f" (raised through {through})" if through else "")
    message = innermost.message
    return name, message if len(message) <= 100 else message[:97] + "..."


def _happened(observation: Observation) -> str:
    """What one call came to, in a few words."""
    if observation.exception is not None:
        return f"it raised {_ended_in(observation.exception)[0]}"
    return observation.crash_detail or f"it {observation.status}"


# What lets the kit reach a tool's domain, said where every call ended in an error.
_REACH_HINT = (
    "To let the kit reach the tool's domain, give the input schema values the tool serves "
    "(`examples`, `default`, `enum`), the files it works on (--axm-worker-files) or, for a "
    "server, the environment it needs (--axm-mcp-env)"
)


def _unserved(session: _Session) -> str:
    """Why a check of valid calls judged nothing: none was served; what they were answered
    most often, with counts."""
    tally = session.tally
    made = ", ".join(f"{tally[kind]} {kind}" for kind in CALL_KINDS[1:])
    answers = ", ".join(f"{said!r} in {n}" for said, n in session.refusals.most_common(3))
    answered = f"; the most frequent answers: {answers}" if answers else ""
    return (
        f"inconclusive: no valid call was served ({tally['valid']} valid calls: {made})"
        f"{answered}. {_REACH_HINT}"
    )


def _errors(session: _Session, feed: Feed) -> str:
    """The three errors the feed's calls ended in most often, with their counts."""
    counted = session.errors.get(feed)
    if not counted:
        return ""
    ended = [
        f"{error} in {count} (e.g. {session.error_messages[error]!r})"
        if session.error_messages[error]
        else f"{error} in {count}"
        for error, count in counted.most_common(3)
    ]
    return "; they ended in " + ", ".join(ended)


def _invalid_count(settings: Settings) -> int:
    """How many generated invalid inputs a tool gets: half the valid ones, at least ten."""
    return max(10, settings.examples // 2)


def _not_objects() -> list[Mutation]:
    """Inputs that are not objects at all, for protocols whose input arrives as one value."""
    values: tuple[Any, ...] = (None, [], "text", 0)
    return [
        Mutation(value, "not-an-object", (), f"the input is {json.dumps(value)}, not an object")
        for value in values
    ]


def certify(
    subject: SubjectInfo,
    key: str,
    settings: Settings,
    seed: int | None,
    subjects: Iterable[SubjectInfo] = (),
    check_ids: Iterable[str] | None = None,
    workers: WorkersAhead | None = None,
    progress: Progress | None = None,
    callers: Callers | None = None,
) -> ToolReport:
    """Run the selected checks (all by default) on one tool and return their outcomes.

    The tool is called in a worker of its own, taken from ``workers`` when given, or by a
    caller ``callers`` makes (see _caller: the kit's tests give the engine a fake). Without a
    ``seed``, the tool's is derived from its key and input schema (a derandomized run).
    ``progress`` is told, now and then while the tool is called, what is being done.
    """
    if seed is None:
        seed = derived_seed(key, canonical_json(subject.input_schema))
    chosen = checks_for(subject.kind, check_ids or settings.checks)
    context = Context(settings=settings, subjects=tuple(subjects))
    outcomes: dict[str, Outcome] = {}
    calls: dict[str, int | float] = {}
    per_call: list[Check] = []
    refusal = settings.refusal(subject.effects)
    refused = None if refusal is None else not_run(refusal)
    # A server is observed when it is described, not by its checks, which only judge what was
    # seen: the first of them that runs is charged that time.
    unpaid = subject.server.duration if subject.server is not None else 0.0
    for check in chosen:
        exempt = settings.exemption(check.opt_out, subject.name)
        reason = (
            note(f"exempt by the axm_{check.opt_out} setting: {exempt}")
            if exempt is not None
            else check.skip_reason(subject)
        )
        if reason is None and check.per_call:
            reason = refused
        if reason is not None:
            status = Status.NOT_RUN if reason.severity is Severity.NOT_RUN else Status.SKIPPED
            outcomes[check.id] = Outcome(check.id, check.title, status, (reason,))
        elif check.per_call:
            per_call.append(check)
        else:
            started = time.perf_counter()
            found = check.findings(subject, None, context)
            violations = tuple(item for item in found if item.severity is not Severity.NOTE)
            outcomes[check.id] = Outcome(
                check.id,
                check.title,
                _status(violations, settings) if violations else Status.PASSED,
                violations or found,
                duration=time.perf_counter() - started + unpaid,
            )
            unpaid = 0.0
    if per_call:
        if callers is None:
            caller: Caller = (workers or WorkersAhead(settings)).take(subject)
            callers = tool_worker
        else:
            caller = callers(subject, settings)
        # Inputs come from the tool's side only (its schema, source, files), never from the
        # modules this process imported: see _strategies._constants.
        with without_local_constants():
            fuzzed, calls = _fuzz(
                subject, per_call, context, settings, seed, (caller, callers), progress
            )
        outcomes.update(fuzzed)
    ordered = tuple(outcomes[check.id] for check in chosen)
    together = tuple(
        other.ref
        for other in context.subjects
        if subject.shares_home(other) and settings.refusal(other.effects) is None
    )
    return ToolReport(subject, key, ordered, seed, calls, together)


def _fuzz(
    subject: SubjectInfo,
    checks: list[Check],
    context: Context,
    settings: Settings,
    seed: int,
    callers: tuple[Caller, Callers],
    progress: Progress | None,
) -> tuple[dict[str, Outcome], dict[str, int | float]]:
    """The outcomes of the per-call checks, and what became of the valid calls (CALL_KINDS;
    with ``backoffs`` and ``paused`` seconds when the server's pacing made the kit back off)."""
    started = time.perf_counter()
    runs = [_Run(check) for check in checks]
    worker, online = callers
    # The worker is closed whatever happens, also when the tool turns out not to be callable.
    with contextlib.closing(worker):
        try:
            schema = subject.input_schema
            hints = hints_for(subject, settings)
            try:
                boundary = boundary_inputs(schema)
                invalid, mutations = invalid_inputs(schema, hints), invalid_examples(schema)
                drawn = generated_inputs(schema, hints)
                placed = hinted_inputs(schema, hints, settings.examples)
            except ValueError as exc:
                raise _NotRunnable(
                    f"no valid input can be generated from the input schema: {exc}"
                ) from None
            if subject.call_style == "dict":
                mutations = [*mutations, *_not_objects()]
            discarded_before = discarded_count(schema)
            session = _Session(subject, runs, context, worker, settings, invalid, drawn)
            session.online = online
            session.progress = progress
            session.together = Together.of(session)
            session.deadline = time.monotonic() + settings.tool_budget
            session.database = hypothesis.settings().database
            with contextlib.suppress(_Stop):
                session.phase = "valid inputs"
                try:
                    session.replay(VALID)
                    for example in boundary:
                        session.judge_example(example, f"boundary example: {example.label}")
                    for example in placed:
                        session.judge_example(example, example.label)
                    session.explore(seed, feed=VALID)
                finally:
                    session.flush()
                # Before other tools change the world the refusals were made in.
                session.phase = "variations of refused inputs"
                session.vary_refused()
                session.phase = "after other tools of its home"
                try:
                    explore_together(session, seed)
                finally:
                    session.flush()
            session.finish(VALID)
            session.discarded = discarded_count(schema) - discarded_before
            with contextlib.suppress(_Stop):
                session.phase = "invalid inputs"
                session.replay(INVALID)
                for mutation in mutations:
                    session.judge_mutation(mutation)
                session.explore(seed, feed=INVALID)
            session.finish(INVALID)
            session.phase = "probes"
            _probe(session, [example.value for example in boundary], mutations)
            _offline(session, [example.value for example in boundary])
            for run in runs:
                if run.failure is not None and run.check.feed.fuzzed:
                    session.phase = f"shrinking {run.check.id}"
                    shrinking = time.perf_counter()
                    session.shrink(run)
                    if not run.check.repeats:  # a check that repeats compares two calls itself
                        session.reproduce(run)
                        if run.failure is not None:
                            session.confirm(run)
                    session.save(run)
                    _charge([run], shrinking)
        except _NotRunnable as exc:
            message = not_run(f"not run: {exc}")
            _share_the_rest(runs, time.perf_counter() - started)
            outcomes = {
                run.check.id: Outcome(
                    run.check.id, run.check.title, Status.ERROR, (message,), duration=run.seconds
                )
                for run in runs
            }
            return outcomes, {}
    _share_the_rest(runs, time.perf_counter() - started)
    outcomes = {run.check.id: _outcome(run, session, run.seconds) for run in runs}
    calls: dict[str, int | float] = {kind: session.tally[kind] for kind in CALL_KINDS}
    if session.backoffs:
        calls |= {"backoffs": session.backoffs, "paused": round(session.paused, 1)}
    return outcomes, calls


def _charge(runs: list[_Run], started: float) -> None:
    """Share the time since ``started`` (time.perf_counter) among ``runs``."""
    share = (time.perf_counter() - started) / len(runs)
    for run in runs:
        run.seconds += share


def _share_the_rest(runs: list[_Run], total: float) -> None:
    """Share the tool's time that no call or shrinking accounts for (its worker's start, drawing
    the inputs) in proportion to what each check spent, so that the checks' times add up to the
    tool's."""
    spent = sum(run.seconds for run in runs)
    rest = max(total - spent, 0.0)
    for run in runs:
        run.seconds += rest * (run.seconds / spent if spent else 1 / len(runs))


def _probe(session: _Session, examples: list[Any], mutations: list[Mutation]) -> None:
    """Feed the guard and concurrency probes their inputs."""
    objects = [example for example in examples if isinstance(example, dict)]
    if not objects:
        session.finish(GUARDS, CRASHING_GUARD, CONCURRENCY)
        return
    with contextlib.suppress(_Stop):
        # Making the cases takes a validation each: only when a check judges them.
        for value, label in _adversarial(session, objects) if session.feeds(GUARDS) else ():
            session.judge(value, label, feed=GUARDS)
    session.finish(GUARDS)
    with contextlib.suppress(_Stop):
        for value in objects[:_CRASHING_GUARD_CALLS]:
            label = "a copy of the tool with a crashing guard first"
            session.judge(value, label, feed=CRASHING_GUARD)
    session.finish(CRASHING_GUARD)
    refused = next((m.value for m in mutations if isinstance(m.value, dict)), None)
    with contextlib.suppress(_Stop):
        label = "concurrent calls with a slowed handler"
        session.judge((objects[0], refused), label, feed=CONCURRENCY)
    session.finish(CONCURRENCY)


def _served_online(session: _Session) -> None:
    """In a sandbox a tool that declares a closed world is cut off from the network for every
    call, so no second server is needed to see it served so: instead the valid inputs it refused
    are sent again to a worker of its own that reaches the network (only when there are any),
    and each it serves there is a refusal that closed-world-honoured judges."""
    runs = [run for run in session.runs if run.check.feed is OFFLINE]
    refused = session.refused[:_OFFLINE_CALLS]
    if not refused:
        session.finish(OFFLINE)
        return
    main = session.worker
    session.worker = session.online(
        session.subject, dataclasses.replace(session.settings, network=("*",))
    )
    try:
        with contextlib.suppress(_Stop):
            for call in refused:
                if time.monotonic() > session.deadline:
                    session.exhausted = True
                    raise _Stop
                online = session.observe(call.input, VALID)[0]
                if session.subject.result.served(online):
                    label = "an input it refused cut off from the network, which it serves with it"
                    for run in runs:
                        session.record(run, dataclasses.replace(call, label=label))
        session.finish(OFFLINE)
    finally:
        session.worker.close()
        session.worker = main


def _offline(session: _Session, examples: list[Any]) -> None:
    """Send the last few valid inputs the tool served again, cut off from the network; when no
    check made valid calls, the boundary examples it serves."""
    if not session.feeds(OFFLINE):
        return
    subject, settings = session.subject, session.settings
    if settings.contained and not settings.reaches_network(subject.name, subject.needs_network):
        _served_online(session)
        return
    with contextlib.suppress(_Stop):
        for example in examples if not session.feeds(VALID) else ():
            if len(session.served.latest) >= _OFFLINE_CALLS:
                break
            session.call(example, "", feed=VALID, repeat=False)
        for value in session.served.inputs[-_OFFLINE_CALLS:]:
            label = "an input it served, sent again with the tool cut off from the network"
            session.judge(value, label, feed=OFFLINE)
    session.finish(OFFLINE)


def _adversarial(session: _Session, objects: list[Any]) -> list[tuple[Any, str]]:
    """Valid inputs with hostile strings put into their string properties, still schema-valid."""
    hostile = _substituted(
        session, objects[:1], ADVERSARIAL_STRINGS, lambda _, name: f"adversarial string in {name!r}"
    )
    return [*((value, "a boundary example") for value in objects), *hostile]


def _substituted(
    session: _Session, bases: list[Any], texts: Iterable[str], label: Callable[[str, str], str]
) -> list[tuple[Any, str]]:
    """Each of ``bases`` with each text put into each of its properties, where still valid."""
    validator = session.context.validator(session.subject.input_schema)
    properties = session.subject.input_schema.get("properties") or {}
    cases: list[tuple[Any, str]] = []
    for base in bases:
        for name in properties:
            for text in texts:
                candidate = {**base, name: text}
                if validator.is_valid(candidate):
                    cases.append((candidate, label(text, name)))
    return cases


def hints_for(subject: SubjectInfo, settings: Settings) -> Hints:
    """The values likely to reach the tool's domain, by source (see _strategies.Hints)."""
    described = described_values(subject.description, subject.input_schema)
    return Hints.of(
        {
            "worker-file": _worker_file_names(settings),
            "source-literal": _with_structured(subject.literals),
            "description": _with_structured(described),
        }
    )


def _with_structured(values: Sequence[str | int | float]) -> list[str | int | float]:
    """A source's values with the strings built of its tokens (see structured_strings):
    after its first values, the nearest to the tool, so that the placed inputs reach them."""
    nearest = _NEAREST_HINTS
    return [*values[:nearest], *structured_strings(values), *values[nearest:]]


def _worker_file_names(settings: Settings) -> list[str]:
    """The worker files as the tool finds them: paths relative to its working directory."""
    if settings.worker_files is None:
        return []
    root = Path(settings.worker_files)
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())


def _outcome(run: _Run, session: _Session, duration: float) -> Outcome:
    """The outcome of one per-call check, with the statistics of its inputs.

    A check of valid calls that found nothing is inconclusive when no valid call was served:
    it judged only refusals and errors, and a tool is certified only on what it serves.
    """
    outcome = _verdict(run, session, duration)
    tally = session.tally
    if outcome.status is Status.PASSED and run.check.feed is VALID and not tally["served"]:
        outcome = dataclasses.replace(
            outcome, status=Status.INCONCLUSIVE, findings=(not_run(_unserved(session)),)
        )
    return dataclasses.replace(
        outcome,
        discarded=session.discarded if run.check.feed is VALID else 0,
        invalid_inputs=(
            sum(session.statuses.get(INVALID, {}).values()) if run.check.feed is INVALID else 0
        ),
        keywords=tuple(sorted(run.keywords)),
        sources=tuple((source, run.sources[source]) for source in SOURCES if source in run.sources),
    )


def _status(violations: tuple[Finding, ...], settings: Settings) -> Status:
    """What a check's violations make of it: a failure, a warning (unless the run is strict),
    or, when it could only say it could not judge, not run."""
    severities = {violation.severity for violation in violations}
    if Severity.FAILURE in severities or (settings.strict and Severity.WARNING in severities):
        return Status.FAILED
    return Status.WARNING if Severity.WARNING in severities else Status.NOT_RUN


def _verdict(run: _Run, session: _Session, duration: float) -> Outcome:
    check = run.check
    if run.failure is None and check.feed not in session.finished:
        budget = (
            f"not run: the tool's time budget of {session.settings.tool_budget:g} s "
            "(--axm-tool-budget) ran out before this check could finish"
        )
        return Outcome(
            check.id,
            check.title,
            Status.ERROR,
            (not_run(budget),),
            examples=run.examples,
            duration=duration,
        )
    if run.failure is not None:
        call, violations = run.failure
        # A probe calls a modified copy of the tool: no person can make the same call.
        evidence = _evidence(
            call,
            callable_by_hand=check.feed.fuzzed,
            in_process=session.subject.offers("in-process"),
        )
        return Outcome(
            check.id,
            check.title,
            _status(violations, session.settings),
            tuple(dataclasses.replace(violation, evidence=evidence) for violation in violations),
            examples=run.examples,
            evidence=evidence,
            duration=duration,
        )
    if run.examples == 0:
        return _unjudged(run, session, duration)
    notes = tuple(dict.fromkeys(run.notes))
    return Outcome(
        check.id, check.title, Status.PASSED, notes, examples=run.examples, duration=duration
    )


def _evidence(call: Call, *, callable_by_hand: bool, in_process: bool = True) -> Evidence:
    """The call a check's findings were made on, with the tool's traceback or last words (for
    a tool in another process, what that process wrote to stderr)."""
    observation = call.observation
    traceback = ""
    if observation.exception is not None:
        traceback = observation.exception.traceback
    elif observation.stderr_tail:
        # A hung call's stacks list the innermost frame first: only stderr is cut to its end.
        heading, tail = (
            ("where it was when it was stopped:", observation.stderr_tail)
            if observation.crash_kind == "timeout" and in_process
            else ("what the process wrote to stderr last:", stderr_tail(observation.stderr_tail))
        )
        traceback = f"{heading}\n{tail}"
    before = tuple((step.ref, step.name, step.input) for step in call.before)
    return Evidence(call.input, call.label, traceback, callable_by_hand, before)


def _unjudged(run: _Run, session: _Session, duration: float) -> Outcome:
    """The outcome of a per-call check no call reached: why it could not run, or inconclusive."""
    check = run.check
    made = session.statuses.get(check.feed, {})
    seen = ", ".join(f"{count} {status}" for status, count in sorted(made.items()))
    culprits = [
        other.check.id
        for other in session.runs
        if other.failure is not None and (_severe(other.failure[1]) or session.settings.strict)
    ]
    reason = ""
    if check.feed is INVALID and session.crashes.get(check.feed, 0) < _MAX_CRASHES:
        # Nothing to judge is not a defect, nor a doubt: no input breaks the schema, or every
        # one that does is refused by the caller before the tool sees it.
        nothing = (
            f"nothing to judge: every invalid input was refused before reaching the tool ({seen})"
            if made
            else "nothing to judge: no input breaks the schema in a way the tool could receive"
        )
        return Outcome(check.id, check.title, Status.SKIPPED, (note(nothing),), examples=0)
    if check.feed is OFFLINE and not made:
        nothing = "nothing to judge: the tool served no valid input to send again"
        return Outcome(check.id, check.title, Status.SKIPPED, (note(nothing),), examples=0)
    if session.crashes.get(check.feed, 0) >= _MAX_CRASHES:
        reason = (
            f"not run: the tool was not called again after {_MAX_CRASHES} calls hung "
            f"or crashed; see {', '.join(culprits)}"
        )
    wanted = _STATUS_PHRASES.get(check.considers, "could be judged")
    why = f"no call {wanted} ({sum(made.values())} calls: {seen or 'none made'})"
    # When another check failed on those calls, it is the finding; this one could not run
    # because of it. Otherwise the calls never reached what this check judges: inconclusive,
    # neither a pass nor a failure, and the tool is not certified.
    if not reason and culprits:
        reason = f"not run: {why}; see {', '.join(culprits)}"
    if reason:
        return Outcome(check.id, check.title, Status.NOT_RUN, (not_run(reason),), examples=0)
    inconclusive = f"inconclusive: {why}{_errors(session, check.feed)}. {_REACH_HINT}"
    return Outcome(
        check.id,
        check.title,
        Status.INCONCLUSIVE,
        (not_run(inconclusive),),
        examples=0,
        duration=duration,
    )
