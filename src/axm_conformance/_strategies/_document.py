"""A schema compiled: checked, its references resolved, each location split into alternatives.

A `Document` answers, for the subschemas that apply at one location, which alternatives that
location allows and what each allows (`Facts`), and whether a value is valid against any of its
subschemas. Everything made from a schema (valid inputs, boundary examples, mutations) reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Final
from urllib.parse import quote

from hypothesis import strategies as st
from jsonschema import Draft202012Validator, SchemaError
from referencing import Registry
from referencing.exceptions import NoSuchAnchor, PointerToNowhere, Unresolvable
from referencing.jsonschema import DRAFT202012

from axm_conformance._schema_keywords import (
    ARRAY_KEYWORDS,
    NUMBER_KEYWORDS,
    OBJECT_KEYWORDS,
    STRING_KEYWORDS,
)
from axm_conformance._strategies._json import KINDS, TYPE_KINDS, Check, canonical, escape, fragment
from axm_conformance._strategies._locations import Alt, Bound, Empty, Facts, Node
from axm_conformance.errors import AxmConformanceError

__all__ = [
    "CUSTOM_FORMATS",
    "FORMAT_CHECKER",
    "FORMAT_EXAMPLES",
    "Document",
    "InvalidSchemaError",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
]


class InvalidSchemaError(AxmConformanceError, ValueError):
    """The schema is not a valid JSON Schema 2020-12 document."""


class UnsupportedSchemaError(AxmConformanceError, ValueError):
    """The schema is valid but uses a keyword whose inputs this module cannot generate correctly."""


class UnsatisfiableSchemaError(AxmConformanceError, ValueError):
    """No JSON value satisfies the schema."""


FORMAT_CHECKER: Final = Draft202012Validator.FORMAT_CHECKER
# Formats generated to conform: hypothesis-jsonschema has strategies for all but the two custom
# ones. A format jsonschema can check but that is missing here is rejected as unsupported; any
# other format is an annotation and ignored. The examples seed boundary values.
FORMAT_EXAMPLES: Final = {
    "date": "2000-01-01",
    "date-time": "2000-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uri-template": "https://example.com/{id}",
    "json-pointer": "/a",
    "relative-json-pointer": "0",
    "regex": "^a$",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "duration": "P1D",
}
CUSTOM_FORMATS: Final[dict[str, st.SearchStrategy[str]]] = {
    "uuid": st.uuids().map(str),
    "duration": st.builds("P{}D".format, st.integers(0, 10_000)),
}

_ROOT_URI: Final = "urn:axm-conformance:input-schema"
_DIALECTS: Final = frozenset(
    f"json-schema.org/{name}"
    for name in (
        "draft/2020-12/schema",
        "draft/2019-09/schema",
        "draft-07/schema",
        "draft-06/schema",
        "draft-04/schema",
    )
)
_UNSUPPORTED: Final[dict[str, str]] = {
    "unevaluatedProperties": "it depends on what every other subschema evaluated",
    "unevaluatedItems": "it depends on what every other subschema evaluated",
    "$dynamicRef": "dynamic references need the dynamic scope",
    "$recursiveRef": "draft 2019-09 recursive references need the dynamic scope",
    "dependencies": "draft 7 keyword, ignored by 2020-12: use dependentRequired/dependentSchemas",
}
# Keywords that only restrict values of one kind, and keywords that may restrict any kind. Formats
# are asserted here; minContains and maxContains restrict nothing without contains.
_KIND_CONSTRAINTS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({*STRING_KEYWORDS, "format"}),
    "integer": frozenset(NUMBER_KEYWORDS),
    "number": frozenset(NUMBER_KEYWORDS),
    "array": frozenset(ARRAY_KEYWORDS) - {"minContains", "maxContains"},
    "object": frozenset(OBJECT_KEYWORDS),
}
_ANY_KIND_CONSTRAINTS: Final = frozenset(
    {"enum", "const", "$ref", "$dynamicRef", "$recursiveRef", "allOf", "anyOf", "oneOf", "not",
     "if", "unevaluatedItems", "unevaluatedProperties"}
)  # fmt: skip
# Keywords that restrict values; a location with none of them (and no filter) accepts any JSON.
# Not dependentSchemas: the alternatives it splits a location into carry what it restricts.
_CONSTRAINTS: Final = frozenset({"type", "enum", "const"}).union(
    *(keywords - {"dependentSchemas"} for keywords in _KIND_CONSTRAINTS.values())
)

_MAX_RECURSION: Final = 3  # times one $ref target may be re-entered on a path
_MAX_ALTERNATIVES: Final = 64  # alternatives one location may split into

_Option = tuple[tuple[Node, ...], tuple[Check, ...]]  # subschemas to add, filters to apply


def _free_kinds(schema: Any) -> frozenset[str]:
    """Kinds of which `schema` accepts every value, judged from its keywords alone."""
    if schema is True:
        return frozenset(KINDS)
    if not isinstance(schema, dict) or _ANY_KIND_CONSTRAINTS & schema.keys():
        return frozenset()
    kinds = frozenset(KINDS)
    if "type" in schema:
        names = [schema["type"]] if isinstance(schema["type"], str) else schema["type"]
        kinds = frozenset().union(*(TYPE_KINDS[name] for name in names))
    return frozenset(k for k in kinds if not _KIND_CONSTRAINTS.get(k, frozenset()) & schema.keys())


def _excluding(kinds: frozenset[str], pointer: str) -> tuple[Node, ...]:
    """A made-up subschema allowing every type but `kinds` (a filter rejects those anyway)."""
    if not kinds:
        return ()
    names = [name for name in ("null", "boolean", "string", "array", "object") if name not in kinds]
    if "number" not in kinds:
        names.append("number")
    elif "integer" not in kinds:
        names.append("integer")
    return (Node({"type": names}, f"{pointer}!types", None),)


def _dict_pointers(value: Any, pointer: str = "") -> Iterator[tuple[int, str]]:
    """`id` and pointer of every JSON object in a document, to name where a $ref lands."""
    if isinstance(value, dict):
        yield id(value), pointer
        for key, item in value.items():
            yield from _dict_pointers(item, f"{pointer}/{escape(key)}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _dict_pointers(item, f"{pointer}/{index}")


def _least(old: int | None, new: int | None) -> int | None:
    return new if old is None else old if new is None else min(old, new)


def _tighter(old: Bound | None, new: Bound, *, lower: bool) -> Bound:
    """The stricter of two lower (or two upper) bounds."""
    if old is None:
        return new
    if new.value != old.value:
        return new if (new.value > old.value) == lower else old
    return old if old.exclusive else new


class Document:
    """One schema compiled: its validators, its references, and the alternatives at each location,
    built once and cached."""

    def __init__(self, schema: Any) -> None:
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as err:
            where = fragment("".join(f"/{escape(key)}" for key in err.absolute_path))
            raise InvalidSchemaError(
                f"not a valid JSON Schema 2020-12 document: {err.message} (at {where})"
            ) from None
        self.validator = Draft202012Validator(schema, format_checker=FORMAT_CHECKER)
        self._uri = _ROOT_URI
        resolver = None
        if isinstance(schema, dict):
            resource = DRAFT202012.create_resource(schema)
            self._uri = resource.id() or _ROOT_URI
            self._registry: Registry[Any] = Registry().with_resource(self._uri, resource).crawl()
            resolver = self._registry.resolver(self._uri)
        self.root = Node(schema, "", resolver)
        self._pointers = dict(_dict_pointers(schema))
        self.stack: list[str] = []  # $ref targets being built, for the recursion bound
        self._expansions: dict[tuple[Any, ...], tuple[list[Facts | Empty], tuple[str, ...]]] = {}
        self._validators: dict[str, Any] = {}

    # --- validation of subschemas

    def is_valid(self, node: Node, value: Any) -> bool:
        """Whether `value` is valid against the subschema `node`."""
        if isinstance(node.schema, bool):
            return node.schema
        validator = self._validators.get(node.pointer)
        if validator is None:
            # A document node is validated through a $ref to its absolute URI, so that its own
            # references resolve against the right base; made-up nodes have none.
            schema = (
                node.schema
                if node.resolver is None
                else {"$ref": f"{self._uri}#{quote(node.pointer, safe='/~')}"}
            )
            registry = {} if node.resolver is None else {"registry": self._registry}
            validator = Draft202012Validator(schema, format_checker=FORMAT_CHECKER, **registry)
            self._validators[node.pointer] = validator
        return bool(validator.is_valid(value))

    def accepts(self, facts: Facts, value: Any) -> bool:
        """Whether `value` satisfies the alternative: all its subschemas and all its filters."""
        alt = facts.alt
        return all(self.is_valid(n, value) for n in alt.nodes) and all(c(value) for c in alt.checks)

    def matching(self, alts: list[Facts], value: Any) -> Facts:
        """The first alternative that accepts `value`, else the first one."""
        return next((f for f in alts if self.accepts(f, value)), alts[0])

    def negation(self, node: Node) -> Check:
        """A filter that keeps the values `node` rejects."""
        return lambda value: not self.is_valid(node, value)

    # --- reading the schema

    def _check_supported(self, node: Node) -> None:
        schema = node.schema
        for keyword, reason in _UNSUPPORTED.items():
            if keyword in schema and schema[keyword] not in (True, {}):
                raise UnsupportedSchemaError(
                    f"unsupported keyword {keyword!r} at {fragment(node.pointer)}: {reason}"
                )
        dialect = schema.get("$schema")
        if dialect is not None and dialect.rstrip("#").split("://")[-1] not in _DIALECTS:
            raise UnsupportedSchemaError(
                f"unsupported keyword '$schema' at {fragment(node.pointer)}: custom dialect "
                f"{dialect!r}; only the published JSON Schema drafts are read (as 2020-12)"
            )
        fmt = schema.get("format")
        if fmt in FORMAT_CHECKER.checkers and fmt not in FORMAT_EXAMPLES:
            raise UnsupportedSchemaError(
                f"unsupported keyword 'format' at {fragment(node.pointer)}: no generator for "
                f"format {fmt!r}, which the validator checks"
            )

    def _deref(self, node: Node) -> Node:
        ref = node.schema["$ref"]
        assert node.resolver is not None  # made-up nodes hold no $ref
        try:
            resolved = node.resolver.lookup(ref)
        except (PointerToNowhere, NoSuchAnchor):
            raise InvalidSchemaError(
                f"$ref {ref!r} at {fragment(node.pointer)} points to nothing in the schema"
            ) from None
        except Unresolvable:
            raise UnsupportedSchemaError(
                f"unsupported keyword '$ref' at {fragment(node.pointer)}: {ref!r} is a remote "
                "reference; only references within the schema are followed"
            ) from None
        contents = resolved.contents
        pointer = self._pointers.get(id(contents)) if isinstance(contents, dict) else None
        if pointer is None:
            pointer = ref[1:] if ref.startswith("#/") else f"!{ref}"
        return Node(contents, pointer, resolved.resolver)

    def _splits(self, node: Node) -> Iterator[list[_Option]]:
        """Each way the node splits its location: a list of (extra subschemas, filters)."""
        schema = node.schema
        if "anyOf" in schema:
            yield [((node.child("anyOf", i),), ()) for i in range(len(schema["anyOf"]))]
        if "oneOf" in schema:
            branches = [node.child("oneOf", i) for i in range(len(schema["oneOf"]))]

            def exactly_one(value: Any) -> bool:
                return sum(self.is_valid(branch, value) for branch in branches) == 1

            options: list[_Option] = []
            for branch in branches:
                # a kind another branch accepts wholesale can never satisfy exactly one branch
                others = [_free_kinds(b.schema) for b in branches if b is not branch]
                excluded = _excluding(frozenset().union(*others), branch.pointer)
                options.append(((branch, *excluded), (exactly_one,)))
            yield options
        if "if" in schema and ("then" in schema or "else" in schema):
            condition = node.child("if")
            then = (node.child("then"),) if "then" in schema else ()
            otherwise = (node.child("else"),) if "else" in schema else ()
            yield [((condition, *then), ()), (otherwise, (self.negation(condition),))]
        for name in schema.get("dependentSchemas", {}):
            where = f"{node.pointer}/dependentSchemas/{escape(name)}"
            absent = Node({"properties": {name: False}}, f"{where}!absent", None)
            present = Node({"required": [name]}, f"{where}!present", None)
            yield [((absent,), ()), ((present, node.child("dependentSchemas", name)), ())]

    def _expand(self, conj: tuple[Node, ...]) -> tuple[list[Alt | Empty], tuple[str, ...]]:
        """Split a conjunction into alternatives of plain subschemas; also the $refs entered."""
        results: list[Alt | Empty] = []
        entered: dict[str, None] = {}

        # Each pending node comes with the subschemas it sits in at the same location, so that a
        # $ref back into one of them (a loop no value ever ends) is told from a mere repeat.
        def walk(
            pending: tuple[tuple[Node, frozenset[str]], ...],
            plain: tuple[Node, ...],
            checks: tuple[Check, ...],
            seen: frozenset[str],
        ) -> None:
            if len(results) > _MAX_ALTERNATIVES:
                raise UnsupportedSchemaError(
                    f"unsupported combination at {fragment(conj[0].pointer)}: more than "
                    f"{_MAX_ALTERNATIVES} alternatives (anyOf/oneOf/if/dependentSchemas)"
                )
            if not pending:
                results.append(Alt(plain, checks))
                return
            (node, within), rest = pending[0], pending[1:]
            schema = node.schema
            if schema is True or node.pointer in seen:  # a schema and itself is that schema
                walk(rest, plain, checks, seen)
                return
            if schema is False:
                results.append(Empty(f"false schema at {fragment(node.pointer)}"))
                return
            self._check_supported(node)
            seen |= {node.pointer}
            extra = [node.child("allOf", i) for i in range(len(schema.get("allOf", ())))]
            if "$ref" in schema:
                target = self._deref(node)
                if target.pointer in within:
                    raise InvalidSchemaError(
                        f"$ref {schema['$ref']!r} at {fragment(node.pointer)} loops back to "
                        f"{fragment(target.pointer)} without reaching any value"
                    )
                if self.stack.count(target.pointer) >= _MAX_RECURSION:
                    results.append(
                        Empty(f"recursion deeper than {_MAX_RECURSION} at {schema['$ref']}")
                    )
                    return
                entered[target.pointer] = None
                extra.append(target)
            if "not" in schema:
                negated = node.child("not")
                extra += _excluding(_free_kinds(negated.schema), negated.pointer)
                checks += (self.negation(negated),)
            branches: list[_Option] = [((), ())]
            for split in self._splits(node):
                branches = [(b + n, c + k) for b, c in branches for n, k in split]
            for nodes, filters in branches:
                inner = tuple((n, within | {n.pointer}) for n in (*extra, *nodes))
                walk(rest + inner, (*plain, node), checks + filters, seen)

        walk(tuple((n, frozenset({n.pointer})) for n in conj), (), (), frozenset())
        return results, tuple(entered)

    def alternatives(self, conj: tuple[Node, ...]) -> tuple[list[Facts | Empty], tuple[str, ...]]:
        """The alternatives at a location, keywords combined, given the $refs being built."""
        key = (tuple(n.pointer for n in conj), tuple(self.stack))
        cached = self._expansions.get(key)
        if cached is None:
            alts, entered = self._expand(conj)
            where = conj[0].pointer if conj else ""
            facts = [a if isinstance(a, Empty) else self._facts(where, a) for a in alts]
            cached = self._expansions[key] = (facts, entered)
        return cached

    def live(self, conj: tuple[Node, ...]) -> tuple[list[Facts], tuple[str, ...]]:
        """The alternatives at a location that are not empty, and the $refs entered."""
        alts, entered = self.alternatives(conj)
        return [f for f in alts if isinstance(f, Facts)], entered

    def _facts(self, where: str, alt: Alt) -> Facts | Empty:
        kinds = frozenset(KINDS)
        enum: list[Any] | None = None
        enum_keyword = "enum"
        lower = upper = None
        multiples: list[int | float] = []
        min_length = min_items = min_props = 0
        max_length: int | None = None
        max_items: int | None = None
        max_props: int | None = None
        patterns: list[str] = []
        formats: list[str] = []
        required: list[str] = []
        dependent: dict[str, list[str]] = {}
        for node in alt.nodes:
            s = node.schema
            if "type" in s:
                names = [s["type"]] if isinstance(s["type"], str) else s["type"]
                kinds &= frozenset().union(*(TYPE_KINDS[name] for name in names))
            for keyword, listed in (("enum", s.get("enum")), ("const", [s.get("const")])):
                if keyword in s:
                    texts = {canonical(value) for value in listed}
                    enum = [v for v in (listed if enum is None else enum) if canonical(v) in texts]
                    if keyword == "const":
                        enum_keyword = keyword
            for keyword, exclusive in (("minimum", False), ("exclusiveMinimum", True)):
                if keyword in s:
                    lower = _tighter(lower, Bound(s[keyword], exclusive), lower=True)
            for keyword, exclusive in (("maximum", False), ("exclusiveMaximum", True)):
                if keyword in s:
                    upper = _tighter(upper, Bound(s[keyword], exclusive), lower=False)
            if "multipleOf" in s:
                multiples.append(s["multipleOf"])
            if "pattern" in s:
                patterns.append(s["pattern"])
            if s.get("format") in FORMAT_EXAMPLES:
                formats.append(s["format"])
            min_length = max(min_length, s.get("minLength", 0))
            min_items = max(min_items, s.get("minItems", 0))
            min_props = max(min_props, s.get("minProperties", 0))
            max_length = _least(max_length, s.get("maxLength"))
            max_items = _least(max_items, s.get("maxItems"))
            max_props = _least(max_props, s.get("maxProperties"))
            required.extend(s.get("required", ()))
            for name, needs in s.get("dependentRequired", {}).items():
                dependent.setdefault(name, []).extend(needs)
        facts = Facts(
            pointer=where,
            alt=alt,
            kinds=kinds,
            enum=None,
            enum_keyword=enum_keyword,
            lower=lower,
            upper=upper,
            multiples=tuple(multiples),
            min_length=min_length,
            max_length=max_length,
            patterns=tuple(patterns),
            formats=tuple(formats),
            min_items=min_items,
            max_items=max_items,
            unique=any(n.schema.get("uniqueItems") is True for n in alt.nodes),
            min_props=min_props,
            max_props=max_props,
            required=tuple(dict.fromkeys(required)),
            dependent={name: tuple(dict.fromkeys(needs)) for name, needs in dependent.items()},
            constrained=bool(alt.checks) or any(_CONSTRAINTS & n.schema.keys() for n in alt.nodes),
        )
        if enum is None:
            return facts
        valid = {canonical(v): v for v in enum if self.accepts(facts, v)}
        if not valid:
            return Empty(f"no value listed by {enum_keyword} at {fragment(where)} fits there")
        return replace(facts, enum=tuple(valid.values()))

    # --- recursion bookkeeping

    @contextmanager
    def entering(self, entered: tuple[str, ...]) -> Iterator[None]:
        """While inside, the $ref targets of a location count as being built."""
        self.stack.extend(entered)
        try:
            yield
        finally:
            del self.stack[len(self.stack) - len(entered) :]
