"""Draw small schemas for the differential run: over one keyword, with a few companions.

`schemas_using` places the keyword alone or under ``type``/``properties``/``items``, so that
objects and arrays appear, and uses other keywords only when the validator claims them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from hypothesis import strategies as st

from axm_conformance._schema_keywords import (
    ARRAY_KEYWORDS,
    KEYWORD_TYPES,
    NUMBER_KEYWORDS,
    OBJECT_KEYWORDS,
    STRING_KEYWORDS,
)
from axm_conformance._validation._load import as_claim
from axm_conformance._validation._oracle import draft_keywords
from axm_conformance._validation._suite import walk

_Strategy = st.SearchStrategy[Any]
_Schema = dict[str, Any]

_TYPES: Final = ("integer", "number", "string", "boolean", "null", "array", "object")
_NAMES: Final = ("a", "b", "c")
# Patterns of the common subset of ECMA-262 and Python regular expressions; "$" and the
# non-ASCII literal reach the places where implementations are known to differ.
_PATTERNS: Final = ("^a", "b$", "^[a-c]+$", "[0-9]", "^$", "^[a-z]{2,3}$", "x|y", "é")
_KEY_PATTERNS: Final = ("^a", "b", "^[0-9]+$", "é")
_DIVISORS: Final = (2, 3, 0.5, 0.25, 1.5, 0.1, 7)
_BOUNDS: Final[_Strategy] = st.integers(-5, 5) | st.sampled_from([0.5, -1.5, 2.25, 1e3])
_COUNTS: Final[_Strategy] = st.integers(0, 4)
_SMALL_JSON: Final[_Strategy] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([0.5, 1.0, -2.5])
    | st.sampled_from(["", "a", "b", "é"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(_NAMES), inner),
    max_leaves=3,
)
NEAR_VALUES: Final[tuple[Any, ...]] = (None, True, 0, 0.5, "", "é", "b\n", [], {})
"""A value of each JSON type, near those the schemas use (a final newline for ``$``)."""
NEAR_NAMES: Final = ("x", "0", "0\n")
"""Property names near those the schemas use, none of which `properties` declares."""


_FEW_VALUES: Final = (
    {"enum": [0, 1, False, True]},
    {"enum": [[1], [True], {"a": 0}, {"a": False}, 1.5]},
)
# Leaf subschemas placed under applicators, simplest first (Hypothesis shrinks towards them).
_LEAVES: Final[tuple[_Schema | bool, ...]] = (
    False,
    True,
    {"type": "integer"},
    {"type": "string"},
    {"type": "null"},
    {"type": "array"},
    {"type": "object"},
    {"type": "integer", "minimum": 0},
    {"type": "string", "maxLength": 2},
    {"type": "string", "minLength": 1},
    {"enum": [1, "a", None]},
    {"const": 1},
    {"minimum": 2},
    {"type": "array", "items": {"type": "integer"}},
    {"type": "object", "required": ["a"]},
)


def _keywords_in(schema: Any) -> set[str]:
    return {keyword for node, _ in walk(schema, "") for keyword in node}


def _leaf(allowed: Callable[[str], bool], booleans: bool) -> _Strategy:
    leaves = [
        s
        for s in _LEAVES
        if all(map(allowed, _keywords_in(s))) and (booleans or isinstance(s, dict))
    ]
    return st.sampled_from(leaves)


def _schema_map(keys: _Strategy, values: _Strategy) -> _Strategy:
    return st.dictionaries(keys, values, min_size=1, max_size=3)


def _core(row: str, leaf: _Strategy, allowed: Callable[[str], bool], defs: str) -> _Strategy:
    """Schemas whose root uses the keyword of `row`, with the companions it works with."""
    names = st.sampled_from(_NAMES)
    simple: dict[str, _Strategy] = {
        "type": st.sampled_from(_TYPES)
        | st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True),
        "enum": st.lists(_SMALL_JSON, min_size=1, max_size=4),
        "const": _SMALL_JSON,
        **dict.fromkeys(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], _BOUNDS),
        "multipleOf": st.sampled_from(_DIVISORS),
        **dict.fromkeys(
            ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"],
            _COUNTS,
        ),
        "pattern": st.sampled_from(_PATTERNS),
        "uniqueItems": st.sampled_from([True, False]),
        "prefixItems": st.lists(leaf, min_size=1, max_size=3),
        "items": leaf,
        "contains": leaf,
        "required": st.lists(names, min_size=1, max_size=3, unique=True),
        "dependentRequired": _schema_map(names, st.lists(names, max_size=2, unique=True)),
        "dependentSchemas": _schema_map(names, leaf),
        "properties": _schema_map(names, leaf),
        "patternProperties": _schema_map(st.sampled_from(_KEY_PATTERNS), leaf),
        "propertyNames": st.sampled_from(
            [{"maxLength": 1}, {"pattern": "^[ab]"}, {"enum": ["a", "b"]}, {"minLength": 2}]
        ),
        "allOf": st.lists(leaf, min_size=1, max_size=3),
        "anyOf": st.lists(leaf, min_size=1, max_size=3),
        "oneOf": st.lists(leaf, min_size=1, max_size=3),
        "not": leaf,
    }
    if row in ("dependentRequired", "dependentSchemas") and allowed("properties"):
        # declared names, so that generated objects hold the keys the dependencies are about
        declared = st.fixed_dictionaries(dict.fromkeys(_NAMES, leaf))
        return st.fixed_dictionaries({row: simple[row]}, optional={"properties": declared})
    if row == "uniqueItems" and allowed("items") and allowed("enum"):
        # items drawn from few values, among them values Python calls equal and JSON does not
        return st.fixed_dictionaries(
            {row: simple[row]}, optional={"items": st.sampled_from(_FEW_VALUES)}
        )
    if row in ("minContains", "maxContains"):
        return st.fixed_dictionaries({"contains": leaf, row: _COUNTS})
    if row == "additionalProperties":
        # which properties are additional depends on these two
        companions = ("properties", "patternProperties")
        optional = {name: simple[name] for name in companions if allowed(name)}
        return st.fixed_dictionaries({row: leaf}, optional=optional)
    if row == "items" and allowed("prefixItems"):
        return st.fixed_dictionaries({row: leaf}, optional={"prefixItems": simple["prefixItems"]})
    if row == "if-then-else":
        return st.fixed_dictionaries({"if": leaf}, optional={"then": leaf, "else": leaf})
    if row == "ref":
        return _references(leaf, allowed, defs)
    return st.fixed_dictionaries({row: simple[row]})


def _references(leaf: _Strategy, allowed: Callable[[str], bool], defs: str) -> _Strategy:
    """Local references: to an entry of ``defs`` (``$defs`` or ``definitions``), from a
    property, and recursive ones."""
    options: list[_Strategy] = [
        st.builds(lambda target: {defs: {"A": target}, "$ref": f"#/{defs}/A"}, leaf),
        # from 2019-09 on the keywords beside a $ref apply too (draft 7 ignored them)
        st.builds(
            lambda target, beside: {defs: {"A": target}, "$ref": f"#/{defs}/A", **beside},
            leaf,
            leaf.filter(lambda schema: isinstance(schema, dict)),
        ),
    ]
    if allowed("properties"):
        options.append(
            st.builds(
                lambda target: {
                    defs: {"A": target},
                    "properties": {"a": {"$ref": f"#/{defs}/A"}, "b": {"$ref": f"#/{defs}/A"}},
                },
                leaf,
            )
        )
        # trees: recursion through a property, ended by the instance
        if allowed("const"):
            options.append(st.just({"properties": {"a": {"const": 1}, "next": {"$ref": "#"}}}))
        if allowed("type"):
            options.append(
                st.just(
                    {
                        defs: {
                            "node": {
                                "type": "object",
                                "properties": {"child": {"$ref": f"#/{defs}/node"}},
                            }
                        },
                        "$ref": f"#/{defs}/node",
                    }
                )
            )
    return st.one_of(options)


_ONE_KEYWORD_ROWS: Final = [
    *("type", "enum", "const", "allOf", "anyOf", "oneOf", "not"),
    *NUMBER_KEYWORDS,
    *STRING_KEYWORDS,
    *ARRAY_KEYWORDS,
    *OBJECT_KEYWORDS,
]
_ROW_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    **{name: frozenset({name}) for name in _ONE_KEYWORD_ROWS},
    "minContains": frozenset({"contains", "minContains"}),
    "maxContains": frozenset({"contains", "maxContains"}),
    "if-then-else": frozenset({"if", "then", "else"}),
    "ref": frozenset({"$ref"}),
}
FUZZED_KEYWORDS: Final = frozenset(_ROW_KEYWORDS)
"""The rows `differential` can fuzz: keywords, plus ``ref`` and ``if-then-else`` as in the suite."""

# Keywords named differently from their suite file.
_ALIASES: Final = {
    "$ref": "ref",
    "if": "if-then-else",
    "then": "if-then-else",
    "else": "if-then-else",
}


def row_of(keyword: str) -> str:
    """The row of the table a keyword counts in: its suite file (``$ref`` counts in ``ref``)."""
    return _ALIASES.get(keyword, keyword)


def differential_keywords(
    keywords: Iterable[str] | None = None, draft: str = "2020-12"
) -> list[str]:
    """The rows (as in the suite table) that `differential` fuzzes for the claimed keywords of
    the draft."""
    claimed = as_claim(keywords)
    return sorted(
        row
        for row, needed in _ROW_KEYWORDS.items()
        if (claimed is None or needed <= claimed) and needed <= draft_keywords(draft)
    )


def schemas_using(
    keyword: str, keywords: Iterable[str] | None = None, draft: str = "2020-12"
) -> _Strategy:
    """A strategy of small schemas that use `keyword` (a row of `FUZZED_KEYWORDS`, or ``$ref``).

    The keyword sits at the root, or under a ``type`` that makes it bite, or in an object
    property or array items, so that objects and arrays appear. Other keywords appear only when
    they are among ``keywords`` (the validator's claim; None: any), so every schema drawn is one
    the validator claims to handle. Raises `ValueError` for a keyword without a generator.
    """
    row = row_of(keyword)
    claimed = as_claim(keywords)
    if row not in _ROW_KEYWORDS:
        raise ValueError(
            f"no schema generator for keyword {keyword!r}; the fuzzed keywords are "
            f"{', '.join(sorted(_ROW_KEYWORDS))}"
        )

    in_draft = draft_keywords(draft)

    def allowed(name: str) -> bool:
        return (claimed is None or name in claimed) and name in in_draft

    leaf = _leaf(allowed, booleans=draft != "4")  # draft 4 has no boolean schemas
    core = _core(row, leaf, allowed, "$defs" if "$defs" in in_draft else "definitions")
    if row == "ref":
        return core  # its "#/$defs/..." pointers hold at the root only
    options: list[_Strategy] = [core]
    kinds = KEYWORD_TYPES.get(row)  # for the "type" the schema may add
    if kinds and allowed("type"):
        # typed: most mutations need a value of the kind the keyword constrains
        core = st.builds(lambda s, t: {"type": t, **s}, core, st.sampled_from(kinds))
        options.append(core)
    if allowed("properties"):
        required = allowed("required")
        options.append(
            st.builds(
                lambda s: {
                    **({"type": "object"} if allowed("type") else {}),
                    "properties": {"a": s},
                    **({"required": ["a"]} if required else {}),
                },
                core,
            )
        )
    if allowed("items"):
        options.append(
            st.builds(
                lambda s: {**({"type": "array"} if allowed("type") else {}), "items": s}, core
            )
        )
    return st.one_of(options)
