"""JSON Schema keywords: where their values hold subschemas, and the type of value each constrains.

Every walk over a schema reads these tables, so that all agree on which values are schemas: a
property named ``type`` is not a keyword, and a value listed by ``enum`` is not a schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "ARRAY_KEYWORDS",
    "KEYWORD_TYPES",
    "NUMBER_KEYWORDS",
    "OBJECT_KEYWORDS",
    "SCHEMA_LISTS",
    "SCHEMA_MAPS",
    "SCHEMA_VALUED",
    "STRING_KEYWORDS",
    "subschemas",
]

# Where 2020-12 holds subschemas (as referencing's DRAFT202012 finds them): keywords whose value
# is one schema, a list of schemas, or a map of names to schemas.
SCHEMA_VALUED: Final = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
     "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
)  # fmt: skip
SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)
# Where the earlier drafts hold them too, so that `subschemas` sees into a draft 7 schema:
# ``items`` as a list, ``additionalItems``, and ``dependencies`` (a value may be a list of names).
_ANY_DRAFT_VALUED: Final = SCHEMA_VALUED | {"additionalItems"}
_ANY_DRAFT_LISTS: Final = SCHEMA_LISTS | {"items"}
_ANY_DRAFT_MAPS: Final = SCHEMA_MAPS | {"dependencies"}

# The 2020-12 assertions that constrain values of one type only, by type (``format`` only
# annotates there, unless a validator is asked to assert it).
NUMBER_KEYWORDS: Final = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
)
STRING_KEYWORDS: Final = ("minLength", "maxLength", "pattern")
ARRAY_KEYWORDS: Final = (
    "items", "prefixItems", "contains", "minContains", "maxContains", "minItems", "maxItems",
    "uniqueItems",
)  # fmt: skip
OBJECT_KEYWORDS: Final = (
    "properties", "patternProperties", "additionalProperties", "required", "minProperties",
    "maxProperties", "dependentRequired", "dependentSchemas", "propertyNames",
)  # fmt: skip
KEYWORD_TYPES: Final[dict[str, tuple[str, ...]]] = {
    **dict.fromkeys(NUMBER_KEYWORDS, ("integer", "number")),
    **dict.fromkeys(STRING_KEYWORDS, ("string",)),
    **dict.fromkeys(ARRAY_KEYWORDS, ("array",)),
    **dict.fromkeys(OBJECT_KEYWORDS, ("object",)),
}
"""The types of value each of those keywords constrains."""

_Keys = tuple[str | int, ...]  # those that lead from a schema to one of its subschemas


def subschemas(schema: Any, path: _Keys = ()) -> Iterator[tuple[_Keys, Any]]:
    """Every subschema of `schema` with the keys that lead to it, `schema` itself first.

    Booleans are subschemas too. Only keyword positions are followed, those of 2020-12 and of the
    earlier drafts, in the order the keywords appear.
    """
    yield path, schema
    if not isinstance(schema, dict):
        return
    for keyword, value in schema.items():
        if keyword in _ANY_DRAFT_VALUED and isinstance(value, dict | bool):
            yield from subschemas(value, (*path, keyword))
        elif keyword in _ANY_DRAFT_LISTS and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict | bool):
                    yield from subschemas(item, (*path, keyword, index))
        elif keyword in _ANY_DRAFT_MAPS and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict | bool):
                    yield from subschemas(item, (*path, keyword, name))
