"""The session: one tool's calls, made once and judged by every per-call check that takes them.

A call goes through the session's caller (see _caller); the session keeps what it learned (what
the tool served, refused, how it was paced, what crashed) and lets each check judge each call,
keeping each check's first failure, and paces its calls as a server's rate limit asks. The
phases that choose what to call each own a module (see the package's docstring).
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from axm_conformance._checks import Check, CheckContext
from axm_conformance._engine._caller import Caller, Callers
from axm_conformance._engine._runs import _charge, _NotRunnable, _Run, _severe, _Stop
from axm_conformance._engine._stateful import Together, call_step, make_steps, read_world
from axm_conformance._engine._templates import Templates
from axm_conformance._engine._varying import MOST_VARIED, call_variations
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
)
from axm_conformance._outcomes import Finding, Severity
from axm_conformance._process.parent._pool import tool_worker
from axm_conformance._process.parent._worker import Crash
from axm_conformance._settings import Settings
from axm_conformance._strategies import (
    Example,
    Mutation,
    Served,
    keywords_exercised,
)
from axm_conformance.protocols import protocol_named

__all__ = ["CALL_KINDS", "Progress", "crash_detail"]

# What became of the valid calls a tool was judged on: made, served (a success that is not an
# error in disguise), refused (a failed result, an error in disguise, a refusal raised on
# purpose or by the operating system) and errored (a crash, a hang, an error response).
CALL_KINDS = ("valid", "served", "refused", "errored")

# Told what a certification is doing: "valid inputs, 42 calls".
Progress = Callable[[str], None]

# After this many calls that hung or killed the worker, the tool is not called again: the
# failure is established and every further call could cost a whole timeout.
_MAX_CRASHES = 3
# Seconds between two progress reports, at most one per call.
_PROGRESS_EVERY = 0.2
# A server's pacing: after this many valid calls in a row refused with one answer the tool had
# not given before, the kit pauses for each of these seconds in turn until the tool serves
# again (see _Session.pace).
_STREAK = 3
_PAUSES = (1.0, 2.0, 4.0, 8.0, 16.0)
# The calls made in the worker since it last started fresh that are kept, the most recent: what
# a failure that needs earlier calls is made again after (see _shrinking.reproduce).
_REMEMBERED = 48


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


def crash_detail(crash: Crash, timeout: float, run_timeout: float) -> str:
    """What a crash means for the tool, in its terms rather than the worker's: a call given
    ``timeout`` seconds, where the run's --axm-timeout is ``run_timeout`` (a probe's feed may
    give more)."""
    if crash.kind == "timeout":
        given = (
            "--axm-timeout"
            if timeout == run_timeout
            else f"this probe is given {timeout / run_timeout:g} times --axm-timeout"
        )
        return (
            f"the call did not return within {timeout:g} s ({given}); the process running it "
            "was killed"
        )
    if crash.kind == "exited":
        return f"the process running the tool exited with status {crash.exit_code}"
    if crash.kind == "signalled":
        return f"the process running the tool was killed by {crash.signal_name}"
    if crash.kind == "memory":
        return f"the process running the tool ran out of memory: {crash.detail}"
    return crash.detail


@dataclass
class _Session:
    subject: SubjectInfo
    runs: list[_Run]
    context: CheckContext
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
    # What the tool served, and the refused valid inputs to vary, at most MOST_VARIED a phase.
    served: Served = field(default_factory=Served)
    # The served inputs whose call left the tool's world as it found it: what a tool that
    # paces its calls serves again once it lets calls through.
    repeatable: list[Any] = field(default_factory=list)
    # The bounds bisections found, by property: the last value served and the first refused.
    capped: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    refused: list[Call] = field(default_factory=list)
    # How many of those were varied (the phases before this one's).
    varied: int = 0
    # The valid calls judged, by what became of them (see CALL_KINDS), and what the refusals
    # and errors among them said, by how often.
    tally: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    # The served answers by template, to tell refusals by behaviour (see _templates).
    templates: Templates = field(default_factory=Templates)
    # The server's pacing (see pace): the valid calls held back while their refusals may be
    # pacing, the shapes of the answers given outside a streak and of those found to be pacing,
    # how often the kit backed off and for how long, and when the tool was last called (for
    # --axm-pace).
    held: list[_Held] = field(default_factory=list)
    answers: set[str] = field(default_factory=set)
    pacing: set[str] = field(default_factory=set)
    backoffs: int = 0
    paused: float = 0.0
    # Failures found that the tool was not blamed for (see _shrinking): "flaky", which did not
    # happen again, and "not_judged", which a call that broke the tool's world caused.
    unblamed: Counter[str] = field(default_factory=Counter)
    last_call: float = -math.inf
    # What makes a caller of the tool that reaches the network (see _served_online).
    online: Callers = tool_worker
    # The other tools of its home and what their calls made (see _stateful).
    together: Together | None = None
    # The calls made in the worker since it last started fresh (the tool's own, and the steps
    # of other tools), at most _REMEMBERED, the most recent last.
    history: list[Step] = field(default_factory=list)

    def restart(self) -> None:
        """Start the tool afresh (see Caller.restart): no call made before counts any more."""
        self.worker.restart()
        self.history.clear()

    def remember(self, step: Step, observation: Observation | None) -> None:
        """Keep a call made in the worker; after one that crashed or hung, the next call meets
        a fresh worker, and nothing before it counts."""
        if observation is None or observation.status == "crashed":
            self.history.clear()
            return
        self.history.append(step)
        del self.history[:-_REMEMBERED]

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
        prefix = tuple(self.history)
        first, trace = self.observe(value, feed)
        second = None
        if repeat and first.status != "crashed":
            second = self.observe(value, feed)[0]
        call = Call(
            value, first, label, second, feed is INVALID, trace, before=before, prefix=prefix
        )
        if feed is VALID and self.subject.result.served(first):
            self.served.add(value)
            if not first.world_changed and not (first.result and first.result.changes):
                self.repeatable.append(value)
            if world:
                call = dataclasses.replace(call, world=read_world(self, value))
        elif vary and feed is VALID and self.subject.result.refused(first):
            call = dataclasses.replace(call, variations=call_variations(self, value))
        return call

    def go_on(self, feed: Feed) -> None:
        """Stop (raise _Stop) when the tool is not to be called again through ``feed``: its
        calls hung or crashed too often, or its time is up."""
        if self.crashes.get(feed, 0) >= _MAX_CRASHES:
            raise _Stop
        if time.monotonic() > self.deadline:
            self.exhausted = True
            raise _Stop

    def paced(self) -> None:
        """Wait until the next call keeps the pace asked for (--axm-pace), and count it."""
        if self.settings.pace:
            time.sleep(max(self.last_call + self.settings.pace - time.monotonic(), 0.0))
            self.last_call = time.monotonic()
        self.calls += 1

    def observe(self, value: Any, feed: Feed) -> tuple[Observation, Any]:
        self.paced()
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
        if outcome.crash is None and isinstance(outcome.value, Observation):
            if outcome.value.status == "crashed":  # a server that died, out of process
                self.crashes[feed] = self.crashes.get(feed, 0) + 1
            if feed in (VALID, INVALID):
                step = Step(self.subject.ref, str(self.subject.name), value, feed is INVALID)
                self.remember(step, outcome.value)
            return outcome.value, None
        if outcome.crash is None:
            return Observation(status="returned"), outcome.value
        self.history.clear()
        self.crashes[feed] = self.crashes.get(feed, 0) + 1
        observation = Observation(
            status="crashed",
            crash_kind=outcome.crash.kind,
            crash_detail=crash_detail(outcome.crash, timeout, self.settings.timeout),
            stderr_tail=outcome.crash.stderr_tail,
        )
        return observation, None

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
        started = time.perf_counter()
        call = self.call(value, label, feed=feed, repeat=repeat, before=before, world=world)
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
        # Varied once the calls of its phase are all made (see _varying.vary_refused).
        if (
            any(run.check.varies for run in runs)
            and self.subject.result.refused(call.observation)
            and len(self.refused) - self.varied < MOST_VARIED
        ):
            self.refused.append(call)
        status = call.observation.status
        if feed is VALID:
            self.count(call.observation)
            if self.subject.result.served(call.observation):
                self.templates.add(call, self.subject.result, source)
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
        gave otherwise, and the tool served calls before them that left its world as they found
        it, the kit backs off until the tool serves again (see back_off) and sends the streak's
        inputs again. When they are then answered otherwise, the streak was pacing: its calls are
        judged as answered the second time, and that answer never again counts as one the tool
        gives. Otherwise they are judged as they were answered.
        """
        answer = self.answer(held.call.observation)
        streaking = bool(self.held) and self.held[0].answer == answer
        if not answer or answer in self.answers or not self.repeatable:
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

    def breaks(self, control: Any, step: Step) -> Observation | None:
        """What ``control`` came to right after ``step``, in a fresh worker, when the tool
        serves it there before the step and not after it: the step broke the tool's world (a
        server it killed, a store it left unreadable). None otherwise, and when the answer
        after it is one the server gave as its pacing: three calls are no burst a rate limit
        refuses, but a limit already reached may still hold."""
        model = self.subject.result
        self.restart()
        if not model.served(self.observe(control, VALID)[0]):
            return None
        call_step(self, step)
        after = self.observe(control, VALID)[0]
        if model.served(after) or self.answer(after) in self.pacing:
            return None
        return after

    def back_off(self) -> float:
        """Pause for growing times until the tool serves again what it served last; the seconds
        paused, or 0 when it never did within the pauses and the tool's time budget. A tool
        that serves it at once, before any pause, is not pacing its calls: it refused the
        streak's inputs for what they are (0, and no time lost)."""
        model, served = self.subject.result, self.repeatable[-1]
        if model.served(self.observe(served, VALID)[0]):
            return 0.0
        waited = 0.0
        for pause in _PAUSES:
            if time.monotonic() + pause > self.deadline:
                break
            time.sleep(pause)
            waited += pause
            if model.served(self.observe(served, VALID)[0]):
                return waited
        return 0.0

    def refusals_alike(self) -> None:
        """Once every call is made: count as refused the served calls whose answer is a
        refusal by behaviour (see _templates), and let the checks of successes judge the first
        of each, told how the tool answered the others."""
        for refusal in self.templates.refusals():
            self.tally["served"] -= refusal.calls
            self.tally["refused"] += refusal.calls
            self.refusals[refusal.said[:100]] += refusal.calls
            call = self.templates.alike(refusal)
            for run in self.runs:
                if run.check.feed is VALID and call.observation.status in run.check.considers:
                    self.record(run, call)

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

    def violations(self, check: Check, call: Call) -> tuple[Finding, ...]:
        if call.observation.status not in check.considers:
            return ()
        return check.violations(self.subject, call, self.context)

    def feeds(self, feed: Feed) -> bool:
        return any(run.check.feed is feed for run in self.runs)


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
