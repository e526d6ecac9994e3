"""JSON Schema 2020-12 derived from a Python signature, the way the published runtimes do it.

axm's MCP server and axio both turn a callable's typed parameters into the input schema an LLM
sees. This module does it once for both, through pydantic (as they do): parameters without a
default are required, ``Annotated`` metadata supplies descriptions and bounds, postponed
annotations are resolved.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pydantic
from pydantic.fields import FieldInfo as PydanticFieldInfo

__all__ = ["MISSING", "Bounds", "Parameter", "parameters_of", "schema_from_parameters"]


class _Missing:
    """Sentinel for "no default", distinct from ``None`` which is a legitimate default."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Bounds:
    """Schema facts that ``Annotated`` metadata can attach to a parameter."""

    default: Any = MISSING
    description: str | None = None
    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None

    def to_pydantic(self) -> PydanticFieldInfo:
        """The equivalent pydantic field, so pydantic renders the schema keywords."""
        options = {
            name: getattr(self, name)
            for name in ("description", "ge", "le", "gt", "lt", "min_length", "max_length")
            if getattr(self, name) is not None
        }
        field: PydanticFieldInfo = pydantic.Field(**options)
        return field


@dataclass(frozen=True)
class Parameter:
    """One keyword parameter of a tool's callable, with its resolved annotation and default."""

    name: str
    annotation: Any
    default: Any
    kind: inspect._ParameterKind

    @property
    def required(self) -> bool:
        return self.default is MISSING


def _bounds_in(annotation: Any) -> Bounds | None:
    """Find the bounds object an ``Annotated`` annotation carries, if any."""
    for item in getattr(annotation, "__metadata__", ()):
        if isinstance(item, Bounds):
            return item
    return None


def parameters_of(function: Callable[..., Any]) -> tuple[list[Parameter], bool]:
    """The keyword-passable parameters of ``function`` and whether it takes ``**kwargs``.

    ``*args`` cannot be filled from a JSON object and is left out. A default given through an
    ``Annotated`` bounds object counts as the parameter's default when the signature has none.
    Raises ``TypeError`` naming the parameter when an annotation cannot be resolved.
    """
    signature = inspect.signature(function)
    try:
        # A decorated function's annotations resolve in the module of the function it wraps.
        hints = typing.get_type_hints(inspect.unwrap(function), include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"cannot resolve the annotations of {getattr(function, '__qualname__', function)!r}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    parameters: list[Parameter] = []
    takes_var_keyword = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            takes_var_keyword = True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        annotation = hints.get(parameter.name, Any)
        default = MISSING if parameter.default is inspect.Parameter.empty else parameter.default
        bounds = _bounds_in(annotation)
        if default is MISSING and bounds is not None:
            default = bounds.default
        parameters.append(Parameter(parameter.name, annotation, default, parameter.kind))
    return parameters, takes_var_keyword


def _pydantic_annotation(annotation: Any) -> Any:
    """Rewrite ``Annotated`` metadata pydantic does not know into metadata it renders.

    A plain string becomes a description (a common idiom in agent tools); a :class:`Bounds`
    becomes a pydantic ``Field``.
    """
    metadata = getattr(annotation, "__metadata__", None)
    if metadata is None:
        return annotation
    rewritten: list[Any] = []
    for item in metadata:
        if isinstance(item, Bounds):
            rewritten.append(item.to_pydantic())
        elif isinstance(item, str):
            rewritten.append(pydantic.Field(description=item))
        else:
            rewritten.append(item)
    return typing.Annotated[(annotation.__origin__, *rewritten)]


class _SchemaWithoutTitles(pydantic.json_schema.GenerateJsonSchema):
    """Pydantic's generator without the auto-generated titles, which carry no information."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def schema_from_parameters(
    parameters: list[Parameter],
    *,
    title: str,
    extra: Literal["forbid", "allow", "ignore"],
) -> dict[str, Any]:
    """The JSON Schema of an object whose properties are ``parameters``.

    ``extra`` says what happens to keys that are not parameters: "forbid" gives
    ``additionalProperties: false`` (AXM without ``**kwargs``: such a call cannot bind), "allow"
    gives ``additionalProperties: true``, "ignore" leaves it open (axio strips stray keys).
    Field names are aliased so that parameter names pydantic reserves (``model_config``,
    ``_private``) still come through unchanged.
    """
    fields: dict[str, Any] = {}
    for index, parameter in enumerate(parameters):
        default = ... if parameter.required else parameter.default
        fields[f"p{index}"] = (
            _pydantic_annotation(parameter.annotation),
            pydantic.Field(default=default, alias=parameter.name),
        )
    model = pydantic.create_model(
        title,
        __config__=pydantic.ConfigDict(extra=extra, arbitrary_types_allowed=True),
        **fields,
    )
    schema: dict[str, Any] = model.model_json_schema(
        by_alias=True, schema_generator=_SchemaWithoutTitles
    )
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return schema
