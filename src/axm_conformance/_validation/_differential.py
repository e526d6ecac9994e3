"""Fuzz a validator against jsonschema, the reference, and shrink each disagreement.

Hypothesis draws small schemas that use one keyword (`schemas_using`) and for each either a valid
instance (`valid_inputs`), which the validator must accept, or an invalid one (`invalid_inputs` /
`invalid_examples`, each confirmed invalid by jsonschema's ``Draft202012Validator``), which it must
reject. Each kind of disagreement (accepting an invalid instance, rejecting a valid one, raising)
is shrunk by Hypothesis to a minimal ``(schema, instance)`` pair.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from axm_conformance._strategies import Mutation, invalid_examples, invalid_inputs, valid_inputs
from axm_conformance._validation._adapters import jsonschema_validate
from axm_conformance._validation._load import ValidatorLike, judge, resolve
from axm_conformance._validation._schemas import row_of, schemas_using


@dataclass(frozen=True)
class Disagreement:
    """A minimal pair on which the validator and jsonschema disagree.

    ``expected`` is jsonschema's verdict (the instance came from `valid_inputs` when True, from a
    one-mistake mutation of kind ``mutation`` otherwise); ``got`` is the validator's, or None when
    it raised, with the error in ``error``.
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

    @property
    def what(self) -> str:
        if self.got is None:
            return f"raised {self.error}"
        return "accepted an invalid instance" if self.got else "rejected a valid instance"


@dataclass(frozen=True)
class DifferentialReport:
    """One differential run: the examples asked for, the pairs judged, and the disagreements."""

    validator: str
    keyword: str
    examples: int
    seed: int
    judged: int
    disagreements: tuple[Disagreement, ...] = field(default=())

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


def differential(
    validator: ValidatorLike,
    keyword: str,
    examples: int = 100,
    seed: int = 0,
    keywords: Iterable[str] | None = None,
) -> DifferentialReport:
    """Fuzz the validator against jsonschema on schemas that use `keyword`.

    Draws ``examples`` (schema, instance) pairs with `schemas_using` (restricted to the claimed
    ``keywords``) and, per schema, a valid instance the validator must accept or an invalid one it
    must reject. Each way of disagreeing found (accepting, rejecting, raising) is shrunk to a
    minimal pair, one `Disagreement` each; ``judged`` counts the pairs the validator was given,
    shrinking included. The run is deterministic for a given ``seed`` and writes no Hypothesis
    database. Raises `ValueError` for a keyword `schemas_using` has no generator for.
    """
    ref, function = resolve(validator)
    schemas = schemas_using(keyword, keywords)
    row = row_of(keyword)
    counts = {"judged": 0}

    def disagreement(
        schema: Any, instance: Any, expected: bool, answer: bool | str, mutation: str, detail: str
    ) -> Disagreement:
        return Disagreement(
            validator=ref,
            keyword=row,
            schema=schema,
            instance=instance,
            expected=expected,
            got=None if isinstance(answer, str) else answer,
            error=answer if isinstance(answer, str) else "",
            mutation=mutation,
            detail=detail,
            examples=examples,
            seed=seed,
        )

    @hypothesis_seed(seed)
    @settings(
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
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        schema = data.draw(schemas, label="schema")
        try:
            valid = valid_inputs(schema)
            sources: list[st.SearchStrategy[Mutation]] = [invalid_inputs(schema)]
            fixed = invalid_examples(schema)
        except _GENERATION_ERRORS:
            reject()  # a schema no instance can be made for, such as an empty enum intersection
        if fixed:
            sources.append(st.sampled_from(fixed))
        live = [source for source in sources if not source.is_empty]
        wants_invalid: bool = bool(live) and data.draw(st.booleans(), label="invalid")
        if wants_invalid:
            mutation = data.draw(st.one_of(live), label="mutation")
            instance, expected = mutation.value, False
            kind, detail = mutation.kind, mutation.detail
            if jsonschema_validate(instance, schema):
                reject()  # not invalid without format assertion: no verdict to compare
        else:
            instance, expected = data.draw(valid, label="instance"), True
            kind = detail = ""
        counts["judged"] += 1
        answer = judge(function, instance, schema)
        if answer == expected:
            return
        found = disagreement(schema, instance, expected, answer, kind, detail)
        if isinstance(answer, str):
            raise _Raised(found)
        raise _Accepted(found) if answer else _Rejected(found)

    found: list[Disagreement] = []
    try:
        probe()
    except Exception as exc:
        if not _collect(exc, found):
            raise
    order = {"accepted": 0, "rejected": 1}
    found.sort(key=lambda d: order.get(d.what.split()[0], 2))
    return DifferentialReport(ref, row, examples, seed, counts["judged"], tuple(found))


def _collect(exc: BaseException, into: list[Disagreement]) -> bool:
    """Gather the disagreements of a Hypothesis failure; False if something else failed too."""
    if isinstance(exc, _Found):
        into.append(exc.found)
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_collect(inner, into) for inner in exc.exceptions)
    return False
