"""Reading a stranger's object without letting it raise, and reducing what it returned to facts.

A protocol reads attributes of objects it did not write: every read here is guarded, a failed
one a :class:`Missing` that says why. A returned value becomes the :class:`ResultFacts` the
result checks judge: strict JSON, measured and fingerprinted, cut short when it is oversized.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

from axm_conformance._jsonable import canonical_json, jsonable
from axm_conformance._observation import ParameterInfo, ResultFacts

__all__ = [
    "Missing",
    "derives_from",
    "described",
    "is_async_callable",
    "read",
    "result_facts",
    "signature_facts",
    "type_name",
]


class Missing:
    """Marks an attribute the object does not have, or whose read raised."""

    def __init__(self, error: str = "") -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"<missing{': ' + self.error if self.error else ''}>"


def read(obj: Any, name: str) -> Any:
    """``getattr`` that never raises: a failed read gives a :class:`Missing` saying why."""
    try:
        return getattr(obj, name)
    except AttributeError:
        return Missing()
    except Exception as exc:
        return Missing(f"reading .{name} raised {type(exc).__name__}: {exc}")


def type_name(value: Any) -> str:
    return "missing" if isinstance(value, Missing) else type(value).__name__


def described(value: Any) -> str:
    """An object in a few words: a class by its name, anything else by its type's."""
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    return f"a {type(value).__qualname__}"


def signature_facts(function: Any) -> tuple[tuple[ParameterInfo, ...], bool, bool]:
    """Parameters of ``function``, whether it takes ``**kwargs``, and whether it has a signature."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return (), False, False
    parameters = tuple(
        ParameterInfo(p.name, p.kind.name, p.default is inspect.Parameter.empty)
        for p in signature.parameters.values()
        if p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    )
    takes_var_keyword = any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    )
    return parameters, takes_var_keyword, True


def derives_from(obj: Any, module: str, name: str) -> bool:
    """Whether ``obj``'s class is, or derives from, a class ``name`` of the package ``module``
    (or one of its modules): a framework's class recognised without importing the framework."""
    return any(
        klass.__name__ == name
        and (klass.__module__ == module or klass.__module__.startswith(module + "."))
        for klass in type(obj).__mro__
    )


def is_async_callable(function: Any) -> bool:
    """Whether calling ``function`` gives an awaitable by its definition (``async def``)."""
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # noqa: B004 - instances with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def result_facts(fields: dict[str, Any], *, size_limit: int, **facts: Any) -> ResultFacts:
    """Result fields rendered as strict JSON, measured and fingerprinted, as ResultFacts with
    ``facts`` (the type name, the field types, ...)."""
    rendered, problems = jsonable(fields)
    size = _size_at_least(rendered)
    truncated = size > size_limit
    if truncated:
        # An oversized result is a finding in itself: a lower bound of its size, read without
        # serialising megabytes on every call, is enough to report and to compare it.
        fingerprint = f"at least {size} bytes"
        rendered = {"<truncated>": _preview(rendered)}
    else:
        # A lone surrogate (an input echoed) is measured and fingerprinted as Python keeps it.
        encoded = canonical_json(rendered).encode("utf-8", "surrogatepass")
        size = len(encoded)
        fingerprint = hashlib.sha256(encoded).hexdigest()
    return ResultFacts(
        fields=rendered,
        problems=tuple(problems),
        size=size,
        truncated=truncated,
        fingerprint=fingerprint,
        **facts,
    )


def _size_at_least(value: Any) -> int:
    """A lower bound of the size of ``value`` serialised as JSON, in bytes, read cheaply."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return 2 + sum(len(key) + 4 + _size_at_least(item) for key, item in value.items())
    if isinstance(value, list):
        return 2 + sum(1 + _size_at_least(item) for item in value)
    return len(repr(value))


def _preview(value: Any) -> str:
    """The start of a large value, for the report."""
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, dict):
        return "{" + ", ".join(
            f"{key!r}: {_preview(item)}" for key, item in list(value.items())[:5]
        )
    if isinstance(value, list):
        return "[" + ", ".join(_preview(item) for item in value[:5])
    return repr(value)[:200]
