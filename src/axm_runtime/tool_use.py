"""Reference runtime of the tool_use protocol: registry, validation and chains.

A tool is a :class:`ToolEntry`: a name, a description, a handler called as ``handler(input_data)``
with one positional dict, and JSON Schemas for its input and output. A :class:`ToolRegistry` holds
tools and invokes them, validating input before the call and output after it, and wraps every
outcome in a :class:`Result`. A :class:`ToolChain` runs registered tools one after another over a
shared context dict.

Validation follows JSON Schema draft 2020-12 for the keywords in :data:`SUPPORTED_KEYWORDS`; every
other keyword is ignored, as JSON Schema ignores unknown keywords. JSON semantics hold throughout:
booleans are not numbers, ``1.0`` is an integer, and ``1 == 1.0`` but ``True != 1`` in ``enum``,
``const`` and ``uniqueItems``. ``$ref`` resolves JSON pointers inside the schema itself
(``#/$defs/Name``). Validation never raises: a malformed schema is reported in the result.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import math
import re
import reprlib
import sys
import time
import unicodedata
import urllib.parse
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any, NamedTuple, TypeVar

__all__ = [
    "ChainResult",
    "ChainStep",
    "Result",
    "ResultStatus",
    "ToolChain",
    "ToolDefinition",
    "ToolEntry",
    "ToolRegistry",
    "ValidationResult",
    "tool",
    "validate_input",
    "validate_output",
]


# ---------------------------------------------------------------------------------------------
# Shared result and definition types
# ---------------------------------------------------------------------------------------------


class ResultStatus(Enum):
    """Status of an operation's :class:`Result`."""

    SUCCESS = "success"
    FAILURE = "failure"
    PARTIAL = "partial"
    SKIPPED = "skipped"
    TIMEOUT = "timeout"


@dataclass
class Result:
    """Outcome of an operation: a status, the data produced and what went wrong."""

    status: ResultStatus
    data: Any = None
    message: str = ""
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the operation fully succeeded."""
        return self.status is ResultStatus.SUCCESS

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, the status as its string value."""
        return {
            "status": self.status.value,
            "data": self.data,
            "message": self.message,
            "errors": list(self.errors),
            "duration_ms": self.duration_ms,
            "metadata": dict(self.metadata),
        }


@dataclass
class ToolDefinition:
    """Definition of a tool as exposed to clients (MCP, CLI): everything but the handler."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)
    module: str = ""
    tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "module": self.module,
            "tags": list(self.tags),
        }


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


@dataclass
class ValidationResult:
    """Result of a validation: whether the data passed, and why not."""

    valid: bool = True
    errors: list[str] = field(default_factory=list)

    def merge(self, other: ValidationResult) -> ValidationResult:
        """Return a new result, valid only if both are, with the errors of both."""
        return ValidationResult(valid=self.valid and other.valid, errors=self.errors + other.errors)

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {"valid": self.valid, "errors": list(self.errors)}


def validate_input(data: Any, schema: dict[str, Any] | bool) -> ValidationResult:
    """Validate a tool's input against a JSON Schema.

    Never raises: an invalid schema is reported as an error of the result.
    """
    return _validate(data, schema)


def validate_output(data: Any, schema: dict[str, Any] | bool) -> ValidationResult:
    """Validate a tool's output against a JSON Schema.

    Same rules as :func:`validate_input`; kept apart so callers say which side they check.
    """
    return _validate(data, schema)


def _validate(data: Any, schema: Any) -> ValidationResult:
    validator = _Validator(schema)
    try:
        errors = [_format(error) for error in validator.descend(data, schema)]
    except RecursionError:
        # Deeply nested data exhausts the interpreter stack; report it rather than crash.
        errors = ["/: the data is nested too deeply to validate"]
    return ValidationResult(valid=not errors, errors=errors)


class _Error(NamedTuple):
    """One violation: a message and where in the instance it occurred."""

    message: str
    path: tuple[str | int, ...] = ()


def _format(error: _Error) -> str:
    pointer = "/".join(str(part).replace("~", "~0").replace("/", "~1") for part in error.path)
    return f"/{pointer}: {error.message}"


class _Validator:
    """Evaluates instances against the subschemas of one root schema."""

    def __init__(self, root: Any) -> None:
        self.root = root
        # ($ref, id(instance)) pairs being evaluated on the current path; meeting one again
        # means the references loop without consuming any of the instance.
        self._active_refs: set[tuple[str, int]] = set()

    def descend(
        self, instance: Any, schema: Any, at: str | int | None = None
    ) -> Generator[_Error, None, None]:
        """Yield the errors of ``instance`` against ``schema``, their paths prefixed by ``at``."""
        for error in self._evaluate(instance, schema):
            yield error if at is None else _Error(error.message, (at, *error.path))

    def is_valid(self, instance: Any, schema: Any) -> bool:
        """Whether ``instance`` is valid against ``schema``, stopping at the first error."""
        # Closing the generator runs the cleanup of any $ref being evaluated inside it.
        with contextlib.closing(self.descend(instance, schema)) as errors:
            return next(errors, None) is None

    def resolve(self, ref: str) -> Any:
        """Return the subschema a ``#``-fragment JSON pointer designates, or raise LookupError."""
        if not ref.startswith("#"):
            raise LookupError(f"only references inside the schema ('#...') are supported: {ref!r}")
        pointer = urllib.parse.unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            raise LookupError(f"{ref!r} is not a JSON pointer")
        node = self.root
        for token in pointer.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif (
                isinstance(node, list)
                and re.fullmatch(r"0|[1-9][0-9]*", token)
                and int(token) < len(node)
            ):
                node = node[int(token)]
            else:
                raise LookupError(f"{ref!r} does not exist in the schema")
        return node

    def with_ref(self, ref: str, instance: Any, target: Any) -> Iterator[_Error]:
        """Yield the errors of ``instance`` against the target of ``ref``, refusing loops."""
        key = (ref, id(instance))
        if key in self._active_refs:
            yield _Error(f"$ref {ref!r} refers back to itself without consuming the instance")
            return
        self._active_refs.add(key)
        try:
            yield from self.descend(instance, target)
        finally:
            self._active_refs.discard(key)

    def _evaluate(self, instance: Any, schema: Any) -> Iterator[_Error]:
        if schema is True:
            return
        if schema is False:
            yield _Error(f"False schema does not allow {_show(instance)}")
            return
        if not isinstance(schema, dict):
            yield _Error(
                f"invalid schema: a schema must be an object or a boolean, "
                f"got {type(schema).__name__} {_show(schema)}"
            )
            return
        for keyword, value in schema.items():
            entry = _KEYWORDS.get(keyword)
            if entry is None:
                continue  # annotations and unknown keywords do not constrain
            apply, form = entry
            if not form.accepts(value):
                yield _Error(
                    f"invalid schema: {keyword!r} must be {form.description}, got {_show(value)}"
                )
                continue
            yield from apply(self, value, instance, schema)


# Values in messages are abbreviated: a long string, a large container or deeply nested data
# would bury the message (and repr() of very deep data exhausts the stack).
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlist = _REPR.maxdict = 8


def _show(value: Any) -> str:
    try:
        return _REPR.repr(value)
    except ValueError:  # an int beyond sys.get_int_max_str_digits() has no decimal form
        return f"<{type(value).__name__} too large to show>"


# JSON types ------------------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    # bool is a subclass of int in Python, but JSON true/false are not numbers.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    # JSON Schema counts any number with a zero fractional part as an integer, 1.0 included.
    return _is_number(value) and (isinstance(value, int) or value.is_integer())


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "null": lambda value: value is None,
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "number": _is_number,
    "string": lambda value: isinstance(value, str),
    "array": lambda value: isinstance(value, list),
    "object": lambda value: isinstance(value, dict),
}


def _json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0``, but ``True != 1``, recursively."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[key], b[key]) for key in a)
    if isinstance(a, list | dict) or isinstance(b, list | dict):
        return False
    return bool(a == b)


def _is_finite(number: int | float) -> bool:
    # math.isfinite converts to float, which overflows for ints beyond 1e308.
    return isinstance(number, int) or math.isfinite(number)


def _decimal_value(number: int | float) -> Fraction:
    # A float stands for the decimal literal it was read from, which its shortest repr gives
    # back; so 0.0075 is exactly 75 times 0.0001, as the schema author means.
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


# Regular expressions ---------------------------------------------------------------------
# JSON Schema patterns are ECMA-262 regular expressions. Python's re reads the common ones alike
# but lacks Unicode property escapes (\p{Letter}), which are rewritten here as character classes
# over the Unicode general categories, and its $ also matches before a final newline, so $ is
# rewritten as \Z. As in python-jsonschema, \d and \w keep Python's meaning
# (Unicode digits and word characters, where ECMA-262 means ASCII ones).

_GENERAL_CATEGORIES = {
    "L": "Letter",
    "LC": "Cased_Letter",
    "Lu": "Uppercase_Letter",
    "Ll": "Lowercase_Letter",
    "Lt": "Titlecase_Letter",
    "Lm": "Modifier_Letter",
    "Lo": "Other_Letter",
    "M": "Mark",
    "Mn": "Nonspacing_Mark",
    "Mc": "Spacing_Mark",
    "Me": "Enclosing_Mark",
    "N": "Number",
    "Nd": "Decimal_Number",
    "Nl": "Letter_Number",
    "No": "Other_Number",
    "P": "Punctuation",
    "Pc": "Connector_Punctuation",
    "Pd": "Dash_Punctuation",
    "Ps": "Open_Punctuation",
    "Pe": "Close_Punctuation",
    "Pi": "Initial_Punctuation",
    "Pf": "Final_Punctuation",
    "Po": "Other_Punctuation",
    "S": "Symbol",
    "Sm": "Math_Symbol",
    "Sc": "Currency_Symbol",
    "Sk": "Modifier_Symbol",
    "So": "Other_Symbol",
    "Z": "Separator",
    "Zs": "Space_Separator",
    "Zl": "Line_Separator",
    "Zp": "Paragraph_Separator",
    "C": "Other",
    "Cc": "Control",
    "Cf": "Format",
    "Cs": "Surrogate",
    "Co": "Private_Use",
    "Cn": "Unassigned",
}
_CATEGORY_BY_NAME = {
    **{code: code for code in _GENERAL_CATEGORIES},
    **{name: code for code, name in _GENERAL_CATEGORIES.items()},
}
_PROPERTY_ESCAPE = re.compile(r"\\([pP])\{(?:(?:General_Category|gc)=)?([A-Za-z_]+)\}")


@functools.cache
def _category_ranges(code: str) -> str:
    """Return the body of a character class matching the general category ``code``."""
    categories = ("Lu", "Ll", "Lt") if code == "LC" else (code,)
    ranges: list[str] = []
    start: int | None = None
    # One point past the end closes a run that reaches the last code point.
    for point in range(sys.maxunicode + 2):
        inside = point <= sys.maxunicode and unicodedata.category(chr(point)).startswith(categories)
        if inside and start is None:
            start = point
        elif not inside and start is not None:
            ranges.append(f"\\U{start:08x}-\\U{point - 1:08x}")
            start = None
    return "".join(ranges)


def _python_pattern(pattern: str) -> str:
    """Rewrite the Unicode property escapes and the ``$`` of an ECMA-262 pattern for Python's
    re."""
    parts: list[str] = []
    in_class = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        escape = _PROPERTY_ESCAPE.match(pattern, index)
        if escape:
            code = _CATEGORY_BY_NAME.get(escape[2])
            if code is None:
                raise re.error(f"unknown Unicode property {escape[2]!r}")
            negated = escape[1] == "P"
            if negated and in_class:
                raise re.error("\\P{...} inside a character class is not supported")
            body = _category_ranges(code)
            parts.append(body if in_class else f"[{'^' if negated else ''}{body}]")
            index = escape.end()
            continue
        # An escaped character is copied whole, so an escaped bracket does not open a class.
        step = 2 if char == "\\" else 1
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        # ECMA-262's $ matches at the end only; Python's also before a final newline.
        parts.append("\\Z" if char == "$" and not in_class else pattern[index : index + step])
        index += step
    return "".join(parts)


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_python_pattern(pattern))


def _search(pattern: str, text: str) -> bool:
    return _regex(pattern).search(text) is not None


# Keyword value forms -----------------------------------------------------------------------


class _Form(NamedTuple):
    """What a keyword's value must look like, checked before the keyword is applied."""

    description: str
    accepts: Callable[[Any], bool]


def _compiles(pattern: Any) -> bool:
    if not isinstance(pattern, str):
        return False
    try:
        _regex(pattern)
    except (re.error, OverflowError):
        return False
    return True


def _is_string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_type_name(value: Any) -> bool:
    return isinstance(value, str) and value in _TYPE_CHECKS


_ANY = _Form("anything", lambda value: True)
_COUNT = _Form("a non-negative integer", lambda value: _is_integer(value) and value >= 0)
_NUMBER = _Form("a number", _is_number)
_DIVISOR = _Form(
    "a number greater than 0",
    lambda value: _is_number(value) and _is_finite(value) and value > 0,
)
_BOOLEAN = _Form("a boolean", lambda value: isinstance(value, bool))
_STRING = _Form("a string", lambda value: isinstance(value, str))
_STRINGS = _Form("an array of strings", _is_string_list)
_ARRAY = _Form("an array", lambda value: isinstance(value, list))
_SCHEMAS = _Form(
    "a non-empty array of schemas", lambda value: isinstance(value, list) and bool(value)
)
_SCHEMA_MAP = _Form("an object whose values are schemas", lambda value: isinstance(value, dict))
_REGEX = _Form("a valid regular expression", _compiles)
_REGEX_MAP = _Form(
    "an object whose keys are valid regular expressions",
    lambda value: isinstance(value, dict) and all(_compiles(key) for key in value),
)
_DEPENDENCIES = _Form(
    "an object whose values are arrays of strings",
    lambda value: isinstance(value, dict) and all(_is_string_list(v) for v in value.values()),
)
_TYPE = _Form(
    f"one of {sorted(_TYPE_CHECKS)} or a non-empty array of them",
    lambda value: (
        _is_type_name(value)
        or (isinstance(value, list) and bool(value) and all(_is_type_name(name) for name in value))
    ),
)


# Keywords ----------------------------------------------------------------------------------
# One function per keyword, all with the signature (validator, value, instance, schema); each
# yields only messages, and the validator's descend() puts the instance path in front.

_KeywordFn = Callable[[_Validator, Any, Any, dict[str, Any]], Iterator[_Error]]


def _type(v: _Validator, types: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    names = [types] if isinstance(types, str) else types
    if not any(_TYPE_CHECKS[name](instance) for name in names):
        expected = " or ".join(repr(name) for name in names)
        yield _Error(f"{_show(instance)} is not of type {expected}")


def _enum(v: _Validator, values: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if not any(_json_equal(instance, value) for value in values):
        yield _Error(f"{_show(instance)} is not one of {_show(values)}")


def _const(v: _Validator, const: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if not _json_equal(instance, const):
        yield _Error(f"{_show(instance)} is not the expected value {_show(const)}")


def _minimum(v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if _is_number(instance) and instance < bound:
        yield _Error(f"{_show(instance)} is less than the minimum of {_show(bound)}")


def _maximum(v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if _is_number(instance) and instance > bound:
        yield _Error(f"{_show(instance)} is greater than the maximum of {_show(bound)}")


def _exclusive_minimum(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if _is_number(instance) and instance <= bound:
        yield _Error(
            f"{_show(instance)} is less than or equal to the exclusive minimum of {_show(bound)}"
        )


def _exclusive_maximum(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if _is_number(instance) and instance >= bound:
        yield _Error(
            f"{_show(instance)} is greater than or equal to the exclusive maximum of {_show(bound)}"
        )


def _multiple_of(
    v: _Validator, divisor: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if not _is_number(instance):
        return
    # Exact rational arithmetic: float division is inexact and overflows near 1e308.
    multiple = (
        _is_finite(instance)
        and (_decimal_value(instance) / _decimal_value(divisor)).denominator == 1
    )
    if not multiple:
        yield _Error(f"{_show(instance)} is not a multiple of {_show(divisor)}")


def _min_length(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    # len() of a Python str counts code points, which is what JSON Schema counts.
    if isinstance(instance, str) and len(instance) < bound:
        yield _Error(f"{_show(instance)} is shorter than {_show(bound)} characters")


def _max_length(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, str) and len(instance) > bound:
        yield _Error(f"{_show(instance)} is longer than {_show(bound)} characters")


def _pattern(
    v: _Validator, pattern: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    # JSON Schema patterns are not anchored: a match anywhere in the string counts.
    if isinstance(instance, str) and not _search(pattern, instance):
        yield _Error(f"{_show(instance)} does not match {pattern!r}")


def _min_items(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, list) and len(instance) < bound:
        yield _Error(f"{_show(instance)} has fewer than {_show(bound)} items")


def _max_items(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, list) and len(instance) > bound:
        yield _Error(f"{_show(instance)} has more than {_show(bound)} items")


def _unique_items(
    v: _Validator, unique: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if not (unique and isinstance(instance, list)):
        return
    for i, first in enumerate(instance):
        for j in range(i + 1, len(instance)):
            if _json_equal(first, instance[j]):
                yield _Error(f"{_show(instance)} has non-unique elements (items {i} and {j})")
                return


def _prefix_items(
    v: _Validator, prefix: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, list):
        for index, (item, subschema) in enumerate(zip(instance, prefix, strict=False)):
            yield from v.descend(item, subschema, index)


def _items(v: _Validator, items: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if not isinstance(instance, list):
        return
    # Items already covered by prefixItems are not items' business (2020-12).
    start = len(schema["prefixItems"]) if _SCHEMAS.accepts(schema.get("prefixItems")) else 0
    for index in range(start, len(instance)):
        yield from v.descend(instance[index], items, index)


def _min_properties(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, dict) and len(instance) < bound:
        yield _Error(f"{_show(instance)} has fewer than {_show(bound)} properties")


def _max_properties(
    v: _Validator, bound: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, dict) and len(instance) > bound:
        yield _Error(f"{_show(instance)} has more than {_show(bound)} properties")


def _required(v: _Validator, names: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if isinstance(instance, dict):
        for name in names:
            if name not in instance:
                yield _Error(f"{name!r} is a required property")


def _dependent_required(
    v: _Validator, dependencies: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if not isinstance(instance, dict):
        return
    for trigger, names in dependencies.items():
        if trigger in instance:
            for name in names:
                if name not in instance:
                    yield _Error(f"{name!r} is required when {trigger!r} is present")


def _properties(
    v: _Validator, properties: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if isinstance(instance, dict):
        for name, subschema in properties.items():
            if name in instance:
                yield from v.descend(instance[name], subschema, name)


def _pattern_properties(
    v: _Validator, patterns: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if isinstance(name, str) and _search(pattern, name):
                yield from v.descend(value, subschema, name)


def _additional_properties(
    v: _Validator, additional: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[_Error]:
    if not isinstance(instance, dict):
        return
    # Only properties matched by neither properties nor patternProperties are additional.
    declared = schema["properties"] if _SCHEMA_MAP.accepts(schema.get("properties")) else {}
    patterns = (
        schema["patternProperties"] if _REGEX_MAP.accepts(schema.get("patternProperties")) else {}
    )
    for name, value in instance.items():
        if name in declared:
            continue
        if isinstance(name, str) and any(_search(pattern, name) for pattern in patterns):
            continue
        if additional is False:
            yield _Error(f"additional property {name!r} is not allowed")
        else:
            yield from v.descend(value, additional, name)


def _all_of(v: _Validator, schemas: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    for subschema in schemas:
        yield from v.descend(instance, subschema)


def _any_of(v: _Validator, schemas: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if not any(v.is_valid(instance, subschema) for subschema in schemas):
        yield _Error(f"{_show(instance)} is not valid under any of the anyOf schemas")


def _one_of(v: _Validator, schemas: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    matches = [i for i, subschema in enumerate(schemas) if v.is_valid(instance, subschema)]
    if not matches:
        yield _Error(f"{_show(instance)} is not valid under any of the oneOf schemas")
    elif len(matches) > 1:
        yield _Error(f"{_show(instance)} is valid under more than one oneOf schema: {matches}")


def _not(v: _Validator, negated: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    if v.is_valid(instance, negated):
        yield _Error(f"{_show(instance)} must not be valid under the 'not' schema")


def _ref(v: _Validator, ref: Any, instance: Any, schema: dict[str, Any]) -> Iterator[_Error]:
    try:
        target = v.resolve(ref)
    except LookupError as exc:
        yield _Error(f"cannot resolve $ref: {exc.args[0]}")
        return
    yield from v.with_ref(ref, instance, target)


_KEYWORDS: dict[str, tuple[_KeywordFn, _Form]] = {
    "type": (_type, _TYPE),
    "enum": (_enum, _ARRAY),
    "const": (_const, _ANY),
    "minimum": (_minimum, _NUMBER),
    "maximum": (_maximum, _NUMBER),
    "exclusiveMinimum": (_exclusive_minimum, _NUMBER),
    "exclusiveMaximum": (_exclusive_maximum, _NUMBER),
    "multipleOf": (_multiple_of, _DIVISOR),
    "minLength": (_min_length, _COUNT),
    "maxLength": (_max_length, _COUNT),
    "pattern": (_pattern, _REGEX),
    "minItems": (_min_items, _COUNT),
    "maxItems": (_max_items, _COUNT),
    "uniqueItems": (_unique_items, _BOOLEAN),
    "prefixItems": (_prefix_items, _SCHEMAS),
    "items": (_items, _ANY),
    "minProperties": (_min_properties, _COUNT),
    "maxProperties": (_max_properties, _COUNT),
    "required": (_required, _STRINGS),
    "dependentRequired": (_dependent_required, _DEPENDENCIES),
    "properties": (_properties, _SCHEMA_MAP),
    "patternProperties": (_pattern_properties, _REGEX_MAP),
    "additionalProperties": (_additional_properties, _ANY),
    "allOf": (_all_of, _SCHEMAS),
    "anyOf": (_any_of, _SCHEMAS),
    "oneOf": (_one_of, _SCHEMAS),
    "not": (_not, _ANY),
    "$ref": (_ref, _STRING),
}

SUPPORTED_KEYWORDS: frozenset[str] = frozenset(_KEYWORDS)
"""The JSON Schema keywords the validator enforces; every other keyword is ignored."""


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------


@dataclass
class ToolEntry:
    """A tool: its name, description, handler and the schemas of its input and output."""

    name: str
    description: str
    handler: Callable[..., Any]
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)

    def to_tool_definition(self, module: str = "tool_use") -> ToolDefinition:
        """Return the shared :class:`ToolDefinition` of this tool."""
        return ToolDefinition(
            name=self.name,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=self.output_schema,
            module=module,
            tags=list(self.tags),
        )

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, without the handler."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "tags": list(self.tags),
        }


def _elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


class ToolRegistry:
    """Tools by name: registration, lookup, search, and validated invocation."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolEntry] = {}

    def register(self, entry: ToolEntry) -> None:
        """Add a tool; raise ValueError if one with the same name is registered."""
        if entry.name in self._tools:
            raise ValueError(
                f"tool {entry.name!r} is already registered; unregister it first or rename it"
            )
        self._tools[entry.name] = entry

    def unregister(self, name: str) -> bool:
        """Remove a tool by name; return whether it was registered."""
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> ToolEntry | None:
        """Return the tool of exactly this name, or None."""
        return self._tools.get(name)

    def list(self) -> builtins.list[ToolEntry]:
        """Return every tool, sorted by name."""
        return [self._tools[name] for name in self.list_names()]

    def list_names(self) -> builtins.list[str]:
        """Return every tool name, sorted."""
        return sorted(self._tools)

    def search(
        self,
        *,
        name_contains: str | None = None,
        tags: builtins.list[str] | None = None,
        match_all_tags: bool = False,
    ) -> builtins.list[ToolEntry]:
        """Return the tools, sorted by name, whose name contains ``name_contains``
        (ignoring case) and which have any (or, with ``match_all_tags``, all) of ``tags``.

        A criterion left out (None, or no tags) does not filter.
        """
        wanted = set(tags or ())
        found = []
        for entry in self.list():
            if name_contains is not None and name_contains.lower() not in entry.name.lower():
                continue
            if wanted:
                present = wanted & set(entry.tags)
                if not present or (match_all_tags and present != wanted):
                    continue
            found.append(entry)
        return found

    def invoke(self, name: str, input_data: Any = None, *, validate: bool = True) -> Result:
        """Call the tool ``name`` with ``input_data`` and wrap the outcome in a :class:`Result`.

        Unknown tool, invalid input (the handler is then not called) or an exception from the
        handler: FAILURE. Output violating the output schema: PARTIAL, the data kept. Schemas are
        checked only with ``validate`` and when not empty.
        """
        start = time.perf_counter()
        entry = self._tools.get(name)
        if entry is None:
            return Result(
                status=ResultStatus.FAILURE,
                message=f"Tool {name!r} is not registered.",
                errors=[f"unknown tool: {name!r}"],
                duration_ms=_elapsed_ms(start),
            )
        if validate and entry.input_schema:
            checked = validate_input(input_data, entry.input_schema)
            if not checked.valid:
                return Result(
                    status=ResultStatus.FAILURE,
                    message=f"Input validation failed for tool {name!r}.",
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        try:
            output = entry.handler(input_data)
        except Exception as exc:  # a tool signals a domain error by raising
            error = f"{type(exc).__name__}: {exc}"
            return Result(
                status=ResultStatus.FAILURE,
                message=f"Tool {name!r} raised {error}",
                errors=[error],
                duration_ms=_elapsed_ms(start),
            )
        if validate and entry.output_schema:
            checked = validate_output(output, entry.output_schema)
            if not checked.valid:
                return Result(
                    status=ResultStatus.PARTIAL,
                    data=output,
                    message=f"Output validation failed for tool {name!r}.",
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        return Result(
            status=ResultStatus.SUCCESS,
            data=output,
            message=f"Tool {name!r} executed successfully.",
            duration_ms=_elapsed_ms(start),
        )

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"ToolRegistry(tools={self.list_names()})"


_F = TypeVar("_F", bound=Callable[..., Any])


def _first_paragraph(doc: str | None) -> str:
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def tool(
    name: str,
    description: str = "",
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[_F], _F]:
    """Mark a function as a tool, and register it if ``registry`` is given.

    The function is returned unchanged, with a ``tool_entry`` attribute holding its
    :class:`ToolEntry` for registering later. The description defaults to the first paragraph
    of the function's docstring.
    """

    def decorate(fn: _F) -> _F:
        entry = ToolEntry(
            name=name,
            description=description or _first_paragraph(inspect.getdoc(fn)),
            handler=fn,
            input_schema=input_schema or {},
            output_schema=output_schema or {},
            tags=list(tags or ()),
        )
        fn.tool_entry = entry  # type: ignore[attr-defined]  # functions take attributes
        if registry is not None:
            registry.register(entry)
        return fn

    return decorate


# ---------------------------------------------------------------------------------------------
# Chains
# ---------------------------------------------------------------------------------------------


@dataclass
class ChainStep:
    """One step of a :class:`ToolChain`.

    ``input_mapping`` maps each input key of the tool to a context key, dot-separated for nested
    dicts (``"raw.body"`` is ``context["raw"]["body"]``); a missing key gives None. Without a
    mapping the tool gets the whole context. The output is stored under ``output_key``; without
    one, a dict output is merged into the context and any other output is stored under the tool
    name.
    """

    tool_name: str
    input_mapping: dict[str, str] = field(default_factory=dict)
    output_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary."""
        return {
            "tool_name": self.tool_name,
            "input_mapping": dict(self.input_mapping),
            "output_key": self.output_key,
        }


@dataclass
class ChainResult:
    """Outcome of a :class:`ToolChain` run."""

    success: bool = True
    context: dict[str, Any] = field(default_factory=dict)
    step_results: list[Result] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    duration_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return a plain dictionary, step results included as dictionaries."""
        return {
            "success": self.success,
            "context": self.context,
            "step_results": [result.to_dict() for result in self.step_results],
            "errors": list(self.errors),
            "duration_ms": self.duration_ms,
        }


def _lookup(context: dict[str, Any], dotted_key: str) -> Any:
    value: Any = context
    for key in dotted_key.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


class ToolChain:
    """Registered tools run one after another over a shared context dict."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._steps: list[ChainStep] = []

    @property
    def steps(self) -> list[ChainStep]:
        """A copy of the steps, in order."""
        return list(self._steps)

    def add_step(self, step: ChainStep) -> ToolChain:
        """Append a step; return the chain, so calls can be chained."""
        self._steps.append(step)
        return self

    def clear(self) -> None:
        """Remove every step."""
        self._steps.clear()

    def validate(self) -> ValidationResult:
        """Check that every tool the steps name is registered."""
        errors = [
            f"step {index}: tool {step.tool_name!r} is not registered"
            for index, step in enumerate(self._steps)
            if step.tool_name not in self._registry
        ]
        return ValidationResult(valid=not errors, errors=errors)

    def execute(
        self,
        initial_input: dict[str, Any] | None = None,
        *,
        stop_on_failure: bool = True,
        validate_tools: bool = True,
    ) -> ChainResult:
        """Run the steps in order, starting from a copy of ``initial_input`` as the context.

        A step whose result is not SUCCESS fails the chain and its output is not stored; the
        chain then stops, unless ``stop_on_failure`` is False. With ``validate_tools``, nothing
        runs if a step names an unregistered tool.
        """
        start = time.perf_counter()
        context = dict(initial_input or {})
        if validate_tools:
            checked = self.validate()
            if not checked.valid:
                return ChainResult(
                    success=False,
                    context=context,
                    errors=checked.errors,
                    duration_ms=_elapsed_ms(start),
                )
        outcome = ChainResult(context=context)
        for index, step in enumerate(self._steps):
            if step.input_mapping:
                step_input = {
                    key: _lookup(context, source) for key, source in step.input_mapping.items()
                }
            else:
                step_input = dict(context)
            result = self._registry.invoke(step.tool_name, step_input)
            outcome.step_results.append(result)
            if not result.ok:
                outcome.success = False
                outcome.errors.extend(result.errors)
                outcome.errors.append(f"step {index} ({step.tool_name!r}) failed: {result.message}")
                if stop_on_failure:
                    break
                continue
            if step.output_key:
                context[step.output_key] = result.data
            elif isinstance(result.data, dict):
                context.update(result.data)
            else:
                context[step.tool_name] = result.data
        outcome.duration_ms = _elapsed_ms(start)
        return outcome

    def __len__(self) -> int:
        return len(self._steps)

    def __repr__(self) -> str:
        return f"ToolChain(steps={[step.tool_name for step in self._steps]})"
