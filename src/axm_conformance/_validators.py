"""Certify a JSON Schema validator: the official test suite, then differential fuzzing.

A validator is any function called as ``validator(data, schema)`` that returns a verdict in one of
three forms: a `bool`, an object with a boolean ``.valid`` attribute (such as
`axm_runtime.tool_use.ValidationResult`), or a list of errors (empty means valid). It is named by
a reference ``module:function`` (`load_validator`), and certified for the keywords it claims, a
list such as ``["type", "required", "maxLength"]`` (``None``: every keyword). Two engines, neither
of which needs pytest:

- `run_suite`: the JSON-Schema-Test-Suite for draft 2020-12, shipped with this package. A test
  group runs when every keyword its schema uses is claimed, or never constrains (annotations, the
  ``$defs`` container); groups that need ``$id``, ``$anchor`` or ``$dynamicRef`` run only when
  those are claimed, and groups that refer to a remote document (the suite's ``remotes/`` are not
  shipped) or use a custom meta-schema never run. The outcome is a table per keyword, the keyword
  being the suite file it comes from (``maxLength.json`` is ``maxLength``): cases passed, failed
  (wrong verdict) and errored (the validator raised or returned something that is not a
  verdict), and skipped (the file's cases that need what the validator does not claim).
- `differential`: Hypothesis draws small schemas that use one keyword (`schemas_using`), alone or
  under ``type``/``properties``/``items`` so that objects and arrays appear, and for each either a
  valid instance (`valid_inputs`), which the validator must accept, or an invalid one
  (`invalid_inputs` / `invalid_examples`, each confirmed invalid by jsonschema's
  ``Draft202012Validator``), which it must reject. Each kind of disagreement (accepting an invalid
  instance, rejecting a valid one, raising) is shrunk by Hypothesis to a minimal
  ``(schema, instance)`` pair.

`format_table` prints both as one table; `format_failures` and `format_disagreement` explain a
failure and end with "Reproduce with:" and Python that calls the validator on the failing pair.

The adapters `jsonschema_validate`, `jsonschema_rs_validate` and `fastjsonschema_validate` make
other implementations certifiable by reference, e.g.
``axm_conformance._validators:jsonschema_rs_validate``; the last two import their package on
first call and raise `ImportError` naming the package to install when it is absent.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final, Literal
from urllib.parse import urldefrag, urljoin

from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from axm_conformance._refs import LoadError
from axm_conformance._schema_keywords import (
    ARRAY_KEYWORDS,
    KEYWORD_TYPES,
    NUMBER_KEYWORDS,
    OBJECT_KEYWORDS,
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SCHEMA_VALUED,
    STRING_KEYWORDS,
)
from axm_conformance._strategies import Mutation, invalid_examples, invalid_inputs, valid_inputs

__all__ = [
    "FUZZED_KEYWORDS",
    "Case",
    "CaseResult",
    "DifferentialReport",
    "Disagreement",
    "KeywordRow",
    "LeftOut",
    "LoadError",
    "SuiteReport",
    "ValidatorLike",
    "differential",
    "differential_keywords",
    "fastjsonschema_validate",
    "format_disagreement",
    "format_failures",
    "format_table",
    "jsonschema_rs_validate",
    "jsonschema_validate",
    "load_keywords",
    "load_validator",
    "run_suite",
    "schemas_using",
    "suite_cases",
    "verdict",
]

ValidatorFn = Callable[[Any, Any], Any]
ValidatorLike = str | ValidatorFn
"""A validator function, or a ``module:function`` reference to one."""

Status = Literal["passed", "failed", "errored"]

DRAFT_2020_12: Final = "https://json-schema.org/draft/2020-12/schema"
_SUITE: Final = ("data", "json-schema-test-suite", "draft2020-12")
_INDENT: Final = "    "

# ---------------------------------------------------------------------------------------------
# Loading a validator and reading its verdict


def load_validator(ref: str) -> ValidatorFn:
    """The function a ``module:function`` reference names (``module:Class.method`` too).

    Raises `LoadError` with a one-line message when the module or attribute cannot be loaded or
    is not callable.
    """
    module_name, colon, attribute = ref.partition(":")
    if not colon or not module_name or not attribute:
        raise LoadError(f"{ref!r} is not a validator reference: use module:function")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise LoadError(f"{ref!r}: no module named {exc.name!r}") from None
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {_one_line(exc)}") from None
    except Exception as exc:
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {_one_line(exc)}") from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LoadError(f"{ref!r}: {module_name!r} has no attribute {attribute!r}") from None
    if not callable(obj):
        raise LoadError(f"{ref!r} is {type(obj).__name__}, not a function (data, schema)")
    function: ValidatorFn = obj
    return function


def load_keywords(spec: str) -> frozenset[str] | None:
    """The keywords a validator claims, from the text of an option or setting.

    ``all`` (or nothing) claims every keyword (None); ``module:attribute`` names an iterable of
    keyword names (``axm_runtime.tool_use:SUPPORTED_KEYWORDS``); anything else is a list of
    names separated by commas or spaces (``type,required,maxLength``).
    """
    spec = spec.strip()
    if spec in ("", "all"):
        return None
    if ":" in spec and not spec.startswith("$"):
        module_name, _, attribute = spec.partition(":")
        try:
            value: Any = importlib.import_module(module_name)
            for part in attribute.split("."):
                value = getattr(value, part)
        except Exception as exc:
            raise LoadError(f"{spec!r}: cannot load the keywords: {_one_line(exc)}") from None
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


def _resolve(validator: ValidatorLike) -> tuple[str, ValidatorFn]:
    """The reference and the function of a validator given either way."""
    if isinstance(validator, str):
        return validator, load_validator(validator)
    module = getattr(validator, "__module__", None)
    name = getattr(validator, "__qualname__", None)
    if module and name and "<" not in name:
        return f"{module}:{name}", validator
    return repr(validator), validator


def _one_line(exc: BaseException) -> str:
    lines = f"{type(exc).__name__}: {exc}".splitlines()
    return lines[0] if lines else type(exc).__name__


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def _judge(function: ValidatorFn, data: Any, schema: Any) -> bool | str:
    """The verdict, or the one-line error when the validator raised or answered nonsense.

    The validator gets copies, so that one which modifies its arguments cannot change the pair
    that is reported.
    """
    try:
        return verdict(function, copy.deepcopy(data), copy.deepcopy(schema))
    except Exception as exc:
        return _one_line(exc)


# ---------------------------------------------------------------------------------------------
# The test suite


@dataclass(frozen=True)
class Case:
    """One test of the suite: the file (its keyword), group, description, schema, data, verdict."""

    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool

    @property
    def keyword(self) -> str:
        """The row of the table this case counts in: its file name without ``.json``."""
        return self.file

    @property
    def id(self) -> str:
        return f"{self.file}: {self.group}: {self.description}"


@dataclass(frozen=True)
class LeftOut:
    """A test group not selected, with the number of its tests and what it needs."""

    file: str
    group: str
    tests: int
    needs: tuple[str, ...]


@dataclass(frozen=True)
class CaseResult:
    """How the validator did on one case; `detail` says what went wrong, if anything."""

    case: Case
    status: Status
    detail: str = ""


@dataclass(frozen=True)
class KeywordRow:
    """One row of the table: suite counts, and the differential run when there was one."""

    keyword: str
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    fuzzed: int | None = None  # examples asked of the differential run
    disagreements: int | None = None

    @property
    def ok(self) -> bool:
        return not (self.failed or self.errored or self.disagreements)


# Keywords that never make an instance invalid in 2020-12 (the meta-data, format-annotation and
# content vocabularies), and the containers of schemas that only $ref reaches.
NON_CONSTRAINING: Final = frozenset(
    {"$schema", "$comment", "title", "description", "default", "examples", "deprecated",
     "readOnly", "writeOnly", "format", "contentEncoding", "contentMediaType", "contentSchema",
     "$defs", "definitions"}
)  # fmt: skip
_REMOTE: Final = "a $ref to another document"
_CUSTOM_DIALECT: Final = "a custom $schema"


def _children(keyword: str, value: Any) -> list[Any]:
    """The subschemas in a keyword's value: the walk descends only through these, so that
    property names are never taken for keywords."""
    if keyword in SCHEMA_VALUED:
        return [value]
    if keyword in SCHEMA_LISTS and isinstance(value, list):
        return value
    if keyword in SCHEMA_MAPS and isinstance(value, dict):
        return list(value.values())
    return []  # a value such as enum's or const's is data, not schema


def _walk(schema: Any, base: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every object subschema with its base URI (changed by ``$id`` on the way down)."""
    if not isinstance(schema, dict):
        return
    identifier = schema.get("$id")
    if isinstance(identifier, str):
        base = _join(base, identifier)
    yield schema, base
    for keyword, value in schema.items():
        for child in _children(keyword, value):
            yield from _walk(child, base)


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``, fragment dropped; "" when it cannot be resolved here."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", ref):
        return urldefrag(ref).url
    if ref.startswith("#"):
        return base
    # urljoin knows hierarchical URIs only (a relative reference against a urn: is not joined).
    return urldefrag(urljoin(base, ref)).url if "://" in base else ""


def _needs(schema: Any, claimed: frozenset[str] | None) -> set[str]:
    """What `schema` needs beyond the claimed keywords: keywords, remote refs, a meta-schema."""
    if not isinstance(schema, dict):
        return set()  # a boolean schema needs nothing
    walked = list(_walk(schema, ""))
    documents = {base for _, base in walked}
    needs: set[str] = set()
    for node, base in walked:
        for keyword, value in node.items():
            if claimed is not None and keyword not in claimed | NON_CONSTRAINING:
                needs.add(keyword)
            if keyword == "$ref" and isinstance(value, str):
                target = _join(base, value)
                if not value.startswith("#") and (not target or target not in documents):
                    needs.add(_REMOTE)
            if keyword == "$schema" and str(value).rstrip("#") != DRAFT_2020_12:
                needs.add(_CUSTOM_DIALECT)
    return needs


def _suite_files() -> list[tuple[str, list[dict[str, Any]]]]:
    folder = resources.files("axm_conformance").joinpath(*_SUITE)
    files = sorted((entry for entry in folder.iterdir() if entry.name.endswith(".json")), key=str)
    return [
        (entry.name.removesuffix(".json"), json.loads(entry.read_text(encoding="utf-8")))
        for entry in files
    ]


@functools.cache
def _suite() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    return tuple((name, tuple(groups)) for name, groups in _suite_files())


def _claim(keywords: Iterable[str] | None) -> frozenset[str] | None:
    if keywords is None:
        return None
    if isinstance(keywords, str):  # one keyword given bare would claim its letters
        raise TypeError("keywords is a list of keyword names, not a string")
    return frozenset(keywords)


def _select(keywords: Iterable[str] | None) -> tuple[list[Case], list[LeftOut]]:
    claimed = _claim(keywords)
    cases: list[Case] = []
    left_out: list[LeftOut] = []
    for name, groups in _suite():
        for group in groups:
            needs = _needs(group["schema"], claimed)
            if needs:
                left_out.append(
                    LeftOut(name, group["description"], len(group["tests"]), tuple(sorted(needs)))
                )
                continue
            cases.extend(
                Case(
                    name,
                    group["description"],
                    test["description"],
                    group["schema"],
                    test["data"],
                    test["valid"],
                )
                for test in group["tests"]
            )
    return cases, left_out


def suite_cases(keywords: Iterable[str] | None = None) -> list[Case]:
    """Every case of the draft 2020-12 suite whose schema uses only the claimed keywords.

    ``keywords`` are JSON Schema keywords (``["type", "required", "$ref"]``); None claims them
    all. Annotations and ``$defs`` never need claiming. A ``$ref`` within the document needs only
    ``$ref`` (and ``$id`` or ``$anchor`` when it goes through one); a case that needs another
    document or a custom meta-schema is never selected.
    """
    return _select(keywords)[0]


@dataclass(frozen=True)
class SuiteReport:
    """The outcome of every selected suite case, and the groups left out."""

    validator: str
    keywords: frozenset[str] | None
    results: tuple[CaseResult, ...]
    left_out: tuple[LeftOut, ...]

    @property
    def ok(self) -> bool:
        """Whether every selected case passed."""
        return all(result.status == "passed" for result in self.results)

    @property
    def failures(self) -> tuple[CaseResult, ...]:
        """The failed and errored cases."""
        return tuple(result for result in self.results if result.status != "passed")

    def for_keyword(self, keyword: str) -> tuple[CaseResult, ...]:
        """The results of one row (a suite file name such as ``maxLength`` or ``ref``)."""
        return tuple(result for result in self.results if result.case.keyword == keyword)

    def rows(self) -> list[KeywordRow]:
        """One row per suite file, in file order: passed, failed, errored, skipped."""
        counts: dict[str, dict[str, int]] = {name: {} for name, _ in _suite()}
        for result in self.results:
            row = counts[result.case.keyword]
            row[result.status] = row.get(result.status, 0) + 1
        for group in self.left_out:
            row = counts[group.file]
            row["skipped"] = row.get("skipped", 0) + group.tests
        return [KeywordRow(name, **row) for name, row in counts.items()]


def run_suite(
    validator: ValidatorLike,
    keywords: Iterable[str] | None = None,
    *,
    only: Iterable[str] | None = None,
) -> SuiteReport:
    """Run the validator on every suite case its claimed keywords select.

    ``only`` restricts the run to some rows (suite file names), e.g. ``["maxLength"]`` for one
    pytest item; the groups of other files are then not counted as left out either.
    """
    ref, function = _resolve(validator)
    cases, left_out = _select(keywords)
    if only is not None:
        rows = set(_claim(only) or ())
        cases = [case for case in cases if case.keyword in rows]
        left_out = [group for group in left_out if group.file in rows]
    results = []
    for case in cases:
        answer = _judge(function, case.data, case.schema)
        if isinstance(answer, str):
            results.append(CaseResult(case, "errored", answer))
        elif answer is case.valid:
            results.append(CaseResult(case, "passed"))
        else:
            said = "accepted an invalid" if answer else "rejected a valid"
            results.append(CaseResult(case, "failed", f"{said} instance"))
    return SuiteReport(ref, _claim(keywords), tuple(results), tuple(left_out))


# ---------------------------------------------------------------------------------------------
# Schemas for the differential run: small, over one keyword, with a few companions

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
    return {keyword for node, _ in _walk(schema, "") for keyword in node}


def _leaf(allowed: frozenset[str] | None) -> _Strategy:
    leaves = [s for s in _LEAVES if allowed is None or _keywords_in(s) <= allowed]
    return st.sampled_from(leaves)


def _schema_map(keys: _Strategy, values: _Strategy) -> _Strategy:
    return st.dictionaries(keys, values, min_size=1, max_size=3)


def _core(row: str, leaf: _Strategy, allowed: Callable[[str], bool]) -> _Strategy:
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
        return _references(leaf, allowed)
    return st.fixed_dictionaries({row: simple[row]})


def _references(leaf: _Strategy, allowed: Callable[[str], bool]) -> _Strategy:
    """Local references: to a $defs entry, from a property, and recursive ones."""
    options: list[_Strategy] = [
        st.builds(lambda target: {"$defs": {"A": target}, "$ref": "#/$defs/A"}, leaf),
        # in 2020-12 the keywords beside a $ref apply too (draft 7 ignored them)
        st.builds(
            lambda target, beside: {"$defs": {"A": target}, "$ref": "#/$defs/A", **beside},
            leaf,
            leaf.filter(lambda schema: isinstance(schema, dict)),
        ),
    ]
    if allowed("properties"):
        options.append(
            st.builds(
                lambda target: {
                    "$defs": {"A": target},
                    "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/$defs/A"}},
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
                        "$defs": {
                            "node": {
                                "type": "object",
                                "properties": {"child": {"$ref": "#/$defs/node"}},
                            }
                        },
                        "$ref": "#/$defs/node",
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


def _row(keyword: str) -> str:
    return _ALIASES.get(keyword, keyword)


def differential_keywords(keywords: Iterable[str] | None = None) -> list[str]:
    """The rows (as in the suite table) that `differential` fuzzes for the claimed keywords."""
    claimed = _claim(keywords)
    return sorted(
        row for row, needed in _ROW_KEYWORDS.items() if claimed is None or needed <= claimed
    )


def schemas_using(keyword: str, keywords: Iterable[str] | None = None) -> _Strategy:
    """A strategy of small schemas that use `keyword` (a row of `FUZZED_KEYWORDS`, or ``$ref``).

    The keyword sits at the root, or under a ``type`` that makes it bite, or in an object
    property or array items, so that objects and arrays appear. Other keywords appear only when
    they are among ``keywords`` (the validator's claim; None: any), so every schema drawn is one
    the validator claims to handle. Raises `ValueError` for a keyword without a generator.
    """
    row = _row(keyword)
    claimed = _claim(keywords)
    if row not in _ROW_KEYWORDS:
        raise ValueError(
            f"no schema generator for keyword {keyword!r}; the fuzzed keywords are "
            f"{', '.join(sorted(_ROW_KEYWORDS))}"
        )

    def allowed(name: str) -> bool:
        return claimed is None or name in claimed

    leaf = _leaf(claimed)
    core = _core(row, leaf, allowed)
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


# ---------------------------------------------------------------------------------------------
# Differential fuzzing against jsonschema


@dataclass(frozen=True)
class Disagreement:
    """A minimal pair on which the validator and jsonschema disagree.

    ``expected`` is jsonschema's verdict (the instance came from `valid_inputs` when True, from a
    one-mistake mutation of kind ``mutation`` otherwise); ``got`` is the validator's, or None when
    it raised, with the error in ``error``.
    """

    validator: str
    keyword: str
    schema: Any
    instance: Any
    expected: bool
    got: bool | None
    error: str = ""
    mutation: str = ""
    detail: str = ""
    examples: int = 0
    seed: int = 0

    @property
    def what(self) -> str:
        if self.got is None:
            return f"raised {self.error}"
        return "accepted an invalid instance" if self.got else "rejected a valid instance"


@dataclass(frozen=True)
class DifferentialReport:
    """One differential run: the examples asked for, the pairs judged, and the disagreements."""

    validator: str
    keyword: str
    examples: int
    seed: int
    judged: int
    disagreements: tuple[Disagreement, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.disagreements


class _Found(AssertionError):
    def __init__(self, found: Disagreement) -> None:
        super().__init__(found.what)
        self.found = found


# One class per way of disagreeing: Hypothesis tells failures apart by exception type, so each
# way is shrunk to its own minimal pair.
class _Accepted(_Found):
    pass


class _Rejected(_Found):
    pass


class _Raised(_Found):
    pass


@functools.lru_cache(maxsize=1024)
def _reference(text: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(text))


def _text(schema: Any) -> str:
    # 1 and 1.0, or true and 1, stay apart: a cache key, not a canonical form
    return json.dumps(schema, sort_keys=True)


_GENERATION_ERRORS: Final = (ValueError,)  # Invalid/Unsupported/UnsatisfiableSchemaError


def differential(
    validator: ValidatorLike,
    keyword: str,
    examples: int = 100,
    seed: int = 0,
    keywords: Iterable[str] | None = None,
) -> DifferentialReport:
    """Fuzz the validator against jsonschema on schemas that use `keyword`.

    Draws ``examples`` (schema, instance) pairs with `schemas_using` (restricted to the claimed
    ``keywords``) and, per schema, a valid instance the validator must accept or an invalid one it
    must reject. Each way of disagreeing found (accepting, rejecting, raising) is shrunk to a
    minimal pair, one `Disagreement` each; ``judged`` counts the pairs the validator was given,
    shrinking included. The run is deterministic for a given ``seed`` and writes no Hypothesis
    database. Raises `ValueError` for a keyword `schemas_using` has no generator for.
    """
    ref, function = _resolve(validator)
    schemas = schemas_using(keyword, keywords)
    row = _row(keyword)
    counts = {"judged": 0}

    def disagreement(
        schema: Any, instance: Any, expected: bool, answer: bool | str, mutation: str, detail: str
    ) -> Disagreement:
        return Disagreement(
            validator=ref,
            keyword=row,
            schema=schema,
            instance=instance,
            expected=expected,
            got=None if isinstance(answer, str) else answer,
            error=answer if isinstance(answer, str) else "",
            mutation=mutation,
            detail=detail,
            examples=examples,
            seed=seed,
        )

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=True,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        schema = data.draw(schemas, label="schema")
        try:
            valid = valid_inputs(schema)
            sources: list[st.SearchStrategy[Mutation]] = [invalid_inputs(schema)]
            fixed = invalid_examples(schema)
        except _GENERATION_ERRORS:
            reject()  # a schema no instance can be made for, such as an empty enum intersection
        if fixed:
            sources.append(st.sampled_from(fixed))
        live = [source for source in sources if not source.is_empty]
        wants_invalid: bool = bool(live) and data.draw(st.booleans(), label="invalid")
        if wants_invalid:
            mutation = data.draw(st.one_of(live), label="mutation")
            instance, expected = mutation.value, False
            kind, detail = mutation.kind, mutation.detail
            if _reference(_text(schema)).is_valid(instance):
                reject()  # not invalid without format assertion: no verdict to compare
        else:
            instance, expected = data.draw(valid, label="instance"), True
            kind = detail = ""
        counts["judged"] += 1
        answer = _judge(function, instance, schema)
        if answer == expected:
            return
        found = disagreement(schema, instance, expected, answer, kind, detail)
        if isinstance(answer, str):
            raise _Raised(found)
        raise _Accepted(found) if answer else _Rejected(found)

    found: list[Disagreement] = []
    try:
        probe()
    except Exception as exc:
        if not _collect(exc, found):
            raise
    order = {"accepted": 0, "rejected": 1}
    found.sort(key=lambda d: order.get(d.what.split()[0], 2))
    return DifferentialReport(ref, row, examples, seed, counts["judged"], tuple(found))


def _collect(exc: BaseException, into: list[Disagreement]) -> bool:
    """Gather the disagreements of a Hypothesis failure; False if something else failed too."""
    if isinstance(exc, _Found):
        into.append(exc.found)
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_collect(inner, into) for inner in exc.exceptions)
    return False


# ---------------------------------------------------------------------------------------------
# Texts


def format_table(
    suite: SuiteReport | None = None,
    differentials: Iterable[DifferentialReport] = (),
    *,
    hide_empty: bool = True,
) -> str:
    """A Bowtie-like table, one row per keyword: suite cases, then the differential run.

    With ``hide_empty``, rows with no case run and no differential run are left out (their
    skipped cases still count in the total).
    """
    runs = {report.keyword: report for report in differentials}
    rows: dict[str, KeywordRow] = {}
    for row in suite.rows() if suite else []:
        rows[row.keyword] = row
    for name, report in runs.items():
        base = rows.get(name, KeywordRow(name))
        rows[name] = KeywordRow(
            name,
            base.passed,
            base.failed,
            base.errored,
            base.skipped,
            fuzzed=report.examples,
            disagreements=len(report.disagreements),
        )
    validator = suite.validator if suite else next(iter(runs.values())).validator if runs else ""
    header = ("keyword", "passed", "failed", "errored", "skipped", "fuzzed", "disagreements")
    total = [sum(getattr(r, name) for r in rows.values()) for name in header[1:5]]
    fuzzed = [r for r in rows.values() if r.fuzzed is not None]
    lines: list[list[str]] = [list(header)]
    for row in rows.values():
        ran = row.passed + row.failed + row.errored
        if hide_empty and not ran and row.fuzzed is None:
            continue
        mark = "" if row.ok else "  <-"
        lines.append(
            [
                row.keyword,
                *(str(n) for n in (row.passed, row.failed, row.errored, row.skipped)),
                "-" if row.fuzzed is None else str(row.fuzzed),
                ("-" if row.disagreements is None else str(row.disagreements)) + mark,
            ]
        )
    lines.append(
        [
            "total",
            *(str(n) for n in total),
            str(sum(r.fuzzed or 0 for r in fuzzed)),
            str(sum(r.disagreements or 0 for r in fuzzed)),
        ]
    )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = [f"validator: {validator}"] if validator else []
    for index, line in enumerate(lines):
        cells = [line[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(line[1:-1], widths[1:], strict=True)
        ]
        out.append("  ".join([*cells, line[-1]]).rstrip())
        if index == 0 or index == len(lines) - 2:
            out.append("-" * len(out[-1]))
    return "\n".join(out)


def _printable(text: str) -> str:
    """`text` on one line: control characters (a newline in a key) escaped as in Python."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _valid(valid: bool) -> str:
    return "valid" if valid else "invalid"


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if not text.isprintable():  # control characters would print as nothing
        text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 2000 else f"{text[:2000]}... ({len(text):,} characters)"


def _snippet(ref: str, schema: Any, instance: Any) -> list[str]:
    """Python that calls the validator on one pair, importing it directly when it can."""
    module, _, attribute = ref.partition(":")
    if attribute.isidentifier():
        lines = [f"from {module} import {attribute} as validate"]
    elif attribute:
        lines = [
            "from axm_conformance._validators import load_validator",
            f"validate = load_validator({ref!r})",
        ]
    else:
        lines = ["validate = ...  # the validator under test"]
    return [
        *lines,
        f"schema = {schema!r}",
        f"instance = {instance!r}",
        "print(validate(instance, schema))",
    ]


def format_disagreement(found: Disagreement) -> str:
    """What the validator did on the minimal pair, ending with Python that calls it on the pair."""
    expected = _valid(found.expected)
    if found.mutation:
        expected += f" ({found.mutation}: {_printable(found.detail)})"
    said = f"raised {_printable(found.error)}" if found.got is None else _valid(found.got)
    lines = [
        f"{found.validator}: {found.keyword}: {found.what}",
        f"  schema:     {_json(found.schema)}",
        f"  instance:   {_json(found.instance)}",
        f"  jsonschema: {expected}",
        f"  validator:  {said}",
        f"  found by:   differential({found.validator!r}, {found.keyword!r}, "
        f"examples={found.examples}, seed={found.seed})",
        "Reproduce with:",
    ]
    lines += [_INDENT + line for line in _snippet(found.validator, found.schema, found.instance)]
    return "\n".join(lines)


def format_failures(report: SuiteReport, keyword: str | None = None, limit: int = 10) -> str:
    """The suite cases a validator got wrong (of one row, or all), then how to reproduce one."""
    failures = [r for r in report.failures if keyword is None or r.case.keyword == keyword]
    if not failures:
        return f"{report.validator}: every selected case passed"
    lines = [f"{report.validator}: {len(failures)} suite case(s) wrong"]
    for result in failures[:limit]:
        case = result.case
        lines += [
            f"- {case.id}: {result.status}, {result.detail}",
            f"    schema: {_json(case.schema)}",
            f"    data:   {_json(case.data)} (the suite says {_valid(case.valid)})",
        ]
    if len(failures) > limit:
        lines.append(f"... and {len(failures) - limit} more")
    first = failures[0].case
    lines.append("Reproduce with:")
    lines += [_INDENT + line for line in _snippet(report.validator, first.schema, first.data)]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Adapters for other implementations


def jsonschema_validate(data: Any, schema: Any) -> bool:
    """jsonschema's ``Draft202012Validator``, without format assertion: the reference verdict."""
    return bool(_reference(_text(schema)).is_valid(data))


def _optional(module: str, distribution: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{module} is not installed: pip install {distribution} to certify it"
        ) from None


@functools.lru_cache(maxsize=1024)
def _rs_validator(text: str) -> Any:
    module = _optional("jsonschema_rs", "jsonschema-rs")
    return module.Draft202012Validator(json.loads(text))


def jsonschema_rs_validate(data: Any, schema: Any) -> bool:
    """jsonschema-rs (Rust), draft 2020-12, format not asserted: ``is_valid`` of the schema.

    Compiled validators are cached by schema text. Raises `ImportError` when jsonschema-rs is
    absent, and jsonschema-rs's own error for a schema it refuses.
    """
    return bool(_rs_validator(_text(schema)).is_valid(data))


@functools.lru_cache(maxsize=1024)
def _fast_validator(text: str) -> Callable[[Any], Any]:
    module = _optional("fastjsonschema", "fastjsonschema")
    # use_default=False: fastjsonschema would otherwise write defaults into the data it checks
    compiled: Callable[[Any], Any] = module.compile(
        json.loads(text), use_default=False, use_formats=False
    )
    return compiled


def fastjsonschema_validate(data: Any, schema: Any) -> bool:
    """fastjsonschema, format not asserted: False when it raises ``JsonSchemaValueException``.

    fastjsonschema implements drafts 4, 6 and 7 only; a 2020-12 schema is read as its
    ``$schema`` says, or as draft 7, so keywords new in 2019-09/2020-12 are ignored. Raises
    `ImportError` when fastjsonschema is absent, and its ``JsonSchemaDefinitionException`` for
    a schema it cannot compile.
    """
    check = _fast_validator(_text(schema))
    module = _optional("fastjsonschema", "fastjsonschema")
    try:
        check(data)
    except module.JsonSchemaValueException:
        return False
    return True
