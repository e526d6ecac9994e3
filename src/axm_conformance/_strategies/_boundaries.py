"""Boundary examples: the simplest valid input, then valid inputs that each change one thing.

The simplest value at each location, and the valid variations of it (bounds, lengths, enum
values, optional properties), are read from a compiled document; mutations and hint placement
start from the same simplest values.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property
from typing import Any, Final

from axm_conformance._strategies._document import FORMAT_EXAMPLES, Document
from axm_conformance._strategies._hints import Example, illustrations
from axm_conformance._strategies._json import KINDS, MISSING, Path, canonical, kind_of, place, short
from axm_conformance._strategies._locations import Facts, Node, as_kind, closure
from axm_conformance._strategies._regex import long_match, pattern_text

__all__ = ["Boundaries"]

_NON_ASCII: Final = "Zürich — 東京 🚀"
_LONG_LENGTH: Final = 10_000
# Strings that break real path and text handling, each valid Unicode text all the same: a NUL
# (C strings and the system's calls refuse it: "embedded null byte"), the parent directory, a
# trailing slash, and a name one past the 255 bytes a file system allows. A lone UTF-16
# surrogate is not among them: it is no Unicode text, which a JSON Schema string is, and
# pydantic's str refuses it ("unable to parse raw data as a unicode string") before a tool
# could.
_TEXT_EDGES: Final = (
    ("\x00", "a NUL character"),
    ("..", "'..', the parent directory"),
    ("a/", "a trailing slash"),
    ("a" * 256, "256 characters, one past a file name's 255"),
)
_TEXT_EDGE_LABELS: Final = tuple(what for _, what in _TEXT_EDGES)


def is_text_edge(example: Example) -> bool:
    """Whether a boundary example is one of the strings that break path and text handling."""
    return example.label.endswith(_TEXT_EDGE_LABELS)


_LARGE_NEGATIVE: Final = -1_000_000_000
# How a boundary example taken from the schema's examples or default ends its label.
_OFFERED_LABELS: Final = ("(from examples)", "(from default)")


class Boundaries:
    """The simplest values of one compiled document and the boundary examples around them,
    built once and cached."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self._simplest: dict[tuple[Any, ...], Any] = {}
        self._pools: dict[tuple[str, ...], list[Any]] = {}

    # --- simplest values

    def simplest(self, conj: tuple[Node, ...], *, fill: bool = False) -> Any:
        """The simplest valid value at a location (all optional properties too if `fill`)."""
        document = self.document
        alts, entered = document.alternatives(conj)
        key = (tuple(n.pointer for n in conj), tuple(document.stack), fill)
        if key not in self._simplest:
            with document.entering(entered):
                found = (self._simplest_of(f, fill) for f in alts if isinstance(f, Facts))
                self._simplest[key] = next((v for v in found if v is not MISSING), MISSING)
        return self._simplest[key]

    def _simplest_of(self, f: Facts, fill: bool) -> Any:
        if f.enum is not None:
            return f.enum[0]
        for kind in KINDS:
            if kind in f.kinds:
                value = self._simplest_kind(f, kind, fill)
                if value is not MISSING and self.document.accepts(f, value):
                    return value
        return MISSING

    def _simplest_kind(self, f: Facts, kind: str, fill: bool) -> Any:
        if kind in ("null", "boolean"):
            return None if kind == "null" else False
        if kind in ("integer", "number"):
            return _closest(f, kind, 0)
        if kind == "string":
            return _simplest_string(f)
        if kind == "array":
            size = max(f.min_items, f.contains[0][1] if f.contains else 0)
            if fill and size == 0 and f.max_items != 0:  # a filled array shows an item
                items = self._simplest_items(f, 1, fill)
                if items is not MISSING:
                    return items
            return self._simplest_items(f, size, fill)
        return self._simplest_object(f, {}, fill)

    def _simplest_items(self, f: Facts, size: int, fill: bool) -> Any:
        """`size` simplest items, the first ones matching `contains` as far as it asks."""
        node, at_least, _ = f.contains[0] if f.contains else (None, 0, None)
        conjs = [f.index_conj(i) for i in range(size)]
        conjs = [
            (*c, node) if node is not None and i < at_least else c for i, c in enumerate(conjs)
        ]
        items = [self.simplest(conj, fill=fill) for conj in conjs]
        if MISSING in items:
            return MISSING
        if not f.unique:
            return items
        distinct = list({canonical(item): item for item in items}.values())
        return distinct + self.fillers(f, distinct, size - len(distinct))

    def _simplest_object(self, f: Facts, start: dict[str, Any], fill: bool) -> Any:
        """`start` plus the required properties, plus optional ones if `fill` or minProperties."""
        obj = dict(start)
        for key in closure(f.required, f.dependent):
            if key not in obj:
                obj[key] = self.simplest(f.value_conj(key), fill=fill)
                if obj[key] is MISSING:
                    return MISSING
        for key in f.declared if fill else ():
            if key not in obj:
                self._add_optional(f, obj, key, fill)
        return self.grow(f, obj, f.min_props, fill)

    def grow(self, f: Facts, obj: dict[str, Any], size: int, fill: bool) -> dict[str, Any]:
        """`obj` with optional, then undeclared, properties added until it has `size` of them."""
        for key in [*f.declared, *self._spare_names(f, size)]:
            if len(obj) >= size:
                break
            if key not in obj:
                self._add_optional(f, obj, key, fill)
        return obj

    def _spare_names(self, f: Facts, count: int) -> list[str]:
        """Undeclared property names propertyNames allows: pattern matches first, then x, xx..."""
        spare = []
        for pattern in f.patterns_of_keys:  # keys that match a pattern, longer and longer
            names = (pattern_text(pattern, i + 1, 100) for i in range(count))
            spare += [name + "x" * i for i, name in enumerate(names) if name is not None]
        spare += ["x" * (i + 1) for i in range(count)]
        return [
            name
            for name in dict.fromkeys(spare)
            if name not in f.declared and all(self.document.is_valid(n, name) for n in f.names)
        ]

    def _add_optional(self, f: Facts, obj: dict[str, Any], key: str, fill: bool) -> bool:
        """Add `key` and what it requires to `obj` with simplest values; False if impossible."""
        new = {k: self.simplest(f.value_conj(k), fill=fill) for k in closure([key], f.dependent)}
        if MISSING in new.values():
            return False
        obj.update({k: v for k, v in new.items() if k not in obj})
        return True

    def fillers(self, f: Facts, items: list[Any], count: int) -> list[Any]:
        """Up to `count` valid items to append, distinct from `items` if uniqueItems asks."""
        conj = f.index_conj(len(items))
        key = tuple(n.pointer for n in conj)
        if key not in self._pools:  # the item's boundary values and a few plain values, if valid
            start = self.simplest(conj)
            found = [value for i in range(20) for value in (i, f"item {i}")]
            if start is not MISSING:
                found[:0] = [start, *(v for v, _ in self.variations(conj, start, ()))]
            valid = (v for v in found if all(self.document.is_valid(n, v) for n in conj))
            self._pools[key] = list({canonical(v): v for v in valid}.values())
        pool = self._pools[key]
        if not f.unique:
            return pool[:1] * count
        taken = {canonical(item) for item in items}
        return [v for v in pool if canonical(v) not in taken][:count]

    # --- boundary examples

    def variations(self, conj: tuple[Node, ...], value: Any, path: Path) -> list[tuple[Any, str]]:
        """Valid-looking replacements for `value`, each changing one thing, with labels."""
        document = self.document
        alts, entered = document.live(conj)
        if not alts:
            return []
        current = document.matching(alts, value)
        where = place(path)
        # Values the schema itself offers as illustrations: they often reach the narrow part of
        # a domain (an existing file, a known id) that generated values never hit.
        out: list[tuple[Any, str]] = [
            (example, f"{where} = {short(example)} (from {keyword})")
            for node in conj
            for example, keyword in illustrations(node.schema)
        ]
        with document.entering(entered):
            for f in alts:
                if f.enum is not None:
                    out += [(v, f"{where} = {short(v)} ({f.enum_keyword} value)") for v in f.enum]
                    continue
                for kind in (k for k in KINDS if k in f.kinds):
                    if kind not in ("array", "object"):
                        out += _scalar_variations(f, kind, where)
                        continue
                    if not f.constrained:  # any JSON goes here: nothing nested to vary
                        continue
                    base = value
                    if f is not current or kind_of(value) != kind:  # another shape: its simplest
                        base = self._simplest_kind(f, kind, fill=False)
                        if base is MISSING:
                            continue
                        out.append((base, f"{where} as {kind}"))
                    if kind == "array":
                        out += self._array_variations(f, base, path)
                    else:
                        out += self._object_variations(alts, f, base, path)
        return out

    def _array_variations(self, f: Facts, value: list[Any], path: Path) -> list[tuple[Any, str]]:
        where = place(path)
        out: list[tuple[Any, str]] = []
        sizes = [(0, "empty"), (1, "one item"), (f.min_items, "minItems")]
        if f.max_items is not None and f.max_items <= 100:
            sizes.append((f.max_items, "maxItems"))
        for size, what in sizes:
            items = self._simplest_items(f, size, fill=False)
            if items is not MISSING:
                out.append((items, f"{where}: {size} item{'' if size == 1 else 's'} ({what})"))
        base = value or self._simplest_items(f, 1, fill=False)
        if base is MISSING:
            return out
        for index in range(min(len(base), f.prefix_len + 1)):  # each prefix item, one more
            for item, label in self.variations(f.index_conj(index), base[index], (*path, index)):
                out.append(([*base[:index], item, *base[index + 1 :]], label))
        return out

    def _object_variations(
        self, alts: list[Facts], f: Facts, obj: dict[str, Any], path: Path
    ) -> list[tuple[Any, str]]:
        """Property by property of `f`, what `f` or another object alternative allows there."""
        shapes = [f, *(a for a in alts if a is not f and "object" in a.kinds and a.enum is None)]
        out: list[tuple[Any, str]] = []
        for key in f.declared:
            base = dict(obj)
            if key not in base:
                if not self._add_optional(f, base, key, fill=False):
                    continue
                out.append((base, f"{place((*path, key))} present"))
            conjs = {tuple(n.pointer for n in c): c for c in (s.value_conj(key) for s in shapes)}
            for conj in conjs.values():
                for value, label in self.variations(conj, base[key], (*path, key)):
                    out.append(({**base, key: value}, label))
        for key in self._spare_names(f, 1)[:1]:  # one undeclared property, where allowed
            base, conj = dict(obj), f.value_conj(key)
            if key not in base and self._add_optional(f, base, key, fill=False):
                out.append((base, f"{place(path)} with an undeclared property {key!r}"))
                for value, label in self.variations(conj, base[key], (*path, key)) if conj else ():
                    out.append(({**base, key: value}, label))
        full = self._simplest_object(f, obj, fill=True)
        if full is not MISSING:
            out.append((full, f"all optional properties of {place(path)} present"))
        return out

    @cached_property
    def examples(self) -> list[Example]:
        """The boundary examples: the baseline, then its variations, each valid, none repeated."""
        root = (self.document.root,)
        baseline = self.simplest(root)
        if baseline is MISSING:
            return []
        what = "required properties only" if isinstance(baseline, dict) else "simplest value"
        candidates = [(baseline, f"baseline: {what}"), *self.variations(root, baseline, ())]
        # The text edges last, after every other change of every property: they probe how a
        # tool handles text, the others what it serves.
        candidates.sort(key=lambda candidate: candidate[1].endswith(_TEXT_EDGE_LABELS))
        examples: dict[str, Example] = {}
        for value, label in candidates:
            text = canonical(value)
            if text not in examples and self.document.validator.is_valid(value):
                offered = label.endswith(_OFFERED_LABELS)
                examples[text] = Example(value, label, "schema-example" if offered else "boundary")
        return list(examples.values())


# ---------------------------------------------------------------------------------------------
# Leaves


def _closest(f: Facts, kind: str, target: int | float) -> Any:
    """The valid number of `kind` nearest to `target`, or MISSING."""
    step = f.step(kind)
    if step is None:
        value = float(target)
        if f.lower is not None and value <= f.lower.value:
            bound = float(f.lower.value)
            value = math.nextafter(bound, math.inf) if f.lower.exclusive else bound
        if f.upper is not None and value >= f.upper.value:
            bound = float(f.upper.value)
            value = math.nextafter(bound, -math.inf) if f.upper.exclusive else bound
        return value
    k_low, k_high = f.grid(step)
    if k_low is not None and k_high is not None and k_low > k_high:
        return MISSING
    k = round(Fraction(target) / step)
    k = max(k, k_low) if k_low is not None else k
    k = min(k, k_high) if k_high is not None else k
    return as_kind(k * step, kind)


def _scalar_variations(f: Facts, kind: str, where: str) -> list[tuple[Any, str]]:
    if kind == "null":
        return [(None, f"{where} = null")]
    if kind == "boolean":
        return [(False, f"{where} = false"), (True, f"{where} = true")]
    if kind == "string":
        return _string_variations(f, where)
    out = []
    for bound, keyword in ((f.lower, "minimum"), (f.upper, "maximum")):
        if bound is None or (value := _closest(f, kind, bound.value)) is MISSING:
            continue
        name = f"exclusive{keyword.capitalize()}" if bound.exclusive else keyword
        what = f"{name} {bound.value}"
        what = what if value == bound.value else f"nearest valid to {what}"
        out.append((value, f"{where} = {short(value)} ({what})"))
    for target, what in ((0, "zero"), (-1, "minus one"), (_LARGE_NEGATIVE, "large negative")):
        if _closest(f, kind, target) == target:
            out.append((target, f"{where} = {target} ({what})"))
    return out


def _simplest_string(f: Facts) -> Any:
    if f.formats:
        return FORMAT_EXAMPLES[f.formats[0]]
    return _text(f, f.min_length, math.inf if f.max_length is None else f.max_length)


def _text(f: Facts, shortest: int, longest: int | float) -> Any:
    """Simple text with a length in [shortest, longest], matching the first pattern if any."""
    if not f.patterns:
        return "a" * shortest
    text = pattern_text(f.patterns[0], shortest, int(min(longest, _LONG_LENGTH)))
    return MISSING if text is None else text


def _string_variations(f: Facts, where: str) -> list[tuple[Any, str]]:
    simplest = _simplest_string(f)
    if f.formats:  # format fields get format-conforming text only
        return [(simplest, f"{where} = {short(simplest)} ({f.formats[0]})")]
    out = [] if simplest is MISSING else [(simplest, f"{where} = {short(simplest)}")]
    longest = _LONG_LENGTH if f.max_length is None else min(f.max_length, _LONG_LENGTH)
    out += [
        ("", f"{where} = '' (empty)"),
        (_text(f, f.min_length, f.min_length), f"{where}: {f.min_length} characters (minLength)"),
        (_NON_ASCII, f"{where}: non-ASCII text"),
        ("x" * longest, f"{where}: {longest} characters (long)"),
        *((text, f"{where}: {what}") for text, what in _TEXT_EDGES),
    ]
    if f.max_length is not None and f.max_length <= _LONG_LENGTH:
        text = _text(f, f.max_length, f.max_length)
        out.append((text, f"{where}: {f.max_length} characters (maxLength)"))
    if f.patterns:  # every repetition taken as often as it may be
        text = long_match(f.patterns[0])
        out.append((text, f"{where}: {len(text)} characters (long match of the pattern)"))
    return [(text, label) for text, label in out if text is not MISSING]
