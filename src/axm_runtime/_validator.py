"""The tool_use runtime's validator: jsonschema's 2020-12 validator with ECMA-262 patterns
(:mod:`axm_runtime.schema`) and ``multipleOf`` judged on the decimal a float was written as;
every error it finds, or the schema's own fault, as ``/POINTER: message``, never raised.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable

from axm_runtime.schema import ecma_class, ecma_format_checker

__all__ = ["errors_of"]


def errors_of(data: Any, schema: Any) -> list[str]:
    """Where ``data`` breaks ``schema``, each as ``/POINTER: message``; never raises."""
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError, RecursionError) as exc:
        return [f"/: invalid schema: it is not JSON ({exc})"]
    try:
        validator = _compiled(text)
        if isinstance(validator, str):
            errors = [validator]
        else:
            errors = [_format(error) for error in validator.iter_errors(data)]
    except RecursionError:
        # Deeply nested data, or references that loop without consuming any of it, exhaust the
        # interpreter stack; report it rather than crash.
        errors = ["/: the data is nested too deeply, or the schema's references loop"]
    except Unresolvable as exc:
        errors = [f"/: cannot resolve $ref {_as_written(exc)!r}"]
    except ValueError:  # an int beyond sys.get_int_max_str_digits() has no decimal form
        errors = ["/: a number of the data is too long to show in the error found for it"]
    return errors


def _as_written(exc: Unresolvable) -> str:
    """The reference as the schema writes it: jsonschema names a pointer or an anchor without
    its ``#``."""
    anchor = getattr(exc, "anchor", None)
    if anchor is not None:
        return f"#{anchor}"
    return f"#{exc.ref}" if exc.ref.startswith("/") else exc.ref


def _refuse(uri: str) -> Resource[Any]:
    # A schema is validated on its own: a reference that leaves it is not fetched.
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


_REGISTRY: Registry[Any] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _decimal_value(number: int | float) -> Fraction:
    # A float stands for the decimal literal it was read from, which its shortest repr gives
    # back; so 0.0075 is exactly 75 times 0.0001, as the schema author means.
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _multiple_of(
    validator: Validator, divisor: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "number"):
        return
    infinite = isinstance(instance, float) and not math.isfinite(instance)
    if infinite or _decimal_value(instance) % _decimal_value(divisor):
        yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")


_VALIDATOR: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    ecma_class(Draft202012Validator), validators={"multipleOf": _multiple_of}
)


@functools.lru_cache(maxsize=256)
def _compiled(text: str) -> Validator | str:
    """The validator of the schema written as JSON ``text``, or where the schema breaks the
    2020-12 meta-schema, its patterns judged as ECMA-262."""
    schema = json.loads(text)
    checker = ecma_format_checker(Draft202012Validator)
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=checker)
    error = best_match(meta.iter_errors(schema))
    if error is None:
        return _VALIDATOR(schema, registry=_REGISTRY)
    where = "/".join(str(part) for part in error.absolute_path)
    return f"/: invalid schema{f' at /{where}' if where else ''}: {_short(error.message)}"


# A message quotes the value at fault whole: a long string or a large container would bury it.
_MESSAGE = 300


def _short(message: str) -> str:
    return message if len(message) <= _MESSAGE else f"{message[: _MESSAGE - 3]}..."


def _format(error: ValidationError) -> str:
    pointer = "/".join(
        str(part).replace("~", "~0").replace("/", "~1") for part in error.absolute_path
    )
    return f"/{pointer}: {_short(error.message)}"
