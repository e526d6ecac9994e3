"""The oracle: jsonschema, made to follow the specification where it does not, for each draft.

jsonschema is the reference, with two known deviations from the specification that would make
the kit accuse a correct validator:

- Regular expressions. JSON Schema prescribes ECMA-262 for ``pattern``, ``patternProperties``
  and ``format: regex``; jsonschema uses Python's `re`, whose ``$`` also matches before a
  trailing newline (``^[0-9]+$`` matches ``"0\\n"``, which ECMA-262 does not). The oracle's
  classes extend jsonschema's with those keywords (and ``additionalProperties``, which depends
  on ``patternProperties``) matched by `regress`, an ECMA-262 engine
  (:mod:`axm_runtime.schema`, which the reference runtime validates with too).
- Numbers. jsonschema computes on Python floats, the doubles nearest to the JSON text; the
  specification speaks of the JSON number itself. ``562949953421312.2`` is not a multiple of
  ``0.25``, although its nearest double is. The oracle judges `exact` values: the JSON text
  read with `Decimal`, integer-valued decimals being integers (from draft 6 on) and
  ``multipleOf`` computed exactly.

Where the specification leaves room, an answer the oracle does not give may still be right:
`Oracle.room` says why (a verdict on the nearest doubles, or ``format`` asserted).
``unevaluatedProperties`` keeps jsonschema's regular expressions: no differential schema uses it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
    ValidationError,
    validators,
)
from jsonschema.protocols import Validator

from axm_runtime.schema import ecma_class, ecma_format_checker

__all__ = [
    "DRAFTS",
    "Oracle",
    "canonical",
    "declared",
    "draft_of_metaschema",
    "exact",
    "metaschema",
]

_Keyword = Callable[[Validator, Any, Any, Any], Iterator[ValidationError]]

_CLASSES: Final[dict[str, type[Validator]]] = {
    "4": Draft4Validator,
    "6": Draft6Validator,
    "7": Draft7Validator,
    "2019-09": Draft201909Validator,
    "2020-12": Draft202012Validator,
}
DRAFTS: Final = tuple(_CLASSES)
"""The drafts a validator can be certified for, as ``--axm-validator-draft`` names them."""


@functools.cache
def draft_keywords(draft: str) -> frozenset[str]:
    """The keywords of a draft that can make an instance invalid, and where its schemas keep
    others (``$defs``, ``definitions`` before 2019-09).

    ``then``, ``else``, ``minContains`` and ``maxContains`` are included where they exist,
    although jsonschema checks them under another keyword.
    """
    names = set(_CLASSES[draft].VALIDATORS)
    if "if" in names:
        names |= {"then", "else"}
    if "dependentRequired" in names:  # 2019-09 on
        names |= {"minContains", "maxContains", "$defs"}
    else:
        names.add("definitions")
    return frozenset(names)


def metaschema(draft: str) -> str:
    """The URI of the draft's meta-schema, as ``$schema`` names it."""
    uri: str = _CLASSES[draft].META_SCHEMA["$schema"]
    return uri


def declared(schema: Any, draft: str) -> Any:
    """The schema a validator is given: its root declares a draft before 2020-12 in
    ``$schema``, unless it declares one already or is a boolean (which cannot).

    A validator learns the dialect from the schema, as the specification has it: the suites of
    drafts 4 to 7 leave ``$schema`` out, and jsonschema and jsonschema-rs read a schema without
    one as 2020-12 (fastjsonschema as draft 7).
    """
    if draft != "2020-12" and isinstance(schema, dict) and "$schema" not in schema:
        return {"$schema": metaschema(draft), **schema}
    return schema


def draft_of_metaschema(uri: str) -> str | None:
    """The draft whose meta-schema ``uri`` names (``http://json-schema.org/draft-07/schema#``
    is ``"7"``), None for any other URI."""
    wanted = uri.strip().rstrip("#")
    for draft in _CLASSES:
        if metaschema(draft).rstrip("#") == wanted:
            return draft
    return None


def canonical(value: Any) -> str:
    """The JSON text of a value: the text whose mathematical value is judged.

    Raises `ValueError` for what JSON cannot carry (NaN, infinities).
    """
    return json.dumps(value, sort_keys=True, allow_nan=False)


def exact(text: str) -> Any:
    """A JSON text read with its numbers exact: fractions and exponents as `Decimal`."""
    return json.loads(text, parse_float=Decimal)


def _exact_multiple_of(
    validator: Validator, divisor: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    # Fraction is exact for int, Decimal and float alike: for a float, on the double itself.
    if validator.is_type(instance, "number") and Fraction(instance) % Fraction(divisor):
        yield ValidationError(f"{instance} is not a multiple of {divisor}")


@functools.cache
def _class(draft: str, multiple_of: _Keyword | None = None) -> type[Validator]:
    """jsonschema's class for ``draft``, its regular expressions ECMA-262, its numbers exact
    (``multiple_of`` replaces the exact ``multipleOf``, to judge as on doubles)."""
    base = _CLASSES[draft]
    keywords: dict[str, _Keyword] = {"multipleOf": multiple_of or _exact_multiple_of}
    checker = base.TYPE_CHECKER
    if draft != "4":  # draft 4 has no integer-valued numbers with a fraction part: 1.0 is not

        def integer(checker_: Any, instance: Any) -> bool:
            if isinstance(instance, Decimal):
                return instance == instance.to_integral_value()
            return bool(base.TYPE_CHECKER.is_type(instance, "integer"))

        checker = checker.redefine("integer", integer)
    extended: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
        ecma_class(base), validators=keywords, type_checker=checker
    )
    return extended


def _has_inexact(value: Any) -> bool:
    """Whether a number in the exact value is not exactly its nearest double."""
    if isinstance(value, Decimal):
        return Fraction(value) != Fraction(float(value))
    if isinstance(value, dict):
        return any(map(_has_inexact, value.values()))
    if isinstance(value, list):
        return any(map(_has_inexact, value))
    return False


@dataclass(frozen=True)
class Oracle:
    """The verdict the specification gives, for one draft (``"4"`` to ``"2020-12"``)."""

    draft: str = "2020-12"

    @property
    def validator_class(self) -> type[Validator]:
        """jsonschema's class for the draft, following the specification as the oracle does
        (on whatever numbers it is given: Python floats are judged as the doubles they are)."""
        return _class(self.draft)

    def verdict(self, instance_text: str, schema_text: str) -> bool:
        """Whether the instance is valid, both given as JSON text and judged exactly; format is
        not asserted."""
        return self._judge(_class(self.draft), exact(instance_text), exact(schema_text))

    def room(self, instance_text: str, schema_text: str, answer: bool) -> str:
        """Why ``answer``, which is not the `verdict`, is still one the specification allows:
        "" when it is not.

        It is when a validator computing on the doubles nearest to the JSON numbers would
        answer so (with exact or with floating-point arithmetic), and when ``format``, an
        annotation the specification lets a validator assert, asserted gives that answer.
        """
        instance, schema = exact(instance_text), exact(schema_text)
        if _has_inexact(instance) or _has_inexact(schema):
            doubles = json.loads(instance_text), json.loads(schema_text)
            float_multiple: _Keyword = _CLASSES[self.draft].VALIDATORS["multipleOf"]
            for keyword in (None, float_multiple):
                if self._judge(_class(self.draft, keyword), *doubles) is answer:
                    return (
                        "a number of the JSON text is not a double: on the nearest doubles "
                        f"the verdict is {_valid(answer)}, and the specification leaves "
                        "precision beyond the double to the implementation"
                    )
        asserted = _class(self.draft)(
            schema, format_checker=ecma_format_checker(_CLASSES[self.draft])
        )
        if asserted.is_valid(instance) is answer:
            return (
                f"with format asserted the verdict is {_valid(answer)}, and draft "
                f"{self.draft} lets a validator assert format (an annotation otherwise)"
            )
        return ""

    @staticmethod
    def _judge(cls: type[Validator], instance: Any, schema: Any) -> bool:
        return bool(cls(schema).is_valid(instance))


def _valid(valid: bool) -> str:
    return "valid" if valid else "invalid"
