"""Hints put in place: deterministic valid inputs that each carry one hint at one place."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from axm_conformance._strategies._boundaries import Boundaries
from axm_conformance._strategies._document import Document
from axm_conformance._strategies._hints import HINT_SOURCES, Example, HintPools, Hints, neighbours
from axm_conformance._strategies._json import MISSING, Path, canonical, place, replaced, short
from axm_conformance._strategies._locations import Facts, Node

__all__ = ["placed"]

# What the label of a placed hint says about its source.
_HINT_NOTES: Final = {
    "tool-output": "a value another tool of its home returned or was given",
    "worker-file": "a file in the working directory",
    "source-literal": "a literal in the tool's source",
    "description": "a value the tool's descriptions (or its server's instructions) name",
    "schema-example": "a value the schema names",
}


def placed(
    document: Document, boundaries: Boundaries, pools: HintPools, hints: Hints, limit: int
) -> list[Example]:
    """Up to `limit` valid inputs, each a base input with one hint put at one place.

    The places are the scalar values, not fixed by enum or const, of the simplest input and
    of the one with every optional property; each is changed in the simplest input that has
    it (an optional property is added alone where the schema allows). Each hint goes to
    every place that allows it before the next hint is tried: the hints in `SOURCES` order,
    the schema's named values last, then the neighbours of each number (one apart, or the
    next floats).
    """
    root = (document.root,)
    baseline = boundaries.simplest(root)
    places: dict[Path, tuple[Any, list[Facts]]] = {}
    for base in (baseline, boundaries.simplest(root, fill=True)):
        for path, alts in _scalars(document, root, base, ()) if base is not MISSING else ():
            if path not in places:
                places[path] = (_holding(document, baseline, base, path), alts)
    ordered = sorted(pools.usable(hints), key=lambda hint: HINT_SOURCES.index(hint[0]))
    values = [(source, (neighbours(value) or (value,))[0], "") for source, value in ordered]
    values += [
        (source, near, f"next to {short(value)}, ")
        for source, value in ordered
        for near in neighbours(value)[1:]
    ]
    seen = {canonical(example.value) for example in boundaries.examples}
    out: list[Example] = []
    for source, value, near in values:
        for path, (base, alts) in places.items():
            if len(out) >= limit:
                return out
            if not any(document.accepts(f, value) for f in alts):
                continue
            candidate = replaced(base, path, value)
            text = canonical(candidate)
            if text in seen or not document.validator.is_valid(candidate):
                continue
            seen.add(text)
            label = f"{place(path)} = {short(value)} ({near}{_HINT_NOTES[source]})"
            out.append(Example(candidate, label, source))
    return out


def _holding(document: Document, baseline: Any, base: Any, path: Path) -> Any:
    """The baseline with the property of `base` that holds `path` added, when that is
    valid: one change at a time, as the boundary inputs make them; else `base`."""
    if base is baseline or not isinstance(baseline, dict) or not path:
        return base
    smaller = {**baseline, path[0]: base[path[0]]}
    return smaller if document.validator.is_valid(smaller) else base


def _scalars(
    document: Document, conj: tuple[Node, ...], value: Any, path: Path
) -> Iterator[tuple[Path, list[Facts]]]:
    """The places of `value`'s scalars with the alternatives there, where not enum/const."""
    alts, _ = document.live(conj)
    if not alts:
        return
    f = document.matching(alts, value)
    if isinstance(value, dict) and "object" in f.kinds:
        for key, item in value.items():
            yield from _scalars(document, f.value_conj(key), item, (*path, key))
    elif isinstance(value, list) and "array" in f.kinds:
        for index, item in enumerate(value):
            yield from _scalars(document, f.index_conj(index), item, (*path, index))
    elif not isinstance(value, dict | list):
        free = [a for a in alts if a.enum is None]
        if free:
            yield path, free
