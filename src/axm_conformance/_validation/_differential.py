"""Fuzz a validator against the oracle, and shrink each disagreement to a minimal pair.

Hypothesis draws small schemas that use one keyword (`schemas_using`) and for each a valid
instance (`valid_inputs`) with its near misses at one place (`_near_misses`: a value of each
type there, a property of each name added), which only the oracle can judge, or a one-mistake
mutation of one (`invalid_inputs` / `invalid_examples`). Each pair is turned into JSON text, and
the validator is given that text read as Python reads JSON (floats) while the oracle judges its
exact value (`Oracle`): the value judged is the JSON text's. Each pair ends one of these ways:

- passed: the validator gives the oracle's verdict;
- ambiguous: it does not, but the specification leaves room for its answer (`Oracle.room`:
  precision beyond the double, format asserted); counted, the smallest kept, never a failure;
- oracle: a third validator (jsonschema-rs, when installed and not itself under test) agrees
  with the validator against the oracle: a deviation of the oracle, not blamed on the validator;
- failed: each way of disagreeing (accepting an invalid instance, rejecting a valid one,
  raising) is shrunk by Hypothesis to a minimal pair;
- errored: the validator's worker hung or died (`Crashed`); the pair is kept as it is (shrinking
  would cost a timeout per try) and the validator is not given its schema again.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from axm_conformance._strategies import (
    Mutation,
    invalid_examples,
    invalid_inputs,
    valid_inputs,
    without_local_constants,
)
from axm_conformance._validation._adapters import jsonschema_rs_validate
from axm_conformance._validation._load import Crashed, Judge, Judged, ValidatorLike, resolve
from axm_conformance._validation._oracle import Oracle, canonical, declared
from axm_conformance._validation._schemas import NEAR_NAMES, NEAR_VALUES, row_of, schemas_using

Status = Literal["failed", "errored", "ambiguous", "oracle"]
_THIRD: Final = "axm_conformance._validation:jsonschema_rs_validate"


@dataclass(frozen=True)
class Disagreement:
    """A pair on which the validator and the oracle disagree, and how it ended (``status``).

    ``schema`` is the one the validator was given (its root declaring the draft), ``instance``
    the JSON text's value as Python reads it. ``expected`` is the oracle's verdict (on a one-
    mistake mutation of kind ``mutation`` when there was one); ``got`` is the validator's, or
    None when it raised or crashed, with the error in ``error``. ``reason`` says why an
    ambiguous answer is allowed; ``third`` is the third validator's verdict, when there was one.
    """

    validator: str
    keyword: str
    schema: Any
    instance: Any
    expected: bool
    got: bool | None
    error: str = ""
    mutation: str = ""
    detail: str = ""
    examples: int = 0
    seed: int = 0
    draft: str = "2020-12"
    status: Status = "failed"
    reason: str = ""
    third: bool | None = None

    @property
    def what(self) -> str:
        if self.got is None:
            return f"{'crashed' if self.status == 'errored' else 'raised'} {self.error}"
        return "accepted an invalid instance" if self.got else "rejected a valid instance"


@dataclass(frozen=True)
class DifferentialReport:
    """One differential run: the examples asked for, the pairs judged and passed, the
    disagreements (failed and errored), and the smallest ambiguous and oracle-only pair with how
    many there were."""

    validator: str
    keyword: str
    examples: int
    seed: int
    judged: int
    disagreements: tuple[Disagreement, ...] = field(default=())
    draft: str = "2020-12"
    passed: int = 0
    ambiguous: int = 0
    oracle: int = 0
    allowed: tuple[Disagreement, ...] = field(default=())  # the smallest ambiguous, and oracle

    @property
    def ok(self) -> bool:
        return not self.disagreements


class _Found(AssertionError):
    def __init__(self, found: Disagreement) -> None:
        super().__init__(found.what)
        self.found = found


# One class per way of disagreeing: Hypothesis tells failures apart by exception type, so each
# way is shrunk to its own minimal pair.
class _Accepted(_Found):
    pass


class _Rejected(_Found):
    pass


class _Raised(_Found):
    pass


_GENERATION_ERRORS: Final = (ValueError,)  # Invalid/Unsupported/UnsatisfiableSchemaError


def third_vote(ref: str) -> Judge | None:
    """The third validator: jsonschema-rs, when it is installed and not the one under test."""
    own_ref, judge = resolve(jsonschema_rs_validate)
    if ref in (_THIRD, own_ref) or importlib.util.find_spec("jsonschema_rs") is None:
        return None
    return judge


def _assess(
    judge: Judge,
    third: Judge | None,
    oracle: Oracle,
    schema_text: str,
    instance_text: str,
    **fields: Any,
) -> Disagreement | None:
    """How one pair ends, None when the validator gives the oracle's verdict.

    The validator is given the JSON texts read as Python reads JSON; ``fields`` fill in the
    rest of the `Disagreement` (the validator, the keyword, the mutation...).
    """
    schema, instance = json.loads(schema_text), json.loads(instance_text)
    expected = oracle.verdict(instance_text, schema_text)
    if expected:  # a mutation the oracle calls valid is no mistake
        fields.update(mutation="", detail="")
    pair = {"schema": schema, "instance": instance, "expected": expected, "draft": oracle.draft}
    try:
        answer = judge(instance, schema)
    except Crashed as exc:
        return Disagreement(**pair, **fields, got=None, error=str(exc), status="errored")
    if answer == expected:
        return None
    if isinstance(answer, str):
        return Disagreement(**pair, **fields, got=None, error=answer)
    reason = oracle.room(instance_text, schema_text, answer)
    if reason:
        return Disagreement(**pair, **fields, got=answer, status="ambiguous", reason=reason)
    vote = None if third is None else third(instance, schema)
    if vote is answer:
        return Disagreement(**pair, **fields, got=answer, status="oracle", third=vote)
    return Disagreement(
        **pair, **fields, got=answer, third=vote if isinstance(vote, bool) else None
    )


def judge_pair(
    validator: ValidatorLike | Judged, schema: Any, instance: Any, draft: str = "2020-12"
) -> Disagreement | None:
    """One pair judged as `differential` judges it: None when the validator gives the oracle's
    verdict, else how it disagrees (``status``: failed, errored, ambiguous or oracle).

    The schema is given as the draft declares it (`declared`). Raises `ValueError` for a
    schema or instance that has no JSON text (NaN, infinities).
    """
    ref, judge = resolve(validator)
    texts = canonical(declared(schema, draft)), canonical(instance)
    return _assess(judge, third_vote(ref), Oracle(draft), *texts, validator=ref, keyword="")


def differential(
    validator: ValidatorLike | Judged,
    keyword: str,
    examples: int = 100,
    seed: int = 0,
    keywords: Iterable[str] | None = None,
    draft: str = "2020-12",
) -> DifferentialReport:
    """Fuzz the validator against the oracle of ``draft`` on schemas that use `keyword`.

    Draws ``examples`` (schema, instance) pairs with `schemas_using` (restricted to the claimed
    ``keywords`` and the draft's) and, per schema, a valid instance with its near misses at one
    place, or a one-mistake mutation of one, each judged as `judge_pair` judges it. Each way of
    failing found (accepting, rejecting, raising) is shrunk to a minimal pair, one `Disagreement`
    each; ``judged`` counts the pairs the validator was given, shrinking included. The run is
    deterministic for a given ``seed`` and writes no Hypothesis database. Raises `ValueError`
    for a keyword `schemas_using` has no generator for.
    """
    ref, judge = resolve(validator)
    schemas = schemas_using(keyword, keywords, draft)
    row = row_of(keyword)
    oracle = Oracle(draft)
    third = third_vote(ref)
    tally = _Tally()

    @hypothesis_seed(seed)
    @_quietly(examples)
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        schema_text, texts, mutation = _drawn_pair(data, schemas, draft)
        for instance_text in texts:
            # Skipped only here: Hypothesis wants the same draws from the same choices.
            if schema_text in tally.crashed:
                return  # each try would cost the timeout again
            tally.counts["judged"] += 1
            tally.judged(
                _assess(
                    judge,
                    third,
                    oracle,
                    schema_text,
                    instance_text,
                    validator=ref,
                    keyword=row,
                    mutation=mutation.kind if mutation else "",
                    detail=mutation.detail if mutation else "",
                    examples=examples,
                    seed=seed,
                ),
                schema_text,
            )

    found: list[Disagreement] = []
    try:
        with without_local_constants():  # the schemas and instances are the kit's to build
            probe()
    except Exception as exc:
        if not _collect(exc, found):
            raise
    order = {"accepted": 0, "rejected": 1}
    found.sort(key=lambda d: order.get(d.what.split()[0], 2))
    kept, counts = tally.kept, tally.counts
    if "errored" in kept:
        found.append(kept["errored"])
    return DifferentialReport(
        ref,
        row,
        examples,
        seed,
        counts["judged"],
        tuple(found),
        draft,
        counts["passed"],
        counts["ambiguous"],
        counts["oracle"],
        tuple(kept[status] for status in ("ambiguous", "oracle") if status in kept),
    )


def _quietly(examples: int) -> settings:
    """A run of ``examples`` pairs that writes no database, reports every way of failing it
    found, and prints nothing of its own."""
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )


def _drawn_pair(
    data: st.DataObject, schemas: st.SearchStrategy[Any], draft: str
) -> tuple[str, list[str], Mutation | None]:
    """A schema's text and the instances to judge against it: a one-mistake mutation of a
    valid instance, or a valid instance and its near misses at one place (with no mutation)."""
    drawn = data.draw(schemas, label="schema")
    try:
        valid = valid_inputs(drawn)
        sources: list[st.SearchStrategy[Mutation]] = [invalid_inputs(drawn)]
        fixed = invalid_examples(drawn)
        schema_text = canonical(declared(drawn, draft))
    except _GENERATION_ERRORS:
        reject()  # a schema no instance can be made for, such as an empty enum intersection
    if fixed:
        sources.append(st.sampled_from(fixed))
    live = [source for source in sources if not source.is_empty]
    wants_invalid: bool = bool(live) and data.draw(st.booleans(), label="invalid")
    if wants_invalid:
        mutation = data.draw(st.one_of(live), label="mutation")
        instances = [mutation.value]
    else:  # a valid instance, then its near misses at one place
        mutation, instance = None, data.draw(valid, label="instance")
        place = data.draw(st.sampled_from(_places(instance)), label="place")
        instances = [instance, *_near_misses(instance, place)]
    try:
        return schema_text, [canonical(instance) for instance in instances], mutation
    except ValueError:
        reject()  # NaN or an infinity: no JSON text


@dataclass
class _Tally:
    """How the pairs judged ended, the smallest pair of each status that is not shrunk, and
    the schemas the validator's worker crashed on."""

    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("judged", "passed", "errored", "ambiguous", "oracle"), 0
        )
    )
    kept: dict[str, Disagreement] = field(default_factory=dict)
    crashed: set[str] = field(default_factory=set)

    def judged(self, found: Disagreement | None, schema_text: str) -> None:
        """Count the pair's end, and raise a failure for Hypothesis to shrink."""
        if found is None:
            self.counts["passed"] += 1
        elif found.status != "failed":
            self.counts[found.status] += 1
            kept = self.kept.get(found.status)
            if kept is None or _size(found) < _size(kept):
                self.kept[found.status] = found  # not shrunk: the smallest seen explains it best
            if found.status == "errored":
                self.crashed.add(schema_text)
        elif found.got is None:
            raise _Raised(found)
        else:
            raise _Accepted(found) if found.got else _Rejected(found)


def _places(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every location in a JSON value, the root first."""
    places = [path]
    if isinstance(value, dict | list):
        children = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in children:
            places += _places(child, (*path, key))
    return places


def _put(value: Any, path: tuple[str | int, ...], new: Any, name: str | None) -> Any:
    """A copy of ``value`` with ``new`` at ``path``, or, given a ``name`` and an object there,
    with ``new`` added under that name."""
    if path:
        head, *rest = path
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[head] = _put(value[head], tuple(rest), new, name)  # type: ignore[index]
        return copy
    if name is not None and isinstance(value, dict):
        return {**value, name: new}
    return new


def _near_misses(value: Any, path: tuple[str | int, ...]) -> list[Any]:
    """``value`` with each of `NEAR_VALUES` at ``path``, and, at an object, with each of
    `NEAR_NAMES` added: near misses of every kind, valid or not, for the oracle to judge."""
    changed = [_put(value, path, new, None) for new in NEAR_VALUES]
    return changed + [_put(value, path, 0, name) for name in NEAR_NAMES]


def _size(found: Disagreement) -> int:
    return len(json.dumps([found.schema, found.instance]))


def _collect(exc: BaseException, into: list[Disagreement]) -> bool:
    """Gather the disagreements of a Hypothesis failure; False if something else failed too."""
    if isinstance(exc, _Found):
        into.append(exc.found)
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_collect(inner, into) for inner in exc.exceptions)
    return False
