"""The payloads: a valid input with the kit's canary program named in its strings, in each of
the shell contexts a value may be pasted into, and its strings made options a program reads, to
see whether any of them takes effect.

A tool that builds a command line from its input (``f"nmap {target}"`` given to a shell) runs
what its input says once the input leaves the words the tool meant it for. Every string of an
input the tool was given (and each string property it left out) gets, in one call per context,
the canary named after the value as that context ends it: a command substitution, a command
separator, a closing single or double quote. A tool that passes its
input to a program as an argument of its own, but before the options end (``git log REF``),
has the program read a value that starts with a dash as an option: every string then becomes,
in one call per option, an option whose effect the sandbox sees (a file written under the
payload's token, the canary run). Each place carries a token of its own, so the effect says
which place it came from (see ``_canary`` and Observation.named_by_effects). A place the tool
needs as it was (a repository's path beside a diff's target) gets a call refused, and every
payload beside it unread: where there are several places, each family's first payload (the
command substitution, ``--output``) goes into each place alone first, and the places where the
tool refused it are left out of the calls that fill every place.

A tool whose input is a command by design (a shell tool) runs the canary named alone, with no
context to leave: those places are called once so, and left out of the payloads, noted. A
payload that took effect is made again alone, in the one place it came from: the finding is that
call, and an effect that does not happen again is not blamed on the tool (``flaky``).

Payloads are sent in a sandbox alone: one that runs would run on the machine, and the canary's
record would be every tool's at once.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Any

from axm_conformance._engine._runs import Run, Stop
from axm_conformance._engine._session import Session
from axm_conformance._engine._state import MAX_CRASHES
from axm_conformance._feeds import OPTION_TOKEN, PAYLOADS, SHELL_TOKEN, VALID
from axm_conformance._jsonable import JsonPath, shown_path, strings_in
from axm_conformance._observation import Call, Observation
from axm_conformance._outcomes import Finding, note
from axm_conformance._process._containment import canary, payloads_refused

__all__ = ["CONTEXTS", "OPTIONS", "payloads"]

# The contexts a value may be pasted into a command line in, and how a payload leaves each to
# name the canary (``{value}`` the input's own value, ``{canary}`` the canary's command line): a
# substitution runs unquoted and in double quotes (a backquote's does the same), a separator
# where the substitution's characters are taken out, and a closing quote each where a value is
# quoted and what it holds escaped.
CONTEXTS: tuple[tuple[str, str], ...] = (
    ("a command substitution", "{value}$({canary})"),
    ("a command separator", "{value};{canary};"),
    ("a closing single quote", "{value}';{canary};'"),
    ("a closing double quote", '{value}";{canary};"'),
)
# Options a program reads from an argument that starts with a dash, each with an effect the
# sandbox sees: a file written under the payload's ``{token}`` (git's and sort's --output), or
# the canary run (git's --upload-pack).
OPTIONS: tuple[tuple[str, str], ...] = (
    ("--output", "--output={token}"),
    ("--upload-pack", "--upload-pack={canary}"),
)


@dataclass(frozen=True)
class _Place:
    """A string of the input (or a string property it left out, whose value is "")."""

    path: JsonPath
    value: str

    def __str__(self) -> str:
        return shown_path(self.path)


def payloads(session: Session, examples: list[Any]) -> None:
    """Send the payloads (see the module) where a sandbox holds them; where none does, or no
    input the tool was given can carry one, say why its checks are not run."""
    if not session.feeds(PAYLOADS):
        return
    base, served = _base(session, examples)
    why = (
        payloads_refused(session.settings)
        or ("no valid input is an object to put a payload in" if base is None else "")
        or (
            f"its valid calls hung or crashed {MAX_CRASHES} times: a payload would meet the same"
            if session.crashes.get(VALID, 0) >= MAX_CRASHES
            else ""
        )
    )
    places = [] if why or base is None else _places(session, base)
    if not why and not places:
        why = "no string of a valid input the tool was given can carry a payload and stay valid"
    if why or base is None:
        session.unmade[PAYLOADS] = why
        session.finish(PAYLOADS)
        return
    with contextlib.suppress(Stop):
        _send(session, base, served, places)
    session.finish(PAYLOADS)


def _send(session: Session, base: dict[str, Any], served: bool, places: list[_Place]) -> None:
    runs = [run for run in session.runs if run.check.feed is PAYLOADS]
    session.go_on(PAYLOADS)
    plain = _named("axm-plain", _fitting(session, base, places, "{canary}"))
    if plain:
        ran = _revealed(session.observe(_filled(base, plain, "{canary}"), PAYLOADS)[0], plain)
        for token in ran:
            said = f"the tool runs {plain[token]} as a command by design: no payload is put there"
            for run in runs:
                run.notes.append(note(said))
        places = [place for place in places if place not in {plain[token] for token in ran}]
        if not places:
            commands = ", ".join(str(plain[token]) for token in ran)
            session.unmade[PAYLOADS] = (
                f"every string it takes runs as a command by design ({commands})"
            )
            return
    schema = session.subject.input_schema
    options = [place for place in places if not _takes_options(schema, place)]
    for place in places:
        if place not in options:
            said = f"{place} holds options by name or description: no option is put there"
            for run in runs:
                run.notes.append(note(said))
    shell = [
        (f"{SHELL_TOKEN}-{number}", f"leaving {said}", form, places)
        for number, (said, form) in enumerate(CONTEXTS)
    ]
    option = [
        (f"{OPTION_TOKEN}-{number}", f"read as {said}", form, options)
        for number, (said, form) in enumerate(OPTIONS)
    ]
    rest = [*shell, *option]
    # A place the tool needs as it was (a file's path, a repository) gets the call refused with a
    # payload in it, and every payload beside it goes unread: each family's first payload goes
    # into each place alone, and the places where that was refused are left out of the others.
    fragile: set[_Place] = set()
    if len(places) > 1:
        for prefix, said, form, where in (shell[0], option[0]):
            rest.remove((prefix, said, form, where))
            for token, place in _named(prefix, _fitting(session, base, where, form)).items():
                call = _payload_call(session, runs, base, {token: place}, said, form)
                refused = call is not None and not session.subject.result.served(call.observation)
                if served and refused:
                    fragile.add(place)
    for prefix, said, form, where in rest:
        sturdy = [place for place in where if place not in fragile]
        _payload_call(
            session, runs, base, _named(prefix, _fitting(session, base, sturdy, form)), said, form
        )


def _payload_call(
    session: Session,
    runs: list[Run],
    base: dict[str, Any],
    named: dict[str, _Place],
    said: str,
    form: str,
) -> Call | None:
    """The call with the payload ``form`` in each place of ``named``, judged (None when there
    is no place, or the input would not be valid); one that fails is made again alone."""
    value = _filled(base, named, form)
    if not named or not session.context.validator(session.subject.input_schema).is_valid(value):
        return None
    call = session.judge(value, f"payloads {said}", feed=PAYLOADS)
    for run in runs:
        if run.failure is not None and run.failure[0].input is value:
            _alone(session, run, base, named, (said, form))
    return call


def _alone(
    session: Session,
    run: Run,
    base: dict[str, Any],
    named: dict[str, _Place],
    payload: tuple[str, str],
) -> None:
    """Make a failing payload call again with the payload alone in the first place whose token
    its effects named: the failure is that call, or none when it does not happen again."""
    assert run.failure is not None
    ran = _revealed(run.failure[0].observation, named)
    found: tuple[Finding, ...] = ()
    if ran:
        said, form = payload
        label = f"the payload {said} in {named[ran[0]]}, alone"
        # A token of its own: the file the first call wrote under the other one is there now.
        alone = {f"{ran[0]}-alone": named[ran[0]]}
        call = session.call(_filled(base, alone, form), label, feed=PAYLOADS, repeat=False)
        found = session.violations(run.check, call)
    if found:
        run.failure = (call, found)
    else:
        run.failure = None
        session.unblamed["flaky"] += 1


# What a property that holds a program's options is called, or described as.
_OPTIONS_WORD = re.compile(r"\b(?:flags?|options?|args?|arguments?|switch(?:es)?)\b", re.IGNORECASE)


def _takes_options(schema: Any, place: _Place) -> bool:
    """Whether the top-level property ``place`` is in says it holds options (``flags``,
    ``extra_args``, "additional nmap options"): options are its job, as a command is a shell
    tool's."""
    name = place.path[0] if place.path else ""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    declared = properties.get(name) if isinstance(properties, dict) else None
    described = declared.get("description") if isinstance(declared, dict) else None
    words = f"{name} {described if isinstance(described, str) else ''}".replace("_", " ")
    return bool(_OPTIONS_WORD.search(words))


def _revealed(observation: Observation, named: dict[str, _Place]) -> list[str]:
    """The tokens of ``named`` that the call's effects name (see Observation.named_by_effects)."""
    return sorted(named.keys() & observation.named_by_effects())


def _named(prefix: str, places: list[_Place]) -> dict[str, _Place]:
    """Each place with a token of its own."""
    return {f"{prefix}-{index}": place for index, place in enumerate(places)}


def _fitting(
    session: Session, base: dict[str, Any], places: list[_Place], form: str
) -> list[_Place]:
    """The places where ``form`` leaves the input valid."""
    validator = session.context.validator(session.subject.input_schema)
    return [
        place
        for place in places
        if validator.is_valid(_put(base, place.path, _payload(form, place, "axm-probe")))
    ]


def _payload(form: str, place: _Place, token: str) -> str:
    return form.format(value=place.value, canary=canary(token), token=token)


def _base(session: Session, examples: list[Any]) -> tuple[dict[str, Any] | None, bool]:
    """The input the payloads go into, and whether the tool served it: the shortest valid one
    it served, else the shortest valid example that is an object."""
    served = [value for value in session.served.inputs if isinstance(value, dict)]
    objects = [value for value in examples if isinstance(value, dict)]
    # The shortest, so that a finding's input reads as the payload it carries.
    shortest = min(served or objects, key=lambda value: len(repr(value)), default=None)
    return shortest, bool(served)


def _places(session: Session, base: dict[str, Any]) -> list[_Place]:
    """The strings of ``base``, and the string properties it leaves out, where at least one
    payload leaves the input valid."""
    schema = session.subject.input_schema
    properties = schema.get("properties") if isinstance(schema, dict) else None
    absent = [
        _Place((name,), "")
        for name in (properties if isinstance(properties, dict) else {})
        if name not in base
    ]
    found = [*(_Place(path, value) for path, value in strings_in(base)), *absent]
    forms = (form for _, form in (*CONTEXTS, *OPTIONS))
    fitting = {place for form in forms for place in _fitting(session, base, found, form)}
    return [place for place in found if place in fitting]


def _filled(base: dict[str, Any], named: dict[str, _Place], form: str) -> dict[str, Any]:
    """``base`` with each place of ``named`` given ``form``, with its token."""
    value = base
    for token, place in named.items():
        value = _put(value, place.path, _payload(form, place, token))
    return value


def _put(value: Any, path: JsonPath, text: str) -> Any:  # the JSON value's type is kept
    """A copy of ``value`` with ``text`` at ``path``."""
    if not path:
        return text
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _put(value.get(head), rest, text)}
    copy = list(value)
    copy[head] = _put(copy[head], rest, text)  # type: ignore[index]
    return copy
