"""The session: one tool's calls, made once and judged by every per-call check that takes them.

A :class:`Session` is the certification's state (see _state) with the verbs that judge calls: it
makes a call (with the other tools' steps before it, the read-only tools' readings after it, and
the variations of a refused input; see _world and _varying), lets each check the call feeds
judge it, keeping each check's first failure, and tells a server's pacing from refusals. The
phases that choose what to call each own a module (see the package's docstring).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from typing import Any

from axm_conformance._engine._runs import Run, charge
from axm_conformance._engine._state import Held, SessionState, ended_in
from axm_conformance._engine._varying import MOST_VARIED, call_variations
from axm_conformance._engine._world import make_steps, read_world
from axm_conformance._feeds import INVALID, VALID, Feed
from axm_conformance._observation import Call, Observation, Step
from axm_conformance._strategies import keywords_exercised

__all__ = ["Session"]

# A server's pacing: after this many valid calls in a row refused with one answer the tool had
# not given before, the kit pauses for each of these seconds in turn until the tool serves
# again (see Session.pace).
_STREAK = 3
PAUSES = (1.0, 2.0, 4.0, 8.0, 16.0)


def _chosen(observation: Observation) -> bool:
    """Whether a call was answered the way a tool chooses to refuse: with a result (an MCP
    server's every answer, a JSON-RPC error included), or an exception a ``raise`` of the
    tool's own code raised. A rate limit is such a choice. A crash (a programming error, a
    library's error left unhandled) or the operating system's refusal is not one, and no
    pause heals it: a call that closed the tool's standard output leaves every later call
    crashing, however long the kit waits."""
    exception = observation.exception
    while exception is not None:
        if exception.origin == "raise":
            return True
        exception = exception.cause
    return observation.exception is None


class Session(SessionState):
    """A tool's certification state with the verbs that call it and judge its calls."""

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

    def judge(
        self,
        value: Any,
        label: str,
        *,
        feed: Feed = VALID,
        source: str = "generated",
        before: tuple[Step, ...] = (),
    ) -> Call | None:
        """Make one call and let every check fed by ``feed`` judge it; ``source`` says where
        the input came from (see _strategies.SOURCES), ``before`` the calls of other tools
        just made to prepare it. The call made (None when none was)."""
        runs = [run for run in self.runs if run.check.feed == feed]
        # An input replayed from the database is not sent alone again; after other tools it is.
        if not runs or (not before and (feed, repr(value)) in self.replayed):
            return None
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
        held = Held(call, source, started)
        for settled in self.pace(held) if feed is VALID else [held]:
            self.account(settled, feed, runs)
        return call

    def account(self, held: Held, feed: Feed, runs: list[Run]) -> None:
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
            error, message = ended_in(call.observation.exception)
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
        charge(judging or runs, started)

    def pace(self, held: Held) -> list[Held]:
        """The valid calls to judge now, in order: ``held`` and those held back before it.

        A server may refuse every call for a while after a burst of calls (MCP's tools page
        says servers must rate-limit): such a refusal is the server's pacing, not a defect of
        the input. When _STREAK calls in a row are answered alike with an answer the tool never
        gave otherwise, and the tool served calls before them that left its world as they found
        it, the kit backs off until the tool serves again (see back_off) and sends the streak's
        inputs again. When they are then answered otherwise, the streak was pacing: its calls are
        judged as answered the second time, and that answer never again counts as one the tool
        gives. Otherwise they are judged as they were answered. Only an answer the tool chose
        can be pacing (see _chosen): a crash is judged at once, with no pause.
        """
        answer = self.answer(held.call.observation)
        streaking = bool(self.held) and self.held[0].answer == answer
        if (
            not answer
            or answer in self.answers
            or not self.repeatable
            or not _chosen(held.call.observation)
        ):
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
            Held(
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
        paused, or 0 when it never did within the pauses and the tool's time budget. A tool
        that serves it at once, before any pause, is not pacing its calls: it refused the
        streak's inputs for what they are (0, and no time lost)."""
        model, served = self.subject.result, self.repeatable[-1]
        if model.served(self.observe(served, VALID)[0]):
            return 0.0
        waited = 0.0
        for pause in PAUSES:
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
            said = ended_in(observation.exception)[0]
        else:
            said = observation.crash_kind or observation.rejected_because or observation.status
        self.refusals[said] += 1
