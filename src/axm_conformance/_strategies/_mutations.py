"""Invalid inputs: valid inputs broken at exactly one location in one known way.

Each `Mutation` has a stable `kind`, and is kept only once validation confirms that it fails on
its path and for a keyword its kind stands for.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Final

from hypothesis import assume
from hypothesis import strategies as st

from axm_conformance._strategies._boundaries import Boundaries
from axm_conformance._strategies._document import Document
from axm_conformance._strategies._hints import Hints
from axm_conformance._strategies._json import (
    KINDS,
    MISSING,
    Path,
    canonical,
    kind_of,
    place,
    replaced,
    short,
)
from axm_conformance._strategies._locations import Facts, Node, as_kind, closure
from axm_conformance._strategies._valid import ValidInputs

__all__ = ["MUTATION_KINDS", "Mutation", "Mutations"]


@dataclass(frozen=True)
class Mutation:
    """An input that breaks the schema in exactly one known way."""

    value: Any
    kind: str
    path: tuple[str | int, ...]
    detail: str
    source: str = "boundary"  # of the valid input it was made from, see `SOURCES`


# Mutation kinds and the keywords whose failure each one stands for. A mutation is kept only if
# validation fails on its path and for one of these keywords; the type kinds also accept `enum`
# and `const`, which fail with the type whenever they are present. invalid_inputs draws kinds
# in this order of preference (Hypothesis favours the first), the narrowest mistakes first.
_TYPE_KEYWORDS: Final = frozenset({"type", "enum", "const"})
_KIND_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    "below-minimum": frozenset({"minimum", "exclusiveMinimum"}),
    "above-maximum": frozenset({"maximum", "exclusiveMaximum"}),
    "not-multiple-of": frozenset({"multipleOf"}),
    "too-short": frozenset({"minLength"}),
    "too-long": frozenset({"maxLength"}),
    "pattern-mismatch": frozenset({"pattern"}),
    "too-few-items": frozenset({"minItems"}),
    "too-many-items": frozenset({"maxItems"}),
    "duplicate-items": frozenset({"uniqueItems"}),
    "not-in-enum": frozenset({"enum"}),
    "const-mismatch": frozenset({"const"}),
    "too-few-properties": frozenset({"minProperties"}),
    "too-many-properties": frozenset({"maxProperties"}),
    "missing-dependent": frozenset({"dependentRequired"}),  # a property another one requires
    "extra-property": frozenset({"additionalProperties"}),  # an unknown property added
    "missing-required": frozenset({"required"}),  # a required property removed
    "item-wrong-type": _TYPE_KEYWORDS,  # an array item of a type the items do not allow
    "wrong-type": _TYPE_KEYWORDS,  # a value of a type the location does not allow
    "null-not-allowed": _TYPE_KEYWORDS,  # null where null is not allowed
}
MUTATION_KINDS: Final = frozenset(_KIND_KEYWORDS)
# Keywords that report a failure found inside their subschemas rather than one of their own.
_WRAPPER_KEYWORDS: Final = frozenset({"anyOf", "oneOf", "not"})
_KIND_NAMES: Final = {"integer": "an integer", "number": "a number", "array": "an array",
                      "object": "an object", "string": "a string", "boolean": "a boolean",
                      "null": "null"}  # fmt: skip

_Pick = Callable[[Sequence[Any]], Any]


@dataclass(frozen=True)
class _Site:
    """A possible mutation: what it breaks, where, and how to make the replacement value."""

    kind: str
    path: Path  # the location reported (a removed or added key included)
    at: Path  # the location whose value is replaced
    make: Callable[[_Pick], tuple[Any, str]]


def _fixed(kind: str, at: Path, new: Any, detail: str, key: str | None = None) -> _Site:
    """A mutation with one possible value; `key` names the property it removes or adds."""
    return _Site(kind, at if key is None else (*at, key), at, lambda _: (new, detail))


def _first(options: Sequence[Any]) -> Any:
    return options[0]


class Mutations:
    """The one-mistake mutations of one compiled document: a deterministic list, built once,
    and strategies of them."""

    def __init__(self, document: Document, boundaries: Boundaries, inputs: ValidInputs) -> None:
        self.document = document
        self._boundaries = boundaries
        self._inputs = inputs
        self._invalid: dict[Hints | None, st.SearchStrategy[Mutation]] = {}

    def _sites(self, conj: tuple[Node, ...], value: Any, path: Path) -> Iterator[_Site]:
        """Every single-mistake mutation of the location at `path`, and of its contents."""
        alts, _ = self.document.live(conj)
        if not alts:
            return
        f = self.document.matching(alts, value)
        allowed = frozenset().union(*(a.value_kinds for a in alts))
        where = f"'{place(path)}'" if path else "the input"
        if value is not None and "null" not in allowed:
            yield _fixed("null-not-allowed", path, None, f"{where} set to null")
        wrong = [kind for kind in KINDS if kind not in allowed and kind != "null"]
        if wrong:
            expected = " or ".join(_KIND_NAMES[k] for k in KINDS if k in allowed)
            item = bool(path) and isinstance(path[-1], int)

            def retype(pick: _Pick) -> tuple[Any, str]:
                kind = pick(wrong)
                new = _substitute(kind, value)
                return (
                    new,
                    f"{where} set to {short(new)}, {_KIND_NAMES[kind]}; expected {expected}",
                )

            yield _Site("item-wrong-type" if item else "wrong-type", path, path, retype)
        if f.enum is not None:
            yield from _enum_sites(f, path, where)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield from _number_sites(f, value, path, where)
        elif isinstance(value, str):
            yield from _string_sites(f, value, path, where)
        elif isinstance(value, list) and "array" in f.kinds:
            yield from self._array_sites(f, value, path, where)
        elif isinstance(value, dict) and "object" in f.kinds:
            yield from self._object_sites(f, value, path, where)

    def _array_sites(self, f: Facts, value: list[Any], path: Path, where: str) -> Iterator[_Site]:
        size = len(value)
        if 0 < f.min_items <= size:
            new = value[: f.min_items - 1]
            yield _fixed(
                "too-few-items",
                path,
                new,
                f"{where} cut to {len(new)} items (minItems {f.min_items})",
            )
        if f.max_items is not None and f.max_items < 1000:
            grown = value + self._boundaries.fillers(f, value, f.max_items + 1 - size)
            detail = f"{where} grown to {len(grown)} items (maxItems {f.max_items})"
            if len(grown) > f.max_items:
                yield _fixed("too-many-items", path, grown, detail)
        if f.unique and value and (f.max_items is None or size < f.max_items):
            yield _fixed(
                "duplicate-items", path, [*value, value[0]], f"{where} repeats its first item"
            )
        for index, item in enumerate(value):
            yield from self._sites(f.index_conj(index), item, (*path, index))

    def _object_sites(
        self, f: Facts, obj: dict[str, Any], path: Path, where: str
    ) -> Iterator[_Site]:
        required = closure(f.required, f.dependent)

        def without(*keys: str) -> dict[str, Any]:
            return {k: v for k, v in obj.items() if k not in keys}

        for key in required:
            if key in obj:
                detail = f"required property {key!r} removed from {where}"
                yield _fixed("missing-required", path, without(key), detail, key)
        for name, needs in f.dependent.items():
            for key in needs:
                if name in obj and key in obj and key not in required:
                    detail = f"{key!r} removed from {where}, though {name!r} requires it"
                    yield _fixed("missing-dependent", path, without(key), detail, key)
        if f.forbids_additional:
            name = next(n for n in (f"unexpected_{i}" for i in range(len(obj) + 1)) if n not in obj)
            detail = f"unknown property {name!r} added to {where}"
            yield _fixed("extra-property", path, {**obj, name: "x"}, detail, name)
        optional = [k for k in obj if k not in required]
        if 0 < f.min_props <= len(obj) and len(obj) - len(optional) < f.min_props:
            less = without(*optional[len(optional) - (len(obj) - f.min_props + 1) :])
            detail = f"{where} cut to {len(less)} properties (minProperties {f.min_props})"
            yield _fixed("too-few-properties", path, less, detail)
        if f.max_props is not None and len(obj) <= f.max_props < 1000:
            more = self._boundaries.grow(f, dict(obj), f.max_props + 1, fill=False)
            if len(more) > f.max_props:
                detail = f"{where} grown to {len(more)} properties (maxProperties {f.max_props})"
                yield _fixed("too-many-properties", path, more, detail)
        for key, item in obj.items():
            yield from self._sites(f.value_conj(key), item, (*path, key))

    def _confirm(self, value: Any, path: Path, kind: str) -> bool:
        """Whether `value` fails on `path` only, for one of the keywords `kind` stands for."""
        errors = list(self.document.validator.iter_errors(value))
        expected = _KIND_KEYWORDS[kind]

        def on_path(error: Any) -> bool:
            return tuple(error.absolute_path) == path[: len(error.absolute_path)]

        def reports(error: Any) -> bool:
            inner = error.context or ()
            return error.validator in expected or any(reports(e) for e in inner if on_path(e))

        return (
            bool(errors)
            and all(on_path(e) and e.validator in expected | _WRAPPER_KEYWORDS for e in errors)
            and any(reports(e) for e in errors)
        )

    def _mutate(
        self, base: Any, site: _Site, pick: _Pick, source: str = "boundary"
    ) -> Mutation | None:
        new, detail = site.make(pick)
        value = replaced(base, site.at, new)
        return (
            Mutation(value, site.kind, site.path, detail, source)
            if self._confirm(value, site.path, site.kind)
            else None
        )

    @cached_property
    def examples(self) -> list[Mutation]:
        """Each kind of mistake at each place once: the simplest input's places, then those of
        the input with every optional property."""
        root = (self.document.root,)
        found = [self._boundaries.simplest(root), self._boundaries.simplest(root, fill=True)]
        bases = {canonical(v): v for v in found if v is not MISSING}
        # Every mistake at every place, once: grouped by kind, in the order places are met.
        taken: dict[str, list[Mutation]] = {}
        seen: set[str] = set()
        for base in bases.values():
            for site in self._sites(root, base, ()):
                chosen = taken.setdefault(site.kind, [])
                if any(m.path == site.path for m in chosen):
                    continue
                mutation = self._mutate(base, site, _first)
                if mutation is not None and canonical(mutation.value) not in seen:
                    seen.add(canonical(mutation.value))
                    chosen.append(mutation)
        return [m for chosen in taken.values() for m in chosen]

    def strategy(self, hints: Hints | None) -> st.SearchStrategy[Mutation]:
        """Generated mutations of valid values (with `hints` mixed in when given)."""
        if hints in self._invalid:
            return self._invalid[hints]
        examples = self.examples
        if not examples:
            return st.nothing()
        root = (self.document.root,)
        inputs = self._inputs
        valid = inputs.valid if hints is None else inputs.hinted(hints)[0]

        @st.composite
        def draw_mutation(draw: st.DrawFn) -> Mutation:
            base = draw(valid)
            source = "generated" if hints is None else inputs.source()
            sites: dict[str, list[_Site]] = {}
            for site in self._sites(root, base, ()):
                sites.setdefault(site.kind, []).append(site)
            if not sites:
                return draw(st.sampled_from(examples))
            # the kind first, so that mistakes found at every location do not crowd out the rest
            kinds = sorted(sites, key=list(_KIND_KEYWORDS).index)
            site = draw(st.sampled_from(sites[draw(st.sampled_from(kinds))]))
            mutation = self._mutate(
                base, site, lambda options: draw(st.sampled_from(options)), source
            )
            assume(mutation is not None)
            assert mutation is not None
            return mutation

        self._invalid[hints] = draw_mutation()
        return self._invalid[hints]


# ---------------------------------------------------------------------------------------------
# Leaves


def _substitute(kind: str, value: Any) -> Any:
    """A value of `kind` close to `value`, the way a model gets a type wrong."""
    if kind == "string":
        return json.dumps(value) if isinstance(value, int | float) else "x"
    if kind == "array":
        return [value]
    if kind == "object":
        return {"value": value}
    return {"integer": 1, "number": 1.5, "boolean": True}[kind]


def _outsiders(listed: Sequence[Any]) -> list[Any]:
    """Values of the listed values' kinds that may not be listed (the caller checks)."""
    numbers = [v for v in listed if kind_of(v) in ("integer", "number")]
    out: list[Any] = [not v for v in listed if isinstance(v, bool)]
    out += [max(numbers) + 1] if numbers else []
    return out + [t for v in listed if isinstance(v, str) for t in (f"{v}_other", v.upper(), "")]


def _enum_sites(f: Facts, path: Path, where: str) -> Iterator[_Site]:
    assert f.enum is not None
    listed = {canonical(v) for v in f.enum}
    outside = [v for v in _outsiders(f.enum) if canonical(v) not in listed]
    if outside:
        kind = "const-mismatch" if f.enum_keyword == "const" else "not-in-enum"
        allowed = f"{f.enum_keyword} {short(list(f.enum))}"

        def relist(pick: _Pick) -> tuple[Any, str]:
            new = pick(outside)
            return new, f"{where} set to {short(new)}, not in {allowed}"

        yield _Site(kind, path, path, relist)


def _number_sites(f: Facts, value: int | float, path: Path, where: str) -> Iterator[_Site]:
    kind = "number" if "number" in f.kinds else "integer"
    step = f.step(kind) or Fraction(1)
    for bound, side in ((f.lower, -1), (f.upper, 1)):
        if bound is None:
            continue
        # the nearest value past the bound that is still on the multipleOf grid
        edge = Fraction(bound.value)
        k = math.floor(edge / step) if side < 0 else math.ceil(edge / step)
        if not bound.exclusive and k * step == edge:
            k += side
        new = as_kind(k * step, kind)
        name = ("exclusiveM" if bound.exclusive else "m") + ("inimum" if side < 0 else "aximum")
        detail = (
            f"{where} set to {short(new)}, {'below' if side < 0 else 'above'} {name} {bound.value}"
        )
        yield _fixed("below-minimum" if side < 0 else "above-maximum", path, new, detail)
    if f.multiples and not (kind == "integer" and step == 1):
        # halfway between two multiples; an integer field has an integer step >= 2 here
        new = value + 1 if kind == "integer" else float(value + step / 2)
        detail = f"{where} set to {short(new)}, not a multiple of {short(list(f.multiples))}"
        yield _fixed("not-multiple-of", path, new, detail)


def _string_sites(f: Facts, value: str, path: Path, where: str) -> Iterator[_Site]:
    if f.min_length > 0:
        new = value[: f.min_length - 1]
        detail = f"{where} cut to {len(new)} characters (minLength {f.min_length})"
        yield _fixed("too-short", path, new, detail)
    if f.max_length is not None and f.max_length < 100_000:
        new = (value + (value or "a") * (f.max_length + 1))[: f.max_length + 1]
        detail = f"{where} grown to {len(new)} characters (maxLength {f.max_length})"
        yield _fixed("too-long", path, new, detail)
    size = max(len(value), 1)
    options = [
        t for t in (c * size for c in "!a0 A") if not all(re.search(p, t) for p in f.patterns)
    ]
    if f.patterns and options:

        def mismatch(pick: _Pick) -> tuple[Any, str]:
            new = pick(options)
            return new, f"{where} set to {short(new)}, not matching {f.patterns[0]!r}"

        yield _Site("pattern-mismatch", path, path, mismatch)
