"""JSON Schema validation with the regular expressions the specification prescribes.

jsonschema is the validator; where it falls short of the specification, this module extends it.
JSON Schema prescribes ECMA-262 for ``pattern``, ``patternProperties`` and ``format: regex``;
jsonschema uses Python's `re`, whose ``$`` also matches before a trailing newline (``^[0-9]+$``
matches ``"0\\n"``, which ECMA-262 does not) and which lacks Unicode property escapes
(``\\p{Letter}``). :func:`ecma_class` extends a jsonschema class with those keywords (and
``additionalProperties``, which depends on ``patternProperties``) matched by `regress`, an
ECMA-262 engine; :func:`ecma_format_checker` checks ``format: regex`` the same way, which is
also how a schema's own patterns are judged when the schema is checked against its
meta-schema.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import regress
from jsonschema import FormatChecker, ValidationError, validators
from jsonschema.protocols import Validator

__all__ = ["ecma_class", "ecma_format_checker", "matches"]


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> regress.Regex:
    return regress.Regex(pattern, "u")


def matches(pattern: str, text: str) -> bool:
    """Whether the ECMA-262 ``pattern`` matches anywhere in ``text`` (unanchored, as JSON
    Schema's regular expressions are); `regress.RegressError` when it is no ECMA-262 pattern."""
    return _regex(pattern).find(text) is not None


def _pattern(
    validator: Validator, pattern: str, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not matches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


# jsonschema's Validator protocol leaves out descend(), which its own keywords call.
def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if matches(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [
        name
        for name in instance
        if name not in declared and not any(matches(pattern, name) for pattern in patterns)
    ]
    if validator.is_type(additional, "object"):
        for name in extras:
            yield from validator.descend(instance[name], additional, path=name)
    elif additional is False and extras:
        yield ValidationError(f"additional properties {extras!r} are not allowed")


@functools.cache
def ecma_class(base: type[Validator]) -> type[Validator]:
    """jsonschema's class ``base`` with ECMA-262 regular expressions."""
    keywords = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    extended: type[Validator] = validators.extend(base, validators=keywords)  # type: ignore[no-untyped-call]
    return extended


def _is_ecma_regex(text: object) -> bool:
    if isinstance(text, str):
        _regex(text)  # raises RegressError for what ECMA-262 does not accept
    return True


@functools.cache
def ecma_format_checker(base: type[Validator]) -> FormatChecker:
    """The format checker of jsonschema's class ``base``, ``regex`` checked as ECMA-262."""
    checker = FormatChecker(base.FORMAT_CHECKER.checkers)
    checker.checks("regex", raises=regress.RegressError)(_is_ecma_regex)
    return checker
