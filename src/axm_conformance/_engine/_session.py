"""The session: one tool's calls, made once and judged by every per-call check that takes them.

A call goes through the session's caller (see _caller); the session keeps what it learned (what
the tool served, refused, how it was paced, what crashed) and lets each check judge each call,
keeping each check's first failure. The valid inputs are judged here (the boundary examples, the
hints placed, Hypothesis' inputs, the refused ones varied and the bounds they hide bisected), as
are the invalid ones; the phases around it each own a module (see the package's docstring).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from axm_conformance._checks import Check, Context
from axm_conformance._engine._caller import Caller, Callers
from axm_conformance._engine._stateful import Together, make_steps, read_world
from axm_conformance._feeds import (
    INVALID,
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
from axm_conformance._outcomes import Finding, Severity
from axm_conformance._process.parent._pool import tool_worker
from axm_conformance._process.parent._worker import Crash
from axm_conformance._settings import Settings
from axm_conformance._strategies import (
    Cap,
    Example,
    Mutation,
    Served,
    is_valid_input,
    keywords_exercised,
    variations,
)
from axm_conformance.protocols import protocol_named

__all__ = ["CALL_KINDS", "Progress"]

# What became of the valid calls a tool was judged on: made, served (a success that is not an
# error in disguise), refused (a failed result, an error in disguise, a refusal raised on
# purpose or by the operating system) and errored (a crash, a hang, an error response).
CALL_KINDS = ("valid", "served", "refused", "errored")

# Told what a certification is doing: "valid inputs, 42 calls".
Progress = Callable[[str], None]

# After this many calls that hung or killed the worker, the tool is not called again: the
# failure is established and every further call could cost a whole timeout.
_MAX_CRASHES = 3
# The variations of at most this many refused valid inputs are called, per tool (and as many
# again of those refused after other tools prepared their world): a tool that refuses most inputs
# would otherwise cost several calls for each.
_MOST_VARIED = 25
# Calls a bisection for the bound a tool serves may make: enough for integers up to 2**24 apart;
# and the other inputs it served that must refuse the value past it.
_MOST_BISECTIONS = 24
# The values inside a bound found that must be served too for it to be a cap.
_CAP_RANGE = 2
_CONFIRMATIONS = 2
# Seconds between two progress reports, at most one per call.
_PROGRESS_EVERY = 0.2
# A server's pacing: after this many valid calls in a row refused with one answer the tool had
# not given before, the kit pauses for each of these seconds in turn until the tool serves
# again (see _Session.pace).
_STREAK = 3
_PAUSES = (1.0, 2.0, 4.0, 8.0, 16.0)


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
        # An input replayed from the database is not sent alone again; after other tools it is.
        if not runs or (not before and (feed, repr(value)) in self.replayed):
            return
        self.go_on(feed)
        repeat = any(run.check.repeats for run in runs)
        world = (
            feed is VALID
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


def _charge(runs: list[_Run], started: float) -> None:
    """Share the time since ``started`` (time.perf_counter) among ``runs``."""
    share = (time.perf_counter() - started) / len(runs)
    for run in runs:
        run.seconds += share


def _invalid_count(settings: Settings) -> int:
    """How many generated invalid inputs a tool gets: half the valid ones, at least ten."""
    return max(10, settings.examples // 2)
