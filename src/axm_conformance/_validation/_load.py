"""Load a validator and the keywords it claims, and read its verdict.

A validator is any function called as ``validator(data, schema)`` that returns a verdict in one of
three forms: a `bool`, an object with a boolean ``.valid`` attribute (such as
`axm_runtime.tool_use.ValidationResult`), or a list of errors (empty means valid).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

from axm_conformance._refs import LoadError, import_attribute
from axm_conformance._validation._oracle import draft_of_metaschema
from axm_conformance.errors import AxmConformanceError
from axm_conformance.protocols import cause

ValidatorFn = Callable[[Any, Any], Any]
ValidatorLike = str | ValidatorFn
"""A validator function, or a ``module:function`` reference to one."""


def load_validator(ref: str) -> ValidatorFn:
    """The function a ``module:function`` reference names (``module:Class.method`` too).

    Raises `LoadError` with a one-line message when the module or attribute cannot be loaded or
    is not callable.
    """
    obj = import_attribute(ref, "a validator reference: use module:function")
    if not callable(obj):
        raise LoadError(f"{ref!r} is {type(obj).__name__}, not a function (data, schema)")
    function: ValidatorFn = obj
    return function


def load_keywords(spec: str) -> frozenset[str] | None:
    """The keywords a validator claims, from the text of an option or setting.

    ``all`` (or nothing) claims every keyword (None), and so does a draft's meta-schema URI
    (``http://json-schema.org/draft-07/schema#``, see `draft_of_metaschema`);
    ``module:attribute`` names an iterable of keyword names
    (``axm_runtime.tool_use:SUPPORTED_KEYWORDS``); anything else is a list of names separated
    by commas or spaces (``type,required,maxLength``).
    """
    spec = spec.strip()
    if spec in ("", "all") or draft_of_metaschema(spec):
        return None
    if ":" in spec and not spec.startswith("$"):
        try:
            value = import_attribute(spec, "a keywords reference: use module:attribute")
        except LoadError as exc:
            raise LoadError(f"cannot load the keywords: {exc}") from None
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise LoadError(f"{spec!r} is {type(value).__name__}, not a collection of keywords")
        return frozenset(str(name) for name in value)
    return frozenset(name for name in re.split(r"[,\s]+", spec) if name)


def verdict(validator: ValidatorFn, data: Any, schema: Any) -> bool:
    """Call ``validator(data, schema)`` and read its answer as valid (True) or invalid (False).

    Raises whatever the validator raises, and `TypeError` when it returns no recognisable verdict.
    """
    result = validator(data, schema)
    if isinstance(result, bool):
        return result
    valid = getattr(result, "valid", None)
    if isinstance(valid, bool):
        return valid
    if isinstance(result, list | tuple):
        return not result
    if isinstance(result, Iterator):  # a generator of errors, as iter_errors() gives
        return next(result, None) is None
    raise TypeError(
        "a validator returns a bool, an object with a boolean .valid, or a list of errors; "
        f"got {type(result).__name__} {_short(result)}"
    )


class Crashed(AxmConformanceError):
    """The validator's worker hung or died on a pair: the pair is errored, and not shrunk, as
    every try would cost the timeout."""


Judge = Callable[[Any, Any], "bool | str"]
"""``judge(data, schema)``: the verdict, or the one-line error; may raise `Crashed`."""


@runtime_checkable
class Judged(Protocol):
    """A validator that judges pairs itself, such as one run in a worker process."""

    ref: str

    def judge(self, data: Any, schema: Any) -> bool | str: ...


def resolve(validator: ValidatorLike | Judged) -> tuple[str, Judge]:
    """The reference of a validator given any way, and how to judge a pair with it."""
    if isinstance(validator, str):
        return validator, functools.partial(judge, load_validator(validator))
    if isinstance(validator, Judged):
        return validator.ref, validator.judge
    module = getattr(validator, "__module__", None)
    name = getattr(validator, "__qualname__", None)
    ref = f"{module}:{name}" if module and name and "<" not in name else repr(validator)
    return ref, functools.partial(judge, validator)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def judge(function: ValidatorFn, data: Any, schema: Any) -> bool | str:
    """The verdict, or the one-line error when the validator raised or answered nonsense.

    The validator gets copies, so that one which modifies its arguments cannot change the pair
    that is reported.
    """
    try:
        return verdict(function, copy.deepcopy(data), copy.deepcopy(schema))
    except Exception as exc:
        return cause(exc)


def as_claim(keywords: Iterable[str] | None) -> frozenset[str] | None:
    """Claimed keywords given in Python as a set; None claims every keyword."""
    if keywords is None:
        return None
    if isinstance(keywords, str):  # one keyword given bare would claim its letters
        raise TypeError("keywords is a list of keyword names, not a string")
    return frozenset(keywords)
