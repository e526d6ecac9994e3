"""What every protocol adapter shares: safe attribute reads and the reduction of a result to facts.

Adapters run in the worker, next to the tool. Reading an attribute of a stranger's object can
raise, so every read here is guarded and reported rather than propagated.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from axm_conformance._observation import (
    ParameterInfo,
    ResultFacts,
    SubjectInfo,
    canonical_json,
    jsonable,
)
from axm_conformance._origin import OwnCode, own_code

__all__ = ["Adapter", "Missing", "read", "signature_facts"]


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


def _type_name(value: Any) -> str:
    return "missing" if isinstance(value, Missing) else type(value).__name__


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


def is_async_callable(function: Any) -> bool:
    """Whether calling ``function`` gives an awaitable by its definition (``async def``)."""
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # noqa: B004 - instances with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


@dataclass
class Adapter:
    """How one protocol reaches a tool: what it declares, and one way to call it."""

    obj: Any
    ref: str

    protocol: ClassVar[str]
    returns: ClassVar[str]
    # The fields of a "tool-result", each with the type names it may have (() for any JSON).
    result_fields: ClassVar[dict[str, tuple[str, ...]]] = {}
    structured_field: ClassVar[str] = ""
    # What the protocol makes of an exception escaping a call (see SubjectInfo): "result" (it
    # wants a failed result), "domain" (raising is its error path) or "wrapped" (the runtime
    # lets only allowed_exceptions escape, the callable's exception as their cause).
    exception_policy: ClassVar[str] = "result"
    allowed_exceptions: ClassVar[tuple[str, ...]] = ()
    # How the protocol answers an input that breaks the schema: "result" (a failed result, no
    # exception), "raise" (one of allowed_exceptions) or "refuse" (the caller's validation
    # reports a failure and the tool's code never runs).
    invalid_policy: ClassVar[str] = "result"
    # What in the protocol's published runtime turns an exception against the protocol into an
    # error the model sees, and what keeps an input that breaks the schema from the tool: a
    # finding either absorbs is a warning that names it. "": nothing does.
    exception_absorber: ClassVar[str] = ""
    invalid_absorber: ClassVar[str] = ""
    # Whether the protocol says that the same input gives the same result.
    promises_determinism: ClassVar[bool] = False
    # Whether the input reaches the tool as keyword arguments (else as one value).
    keyword_call: ClassVar[bool] = False
    # Whether the runtime drops keys the callable does not take (axio does) before calling it.
    strips_unknown_keys: ClassVar[bool] = False
    # Set by call_invalid where the adapter can see whether the tool's own code ran.
    handler_called: bool | None = None

    def describe(self) -> SubjectInfo:
        """The tool as the static checks see it."""
        raise NotImplementedError

    def call(self, input: Any) -> Any:
        """Start one call with ``input``: its return value, possibly awaitable."""
        raise NotImplementedError

    def refuses(self, input: Any) -> str:
        """Why the protocol's caller would refuse ``input`` before the tool sees it ("": never).

        Keyword arguments are built from a JSON object: anything else cannot even be sent.
        """
        if self.keyword_call and not isinstance(input, dict):
            return "the input is not an object, so it cannot be passed as keyword arguments"
        return ""

    def call_invalid(self, input: Any) -> Any:
        """Start one call with an input that breaks the schema, as the protocol's caller would."""
        return self.call(input)

    def own_objects(self) -> tuple[Any, ...]:
        """What the tool's author wrote, whose packages are the tool's own code: the tool's
        class and its ``execute`` (which a base class in another package may provide)."""
        return (type(self.obj), read(self.obj, "execute"))

    @functools.cached_property
    def own_code(self) -> OwnCode:
        """The files of the tool's own code, read once."""
        return own_code(obj for obj in self.own_objects() if not isinstance(obj, Missing))

    def _info(self, **facts: Any) -> SubjectInfo:
        name = read(self.obj, "name")
        description = facts.pop("description", read(self.obj, "description"))
        return SubjectInfo(
            ref=self.ref,
            protocol=self.protocol,  # type: ignore[arg-type]
            name=jsonable(name)[0] if not isinstance(name, Missing) else None,
            name_type=_type_name(name),
            description=jsonable(description)[0] if not isinstance(description, Missing) else None,
            description_type=_type_name(description),
            returns=self.returns,  # type: ignore[arg-type]
            result_fields=self.result_fields,
            structured_field=self.structured_field,
            exception_policy=self.exception_policy,  # type: ignore[arg-type]
            allowed_exceptions=self.allowed_exceptions,
            invalid_policy=self.invalid_policy,  # type: ignore[arg-type]
            exception_absorber=self.exception_absorber,
            invalid_absorber=self.invalid_absorber,
            promises_determinism=self.promises_determinism,
            strips_unknown_keys=self.strips_unknown_keys,
            **facts,
        )

    def payload(self, value: Any) -> tuple[Any, str]:
        """A bare returned value as the result checks see it, and the name of its type."""
        return value, type(value).__name__

    def facts(self, value: Any, *, size_limit: int) -> ResultFacts:
        """Reduce a returned value to the facts the result checks judge."""
        is_mapping = isinstance(value, Mapping)
        fields: dict[str, Any] = {}
        field_types: dict[str, str] = {}
        read_errors: dict[str, str] = {}
        if self.returns == "tool-result" and value is not None and not isinstance(value, str):
            getter: Callable[[str], Any] = (
                (lambda key: value[key] if key in value else Missing())
                if is_mapping
                else (lambda key: read(value, key))
            )
            for key in self.result_fields:
                item = getter(key)
                if isinstance(item, Missing):
                    if item.error:
                        read_errors[key] = item.error
                    continue
                fields[key], field_types[key] = item, type(item).__name__
        else:
            fields["value"], field_types["value"] = self.payload(value)
        rendered, problems = jsonable(fields)
        size = _size_at_least(rendered)
        truncated = size > size_limit
        if truncated:
            # An oversized result is a finding in itself: a lower bound of its size, read without
            # serialising megabytes on every call, is enough to report and to compare it.
            fingerprint = f"at least {size} bytes"
            rendered = {"<truncated>": _preview(rendered)}
        else:
            encoded = canonical_json(rendered).encode()
            size = len(encoded)
            fingerprint = hashlib.sha256(encoded).hexdigest()
        return ResultFacts(
            type_name=type(value).__name__,
            is_mapping=is_mapping,
            fields=rendered,
            field_types=field_types,
            read_errors=read_errors,
            problems=tuple(problems),
            size=size,
            truncated=truncated,
            fingerprint=fingerprint,
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
