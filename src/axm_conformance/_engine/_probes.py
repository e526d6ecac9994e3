"""The probes: an instrumented copy of the tool fed the guard and concurrency probes' inputs, and
the inputs a tool served sent again cut off from the network."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import Any

from axm_conformance._engine._runs import Stop
from axm_conformance._engine._session import Session
from axm_conformance._feeds import (
    CONCURRENCY,
    CRASHING_GUARD,
    GUARDS,
    OFFLINE,
    VALID,
)
from axm_conformance._process._containment import contained
from axm_conformance._strategies import (
    Mutation,
)

__all__ = ["ADVERSARIAL_STRINGS", "offline", "probe"]

# Inputs a tool served that are sent again with the tool cut off from the network.
_OFFLINE_CALLS = 3

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


def probe(session: Session, examples: list[Any], mutations: list[Mutation]) -> None:
    """Feed the guard and concurrency probes their inputs."""
    objects = [example for example in examples if isinstance(example, dict)]
    if not objects:
        session.finish(GUARDS, CRASHING_GUARD, CONCURRENCY)
        return
    with contextlib.suppress(Stop):
        # Making the cases takes a validation each: only when a check judges them.
        for value, label in _adversarial(session, objects) if session.feeds(GUARDS) else ():
            session.judge(value, label, feed=GUARDS)
    session.finish(GUARDS)
    with contextlib.suppress(Stop):
        for value in objects[:_CRASHING_GUARD_CALLS]:
            label = "a copy of the tool with a crashing guard first"
            session.judge(value, label, feed=CRASHING_GUARD)
    session.finish(CRASHING_GUARD)
    refused = next((m.value for m in mutations if isinstance(m.value, dict)), None)
    with contextlib.suppress(Stop):
        label = "concurrent calls with a slowed handler"
        session.judge((objects[0], refused), label, feed=CONCURRENCY)
    session.finish(CONCURRENCY)


def _served_online(session: Session) -> None:
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
    session.worker = session.callers.fresh(
        session.subject, dataclasses.replace(session.settings, network=("*",))
    )
    try:
        with contextlib.suppress(Stop):
            for call in refused:
                if time.monotonic() > session.deadline:
                    session.exhausted = True
                    raise Stop
                online = session.observe(call.input, VALID)[0]
                if session.subject.result.served(online):
                    label = "an input it refused cut off from the network, which it serves with it"
                    for run in runs:
                        session.record(run, dataclasses.replace(call, label=label))
        session.finish(OFFLINE)
    finally:
        session.worker.close()
        session.worker = main


def offline(session: Session, examples: list[Any]) -> None:
    """Send the last few valid inputs the tool served again, cut off from the network; when no
    check made valid calls, the boundary examples it serves."""
    if not session.feeds(OFFLINE):
        return
    subject, settings = session.subject, session.settings
    if contained(settings) and not settings.reaches_network(subject.name, subject.needs_network):
        _served_online(session)
        return
    with contextlib.suppress(Stop):
        for example in examples if not session.feeds(VALID) else ():
            if len(session.served.latest) >= _OFFLINE_CALLS:
                break
            session.call(example, "", feed=VALID, repeat=False)
        for value in session.served.inputs[-_OFFLINE_CALLS:]:
            label = "an input it served, sent again with the tool cut off from the network"
            session.judge(value, label, feed=OFFLINE)
    session.finish(OFFLINE)


def _adversarial(session: Session, objects: list[Any]) -> list[tuple[Any, str]]:
    """Valid inputs with hostile strings put into their string properties, still schema-valid."""
    hostile = _substituted(
        session, objects[:1], ADVERSARIAL_STRINGS, lambda _, name: f"adversarial string in {name!r}"
    )
    return [*((value, "a boundary example") for value in objects), *hostile]


def _substituted(
    session: Session, bases: list[Any], texts: Iterable[str], label: Callable[[str, str], str]
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
