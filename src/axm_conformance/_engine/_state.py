"""What a tool's certification knows, and the line it calls the tool by.

The state every phase shares (:class:`SessionState`): what the tool served and refused, how it
was paced, what crashed, the calls made in its worker; and the one way a call reaches the tool
(``observe``, through the session's caller, see _caller): counted, paced as --axm-pace asks, and
stopped once the tool's calls crashed too often or its time is up. Judging calls (every check a
call feeds, a server's pacing told from refusals) is the session's (see _session), above the
phases it makes calls for.
"""

from __future__ import annotations

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
from axm_conformance._engine._home import Together
from axm_conformance._engine._runs import NotRunnable, Run, Stop, any_severe
from axm_conformance._engine._templates import Templates
from axm_conformance._feeds import INVALID, VALID, Feed
from axm_conformance._observation import Call, ExceptionInfo, Observation, Step, SubjectInfo
from axm_conformance._outcomes import Finding, Severity
from axm_conformance._process._records import Crash, Invocation, Probe
from axm_conformance._settings import Settings
from axm_conformance._strategies import Example, Mutation, Served

__all__ = [
    "CALL_KINDS",
    "MAX_CRASHES",
    "Held",
    "Progress",
    "SessionState",
    "crash_detail",
    "ended_in",
    "shape",
]

# What became of the valid calls a tool was judged on: made, served (a success that is not an
# error in disguise), refused (a failed result, an error in disguise, a refusal raised on
# purpose or by the operating system) and errored (a crash, a hang, an error response).
CALL_KINDS = ("valid", "served", "refused", "errored")

# Told what a certification is doing: "valid inputs, 42 calls".
Progress = Callable[[str], None]

# After this many calls that hung or killed the worker, the tool is not called again: the
# failure is established and every further call could cost a whole timeout.
MAX_CRASHES = 3
# Seconds between two progress reports, at most one per call.
_PROGRESS_EVERY = 0.2
# The calls made in the worker since it last started fresh that are kept, the most recent: what
# a failure that needs earlier calls is made again after (see _shrinking.reproduce).
_REMEMBERED = 48


@dataclass(frozen=True)
class Held:
    """A valid call not yet judged: where its input came from, when the call began, and the
    shape of its answer when it was not served (see _session.Session.pace)."""

    call: Call
    source: str
    started: float
    answer: str = ""


def shape(text: str) -> str:
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
class SessionState:
    """What one tool's certification knows while it calls the tool, shared by every phase: the
    checks' tallies (``runs``), what the tool served, refused and how its calls ended, its time
    budget and pacing, and the calls made in its worker since it last started fresh."""

    subject: SubjectInfo
    runs: list[Run]
    context: CheckContext
    worker: Caller
    # Where another caller of the tool comes from (one that reaches the network, see _probes).
    callers: Callers
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
    # had not finished leave their checks not run.
    deadline: float = math.inf
    exhausted: bool = False
    finished: set[Feed] = field(default_factory=set)
    # Why a feed made no call where the run cannot make it (no sandbox for payloads, say).
    unmade: dict[Feed, str] = field(default_factory=dict)
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
    # The server's pacing (see Session.pace): the valid calls held back while their refusals may be
    # pacing, the shapes of the answers given outside a streak and of those found to be pacing,
    # how often the kit backed off and for how long, and when the tool was last called (for
    # --axm-pace).
    held: list[Held] = field(default_factory=list)
    answers: set[str] = field(default_factory=set)
    pacing: set[str] = field(default_factory=set)
    backoffs: int = 0
    paused: float = 0.0
    # Failures found that the tool was not blamed for (see _shrinking): "flaky", which did not
    # happen again, and "not_judged", which a call that broke the tool's world caused.
    unblamed: Counter[str] = field(default_factory=Counter)
    last_call: float = -math.inf
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

    def go_on(self, feed: Feed) -> None:
        """Stop (raise Stop) when the tool is not to be called again through ``feed``: its
        calls hung or crashed too often, or its time is up."""
        if self.crashes.get(feed, 0) >= MAX_CRASHES:
            raise Stop
        if time.monotonic() > self.deadline:
            self.exhausted = True
            raise Stop

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
        timeout = self.settings.timeout * feed.scale
        outcome = (
            self.worker.probe(Probe(feed.name, value), timeout=timeout)
            if feed.probe
            else self.worker.invoke(
                Invocation(value, feed.invalid, feed.condition), timeout=timeout
            )
        )
        if outcome.error is not None:
            raise NotRunnable(
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

    def answer(self, observation: Observation) -> str:
        """The shape of what a call was answered when it was not served (its digits left out,
        so that "retry in 3 s" and "retry in 2 s" are one); "" when it was served or crashed."""
        model = self.subject.result
        if observation.result is not None:
            return "" if model.served(observation) else shape(model.says(observation.result))
        if observation.exception is not None:
            return shape(observation.exception.summary())
        return ""

    def record(self, run: Run, call: Call) -> None:
        """Let ``run``'s check judge ``call``, and keep what it found."""
        found = run.check.findings(self.subject, call, self.context)
        run.notes.extend(item for item in found if item.severity is Severity.NOTE)
        violations = tuple(item for item in found if item.severity is not Severity.NOTE)
        # Keep the first failure, unless it was only a warning and this one is not.
        if violations and (
            run.failure is None or (any_severe(violations) and not any_severe(run.failure[1]))
        ):
            run.failure = (call, violations)

    def violations(self, check: Check, call: Call) -> tuple[Finding, ...]:
        if call.observation.status not in check.considers:
            return ()
        return check.violations(self.subject, call, self.context)

    def feeds(self, feed: Feed) -> bool:
        return any(run.check.feed is feed for run in self.runs)


def ended_in(exception: ExceptionInfo) -> tuple[str, str]:
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
