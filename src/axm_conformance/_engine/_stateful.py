"""Exploring a tool among the other tools of its home (its server, its package): sequences.

Real defects often need what another tool made first: a reader that refuses every path until a
writer created the file, a getter that serves only the ids a creator returned, a lookup that
serves only the terms a lister returns. This phase calls one or two of the other tools of the
tool's home first (the steps), keeps the values their calls carried (in their results, and in
their inputs: a path a writer was given), and calls the tool with those values put where its
schema takes them. The first sequences are planned, creators first: a tool that may make what
the tool needs (it changes the world, and needs nothing the tool is not given) is called with
the first of its own likely inputs it serves, then a reader of what it made (a workbook
created, then described, names its sheets); the others are drawn by chance. The ideas are a
rule-based state machine's (each step a rule, the values kept its bundles), with the engine's
calls: every per-call check judges these calls exactly as it judges the calls made alone, and a
failure keeps the steps before it, which its shrinking (to the fewest steps that still fail),
reproduction and confirmation make again.

A step that crashed the worker, or hung, damaged the world of the tool certified: the sequence
is dropped and that tool prepares no other, so that one tool's damage never fails another. A
step that breaks the world without crashing (a server that dies at the next message, a store
left unreadable) is found when the failure after it is blamed (see _shrinking.blame).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity

from axm_conformance._engine._hints import hints_for
from axm_conformance._engine._home import Together, weight
from axm_conformance._engine._session import Session
from axm_conformance._engine._world import call_step
from axm_conformance._feeds import VALID
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Observation, Step, SubjectInfo
from axm_conformance._strategies import (
    Example,
    Hints,
    boundary_inputs,
    generated_inputs,
    hinted_inputs,
    is_valid_input,
    property_names,
    singular,
)

__all__ = ["carried", "explore_together"]

# One sequence per this many examples (at least _LEAST_SEQUENCES): sequences cost a call of
# another tool or two each, on top of the tool's own.
_EXAMPLES_PER_SEQUENCE = 5
_LEAST_SEQUENCES = 3
# Sequences after which, when no step was served yet, the phase stops.
_FRUITLESS = 3
_MOST_STEPS = 2
# The tool's inputs per sequence with one value the steps made put in one place; one more is
# drawn with those values mixed in.
_PLACED = 2
# A planned step's inputs tried until one is served (see _likely_inputs).
_TRIES = 6
# The tool's own inputs (edge cases first) judged with the values named for it, in each world
# the steps made where it served them.
_EDGES = 6
# Values kept from the steps' calls (the most recent), and the longest string kept.
_KEPT = 32
_LONGEST = 200
# Members of results that name the protocol's own structure, not a value of the tool's world.
_STRUCTURE = frozenset({"type", "mimeType", "isError", "success", "annotations", "_meta"})
# Members that identify an item of a list: the ``name`` of an item of ``sheets`` is a sheet.
_IDENTITY = ("name", "id")


def explore_together(session: Session, seed: int) -> None:
    """Judge the tool's calls made after other tools of its home prepared its world."""
    together = session.together
    if together is None or not together.tools or not session.feeds(VALID):
        return
    sequences = max(_LEAST_SEQUENCES, session.settings.examples // _EXAMPLES_PER_SEQUENCE)
    subject = session.subject
    # The choices depend on what the calls made (a tool that crashed prepares no more, the
    # values kept): made with a Random of the seed, among inputs drawn ahead.
    chance = random.Random(seed)
    inputs = _Inputs(sequences, seed)
    own = [*inputs.boundary(subject), *inputs.drawn(subject)]
    weights = {ref: weight(tool, subject) for ref, tool in together.tools.items()}
    # At most half the sequences are planned, so that chance still chooses the others.
    preparers = _planned(together, subject, read_only=False)[: (sequences + 1) // 2]
    revealers = _planned(together, subject, read_only=True)
    # The sequences cost at most half the calls the tool had until now (its steps included):
    # a home's certification stays within 1.5 times its cost with each tool alone.
    allowance = session.calls + session.calls // 2
    edged = 0
    for made_so_far in range(sequences):
        # No other tool served a step in the first few: none prepares this world.
        if session.calls >= allowance or (made_so_far >= _FRUITLESS and not together.served):
            return
        session.go_on(VALID)
        if made_so_far < len(preparers):
            steps, made = _plan(session, preparers[made_so_far], revealers)
        else:
            steps, made = _prepare(session, chance, inputs, weights)
        if not steps:
            continue
        earlier = [pair for pair in together.kept if pair not in made]
        together.kept = [*earlier, *made][-_KEPT:]
        hints = Hints.of({"tool-output": _nearest_first(made, subject.input_schema)})
        after = f"after {', '.join(step.name for step in steps)}"
        named = _named_input(subject.input_schema, made)
        placed = hinted_inputs(subject.input_schema, hints, _PLACED)
        # The first value placed once more, into an input drawn whole, so that the rest of the
        # input is not always the simplest.
        first = named or (placed[0] if placed else None)
        mixed = (
            _overlaid(subject.input_schema, first, chance.choice(own), made)
            if first and own
            else None
        )
        made_inputs = [*([named] if named else []), *placed]
        if mixed is not None:
            made_inputs.append(
                Example(mixed, "drawn, with a value other tools made", "tool-output")
            )
        for example in made_inputs:
            label = f"{after}: {example.label}"
            session.judge(example.value, label, source=example.source, before=tuple(steps))
        if named is not None and named.value in session.served.inputs:
            # Served in the world the steps made: the tool's edge cases are judged there too,
            # a few in each such world, taking up where the last left off.
            edges = own[edged : edged + _EDGES]
            edged += len(edges)
            for edge in edges:
                overlaid = _overlaid(subject.input_schema, named, edge, made)
                if overlaid is not None and session.calls < allowance:
                    label = f"{after}: an input of its own, {named.label}"
                    session.judge(overlaid, label, source="tool-output", before=tuple(steps))


def _prepare(
    session: Session,
    chance: random.Random,
    inputs: _Inputs,
    weights: dict[str, int],
) -> tuple[list[Step], list[tuple[str, str | int]]]:
    """One or two calls of other tools, each chosen by its weight, with an input drawn ahead or
    (half the time) one with a value kept from earlier calls in one of its places: the calls
    served, and the values they carried."""
    together = session.together
    assert together is not None
    steps: list[Step] = []
    made: list[tuple[str, str | int]] = []
    for _ in range(chance.randint(1, _MOST_STEPS)):
        ready = sorted(ref for ref, tool in together.tools.items() if inputs.boundary(tool))
        if not ready:
            break
        (ref,) = chance.choices(ready, [weights[ref] for ref in ready])
        tool = together.tools[ref]
        kept = Hints.of({"tool-output": [value for _, value in together.kept]})
        placed = (
            [example.value for example in hinted_inputs(tool.input_schema, kept, _PLACED)]
            if together.kept
            else []
        )
        # Half the time a value kept; else a boundary input (edge cases, where defects hide)
        # as often as one drawn.
        pick = chance.random()
        if placed and pick < 0.5:
            pool = placed
        else:
            drawn = inputs.drawn(tool) if pick >= 0.75 else []
            pool = drawn or inputs.boundary(tool)
        value = chance.choice(pool)
        step = Step(ref, str(tool.name), value)
        observation = call_step(session, step)
        if observation is None:
            break
        if tool.result.served(observation):
            steps.append(step)
            together.served.setdefault(ref, step.input)
            made += carried(step.input, observation)
    return steps, made


def _planned(together: Together, subject: SubjectInfo, *, read_only: bool) -> list[SubjectInfo]:
    """The tools that may make what ``subject`` needs first (or, ``read_only``, tell what was
    made): those that need nothing it is not given (each property they require is one of its
    own, by name), fewest needs first, then by _weight."""
    names = {singular(name) for name in property_names(subject.input_schema)}
    chosen = [
        tool
        for tool in together.tools.values()
        if (tool.annotations.get("readOnlyHint") is True) is read_only
        and (needs := _needs(tool)) is not None
        and needs <= names
    ]
    return sorted(chosen, key=lambda tool: (len(_needs(tool) or ()), -weight(tool, subject)))


def _needs(tool: SubjectInfo) -> set[str] | None:
    """The names of the properties ``tool`` requires (None when its input is not an object)."""
    schema = tool.input_schema
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    required = schema.get("required", [])
    if not isinstance(required, list):
        return None
    return {singular(str(name).lower()) for name in required}


def _plan(
    session: Session, preparer: SubjectInfo, revealers: list[SubjectInfo]
) -> tuple[list[Step], list[tuple[str, str | int]]]:
    """A planned sequence: ``preparer`` called with the first of its likely inputs it serves,
    then the first of ``revealers`` given what it made under their properties' names: the
    calls served, and the values they carried."""
    together = session.together
    assert together is not None
    steps: list[Step] = []
    made: list[tuple[str, str | int]] = []
    for value in _likely_inputs(session, preparer):
        step = Step(preparer.ref, str(preparer.name), value)
        observation = call_step(session, step)
        if observation is None:
            return steps, made
        if preparer.result.served(observation):
            steps.append(step)
            together.served.setdefault(preparer.ref, value)
            made += carried(value, observation)
            break
    else:
        return steps, made
    for reader in revealers:
        named = _named_input(reader.input_schema, made)
        if named is None or reader.ref not in together.tools:
            continue
        step = Step(reader.ref, str(reader.name), named.value)
        observation = call_step(session, step)
        if observation is not None and reader.result.served(observation):
            steps.append(step)
            together.served.setdefault(reader.ref, named.value)
            made += carried(named.value, observation)
        break
    return steps, made


def _likely_inputs(session: Session, tool: SubjectInfo) -> list[Any]:
    """At most _TRIES inputs of ``tool`` likely to be served, as its own certification finds
    them: the values the steps made before under its properties' names, its simplest input,
    then its hints (its source's literals, what its descriptions name) put in place."""
    together = session.together
    assert together is not None
    schema = tool.input_schema
    try:
        simplest = boundary_inputs(schema)[:1]
    except ValueError:
        return []
    named = _named_input(schema, together.kept)
    hinted = hinted_inputs(schema, hints_for(tool, session.settings), _TRIES)
    likely: list[Any] = []
    for example in [*([named] if named else []), *simplest, *hinted]:
        if example.value not in likely:
            likely.append(example.value)
    return likely[:_TRIES]


@dataclass
class _Inputs:
    """The inputs each tool is called with in sequences, made when it is first chosen: its
    boundary inputs, and as many as ``count`` drawn by Hypothesis (none when its schema gives
    none). Drawing costs: a server of 46 tools would draw for 45 in each tool's certification."""

    count: int
    seed: int
    made: dict[str, tuple[list[Any], list[Any] | None]] = field(default_factory=dict)

    def boundary(self, tool: SubjectInfo) -> list[Any]:
        if tool.ref not in self.made:
            try:
                boundary = [
                    example.value
                    for example in boundary_inputs(
                        tool.input_schema, text_edges="in-process" in tool.capabilities
                    )
                ]
            except ValueError:
                boundary = []
            self.made[tool.ref] = (boundary, None if boundary else [])
        return self.made[tool.ref][0]

    def drawn(self, tool: SubjectInfo) -> list[Any]:
        boundary = self.boundary(tool)
        drawn = self.made[tool.ref][1]
        if drawn is None:
            drawn = [example.value for example in _drawn(tool.input_schema, self.count, self.seed)]
            self.made[tool.ref] = (boundary, drawn)
        return drawn


def _named_input(schema: Any, made: list[tuple[str, str | int]]) -> Example | None:
    """The tool's simplest input with each of its properties given the last value other tools
    made under its name (a creator's ``id`` for a getter's ``id``), when that is valid."""
    simplest = boundary_inputs(schema)[0].value
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(simplest, dict) or not isinstance(properties, dict):
        return None
    by_name = {singular(name.lower()): value for name, value in made}
    given = {
        name: by_name[singular(name.lower())]
        for name in properties
        if singular(name.lower()) in by_name
    }
    value = {**simplest, **given}
    if not given or not is_valid_input(schema, value):
        return None
    shown = ", ".join(f"{name} = {canonical_json(item)}" for name, item in given.items())
    return Example(value, f"{shown} (values other tools made under these names)", "tool-output")


def _overlaid(schema: Any, placed: Example, drawn: Any, made: list[tuple[str, str | int]]) -> Any:
    """``drawn`` with the properties ``placed`` gave a value other tools made, when the result
    is valid (None otherwise)."""
    values = {canonical_json(value) for _, value in made}
    if not isinstance(placed.value, dict) or not isinstance(drawn, dict):
        return None
    changed = {
        name: value for name, value in placed.value.items() if canonical_json(value) in values
    }
    value = {**drawn, **changed}
    return value if changed and value != placed.value and is_valid_input(schema, value) else None


def _drawn(schema: Any, count: int, seed: int) -> list[Example]:
    """Inputs Hypothesis draws from ``schema``, ahead of the calls."""
    found: list[Example] = []

    @hypothesis.seed(seed)
    @hypothesis.settings(
        max_examples=count,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        database=None,
    )
    @hypothesis.given(generated_inputs(schema, Hints()))
    def draw(example: Example) -> None:
        found.append(example)

    draw()
    return found


def carried(input: Any, observation: Observation) -> list[tuple[str, str | int]]:
    """The values a served call carried: the strings and integers of its input and of its
    result (JSON in a text member read as JSON, other text by its lines), with the name of
    the member each was found under."""
    found = list(_leaves(input, ""))
    if observation.result is not None:
        found += _leaves(observation.result.fields, "")
    return list(dict.fromkeys(found))


def _leaves(value: Any, name: str) -> Iterator[tuple[str, str | int]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in _STRUCTURE:
                yield from _leaves(item, str(key))
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield from _identified(item, name)
            yield from _leaves(item, name)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        yield name, value
    elif isinstance(value, str):
        yield from _text(value, name)


def _identified(item: dict[str, Any], name: str) -> Iterator[tuple[str, str | int]]:
    """An item's identity under the name of its list, as a property names it: the ``name``
    of an item of ``sheets`` as ``sheets`` and ``sheet_name``."""
    for key in _IDENTITY:
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            yield name, value
            yield f"{singular(name)}_{key}", value


def _text(text: str, name: str) -> Iterator[tuple[str, str | int]]:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list):
            yield from _leaves(parsed, name)
            return
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    if len(stripped) <= _LONGEST:
        yield name, stripped
    if len(lines) > 1:
        yield from ((name, line) for line in lines if len(line) <= _LONGEST)


def _nearest_first(made: list[tuple[str, str | int]], schema: Any) -> list[str | int]:
    """The values the steps made, those found under a name the tool's schema gives a property
    first (a writer's ``path`` for a reader's ``path``)."""
    names = property_names(schema)
    ordered = sorted(made, key=lambda pair: pair[0].lower() not in names)
    return list(dict.fromkeys(value for _, value in ordered))
