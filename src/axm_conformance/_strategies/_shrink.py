"""Smaller JSON values than a failing input: where shrinking starts from the failure found.

Hypothesis shrinks the choices that made a value it drew, and a fresh search for a failing
input may come back with another defect, or none, after many calls. Many failures are found at
a value it never drew (a boundary example, a hint put in place, a variation, an input saved by
an earlier run). So the engine shrinks the value itself, from the failing one: each step offers
candidates one cut smaller (a property or an item left out, a string or an array halved or a
piece dropped, a number brought toward zero), the biggest cuts first; the engine keeps the first
that its schema still classes as before and that fails the same way, and stops when none does.
Every candidate kept is smaller in one strict order (:func:`size`), so shrinking ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from axm_conformance._strategies._json import canonical

__all__ = ["size", "smaller"]

# Items of an array, and characters of a string, each tried left out one at a time.
_MOST_SINGLE_CUTS = 8


def size(value: Any) -> tuple[int, str]:
    """The order shrinking descends: shorter JSON text first, then the text itself."""
    text = canonical(value)
    return len(text), text


def smaller(value: Any) -> Iterator[Any]:
    """Values one cut smaller than ``value``, the biggest cuts first (some may not be smaller
    by :func:`size`, nor valid: the caller judges)."""
    if isinstance(value, dict):
        yield from _smaller_object(value)
    elif isinstance(value, list):
        yield from _smaller_sequence(value)
        for index, item in enumerate(value):
            for child in smaller(item):
                yield [*value[:index], child, *value[index + 1 :]]
    elif isinstance(value, str):
        yield from _smaller_sequence(value)
    elif isinstance(value, bool):
        return  # either is as simple as the other
    elif isinstance(value, int):
        # Zero, then ever smaller steps toward it (a half, a quarter, ... one): a failure that
        # begins at a threshold is found in as many steps as the number has bits.
        steps = (abs(value) >> shift for shift in range(1, abs(value).bit_length() + 1))
        yield from dict.fromkeys([0, *(value - _sign(value) * step for step in steps if step)])
    elif isinstance(value, float) and math.isfinite(value):
        halves = (0.0, float(math.trunc(value)), value / 2)
        yield from dict.fromkeys(v for v in halves if v != value)


def _smaller_object(value: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for name in value:
        yield {key: item for key, item in value.items() if key != name}
    for name, item in value.items():
        for child in smaller(item):
            yield {**value, name: child}


def _smaller_sequence(value: Any) -> Iterator[Any]:
    """An empty one, each half, then each of the first items left out."""
    if not value:
        return
    half = len(value) // 2
    yield value[:0]
    if half:
        yield value[:half]
        yield value[half:]
    for index in range(min(len(value), _MOST_SINGLE_CUTS)):
        yield value[:index] + value[index + 1 :]


def _sign(number: int) -> int:
    return (number > 0) - (number < 0)
