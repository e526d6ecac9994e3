"""Valid inputs by construction: a Hypothesis strategy for each location of a compiled document,
with hints mixed in on request."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from operator import attrgetter
from typing import Any, Final

from hypothesis import assume
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from axm_conformance._strategies._document import (
    CUSTOM_FORMATS,
    FORMAT_CHECKER,
    Document,
    UnsatisfiableSchemaError,
)
from axm_conformance._strategies._hints import (
    HINT_SOURCES,
    Example,
    HintPools,
    Hints,
    illustrations,
)
from axm_conformance._strategies._json import KINDS, Check, Strategy, canonical, fragment
from axm_conformance._strategies._locations import Bound, Empty, Facts, Node, as_kind, closure

__all__ = ["ValidInputs"]

_STRING_NODE: Final = Node({"type": "string"}, "!string", None)
_MAX_EXTRA_KEYS: Final = 3  # undeclared keys drawn beyond what minProperties needs
_MAX_EXTRA_ITEMS: Final = 6  # items drawn beyond what minItems needs
# One input in this many takes values from the hints (with hints), and in such an input each
# string or number does with even odds: most inputs are left as the schema alone makes them, and
# those that are not combine hints. Taking hints is never the first choice, so that shrinking,
# which favours first choices, keeps a hint only where the failure needs it.
_HINTED_INPUTS: Final = 4
_HINTED_INPUT: Final = st.integers(0, _HINTED_INPUTS - 1)

_SCALARS: Final = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False).map(lambda x: x + 0.0)  # no -0.0
    | st.text()
)
_ANY_JSON: Final[Strategy] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


class ValidInputs:
    """The valid inputs of one compiled document: a strategy per location, built once and cached,
    with or without hints mixed in."""

    def __init__(self, document: Document, hint_pools: HintPools) -> None:
        self.document = document
        self._hint_pools = hint_pools
        self._strategies: dict[tuple[Any, ...], Strategy | Empty] = {}
        self._hints: Hints | None = None  # the hints mixed into the strategies being built
        self._hinted: dict[Hints, tuple[Strategy, st.SearchStrategy[Example]]] = {}
        self._drawn: set[str] = set()  # the hint sources the value being drawn took values from
        built = self.strategy((document.root,))
        if isinstance(built, Empty):
            raise UnsatisfiableSchemaError(f"no value satisfies the schema: {built.reason}")
        # Values that construction got wrong are dropped here, and counted: a kit reports how
        # many it threw away, since many discards mean the schema is hard to satisfy.
        self.discarded = 0
        self.valid: Strategy = built.filter(self._kept)

    def _kept(self, value: Any) -> bool:
        kept: bool = self.document.validator.is_valid(value)
        self.discarded += not kept
        return kept

    def strategy(self, conj: tuple[Node, ...]) -> Strategy | Empty:
        """A strategy for the values allowed at a location, or why there are none."""
        document = self.document
        alts, entered = document.alternatives(conj)
        # Keyed by the depth of the references entered here: a recursive schema unrolls into a
        # finite, acyclic set of strategies, and a location reached by several paths has one.
        key = (
            tuple(n.pointer for n in conj),
            tuple((t, document.stack.count(t)) for t in entered),
            self._hints,
        )
        built = self._strategies.get(key)
        if built is None:
            with document.entering(entered):
                built = _one_of(
                    [f if isinstance(f, Empty) else self._alt_strategy(f) for f in alts]
                )
            offered = [value for node in conj for value, _ in illustrations(node.schema)]
            if self._hints is not None and offered and not isinstance(built, Empty):
                pools = [("schema-example", tuple(offered))]
                built = self._mixed(
                    built, pools, lambda v: all(document.is_valid(n, v) for n in conj)
                )
            self._strategies[key] = built
        return built

    def _alt_strategy(self, f: Facts) -> Strategy | Empty:
        if f.enum is not None:
            built: Strategy | Empty = st.sampled_from(f.enum)
        elif not f.constrained:
            return _ANY_JSON
        else:
            built = _one_of([self._kind_strategy(f, kind) for kind in KINDS if kind in f.kinds])
            if isinstance(built, Empty) and not f.kinds:
                built = Empty(f"no type is allowed at {fragment(f.pointer)}")
        checks = f.alt.checks
        if isinstance(built, Empty) or not checks:
            return built
        return built.filter(lambda value: all(check(value) for check in checks))

    def _few_values(self, conj: tuple[Node, ...]) -> list[Any] | None:
        """Every value a location allows, if enum, const, boolean or null leave only a few."""
        values: list[Any] = []
        for f in self.document.live(conj)[0]:
            if f.enum is not None:
                values += f.enum
            elif f.constrained and f.kinds <= {"null", "boolean"}:
                values += [None] * ("null" in f.kinds) + [False, True] * ("boolean" in f.kinds)
            else:
                return None
        return list({canonical(value): value for value in values}.values())

    def _kind_strategy(self, f: Facts, kind: str) -> Strategy | Empty:
        if kind == "null":
            return st.none()
        if kind == "boolean":
            return st.booleans()
        if kind in ("integer", "number"):
            return self._with_hints(_numbers(f, kind), kind, partial(self.document.accepts, f))
        if kind == "string":
            return self._with_hints(_strings(f), kind, partial(self.document.accepts, f))
        return self._arrays(f) if kind == "array" else self._objects(f)

    def _arrays(self, f: Facts) -> Strategy | Empty:
        where = fragment(f.pointer)
        longest = math.inf if f.max_items is None else f.max_items
        prefix: list[Strategy] = []
        for index in range(f.prefix_len):
            item = self.strategy(f.index_conj(index))
            if isinstance(item, Empty):
                longest = min(longest, index)
                break
            prefix.append(item)
        rest = self.strategy(f.index_conj(f.prefix_len))
        few = self._few_values(f.index_conj(f.prefix_len)) if f.unique else None
        if isinstance(rest, Empty):
            longest = min(longest, len(prefix))
        elif few is not None:  # unique items from a handful of values
            longest = min(longest, len(prefix) + len(few))
        if f.min_items > longest:
            return Empty(f"the array at {where} cannot have {f.min_items} items")
        shortest, unique, contains = f.min_items, f.unique, f.contains
        first = contains[0] if contains and f.prefix_len == 0 else None
        matching = None if first is None else self.strategy((*f.index_conj(0), first[0]))
        document = self.document

        @st.composite
        def draw_array(draw: st.DrawFn) -> list[Any]:
            out: list[Any] = []
            for index, item in enumerate(prefix):
                if index >= longest or (index >= shortest and not draw(st.booleans())):
                    return out
                out.append(draw(item))
            if isinstance(rest, Empty) or len(out) >= longest:
                return out
            low = max(0, shortest - len(out))
            high = int(min(longest - len(out), low + _MAX_EXTRA_ITEMS))
            if first is not None and isinstance(matching, st.SearchStrategy):
                # contains by construction: how many items match, then the others around them
                node, at_least, at_most = first
                top = min(high, at_least + 2, high if at_most is None else at_most)
                if top >= at_least:
                    count = draw(st.integers(at_least, top))
                    others = rest if at_most is None else rest.filter(document.negation(node))
                    fewest, most = max(0, low - count), high - count
                    by = _unique_by(unique)
                    items = draw(st.lists(others, min_size=fewest, max_size=most, unique_by=by))
                    for _ in range(count):
                        items.insert(draw(st.integers(0, len(items))), draw(matching))
                    return out + items
            more = st.lists(rest, min_size=low, max_size=high, unique_by=_unique_by(unique))
            return out + draw(more)

        def whole(items: list[Any]) -> bool:
            if unique and len({canonical(i) for i in items}) != len(items):
                return False
            for node, at_least, at_most in contains:
                count = sum(document.is_valid(node, i) for i in items)
                if count < at_least or (at_most is not None and count > at_most):
                    return False
            return True

        return draw_array().filter(whole) if unique or contains else draw_array()

    def _objects(self, f: Facts) -> Strategy | Empty:
        where = fragment(f.pointer)
        values: dict[str, Strategy] = {}
        forbidden: dict[str, str] = {}
        for key in f.declared:
            if not all(self.document.is_valid(names, key) for names in f.names):
                forbidden[key] = f"its name is rejected by propertyNames at {where}"
                continue
            built = self.strategy(f.value_conj(key))
            if isinstance(built, Empty):
                forbidden[key] = built.reason
            else:
                values[key] = built
        required = closure(f.required, f.dependent)
        for key in required:
            if key not in values:
                reason = forbidden.get(key, "it is not allowed")
                return Empty(f"required property {key!r} at {where} is impossible: {reason}")
        closures = {
            key: [k for k in closure([key], f.dependent) if k not in required]
            for key in f.declared
            if key not in required
        }
        optional = [key for key, needs in closures.items() if all(k in values for k in needs)]
        extras = self._extra_properties(f)
        fewest, most = f.min_props, math.inf if f.max_props is None else f.max_props
        if len(required) > most or fewest > most:
            return Empty(f"the object at {where} cannot have {fewest} to {most} properties")
        if not extras and len(required) + len(optional) < fewest:
            return Empty(f"the object at {where} cannot have {fewest} properties")

        @st.composite
        def draw_object(draw: st.DrawFn) -> dict[str, Any]:
            obj = {key: draw(values[key]) for key in required}

            def add(key: str, *, choose: bool) -> None:
                new = [k for k in closures[key] if k not in obj]
                if new and len(obj) + len(new) <= most and (not choose or draw(st.booleans())):
                    obj.update((k, draw(values[k])) for k in new)

            for key in optional:
                add(key, choose=True)
            for key in optional:  # minProperties not reached by chance: take keys in order
                if len(obj) < fewest:
                    add(key, choose=False)
            if extras and len(obj) < most:
                low = max(0, fewest - len(obj))
                count = draw(st.integers(low, int(min(most - len(obj), low + _MAX_EXTRA_KEYS))))
                for _ in range(count):
                    keys, value = draw(st.sampled_from(extras))
                    key = draw(keys)
                    if key not in obj:
                        obj[key] = draw(value)
            assume(len(obj) >= fewest)
            return obj

        return draw_object()

    def _extra_properties(self, f: Facts) -> list[tuple[st.SearchStrategy[str], Strategy]]:
        """(key strategy, value strategy) for undeclared keys: per pattern, then additional."""
        declared = set(f.declared) | set(f.dependent)
        patterns = f.patterns_of_keys
        names = f.names
        document = self.document

        def fresh(key: str, pattern: str | None = None) -> bool:
            return (
                key not in declared
                and all(p == pattern or not re.search(p, key) for p in patterns)
                and all(document.is_valid(n, key) for n in names)
            )

        def matching(pattern: str) -> st.SearchStrategy[str]:
            return st.from_regex(pattern).filter(lambda key: fresh(key, pattern))

        extras = []
        for pattern in patterns:
            value = self.strategy(f.pattern_conj(pattern))
            if not isinstance(value, Empty):
                extras.append((matching(pattern), value))
        value = self.strategy(f.additional_conj)
        key_source = (
            self.strategy((*names, _STRING_NODE))
            if names
            else self._with_hints(st.text(max_size=12), "string", lambda _: True)
        )
        if not isinstance(value, Empty) and not isinstance(key_source, Empty):
            extras.append((key_source.filter(fresh), value))
        return extras

    # --- hints

    @contextmanager
    def _hinting(self, hints: Hints) -> Iterator[None]:
        """While inside, the strategies built mix in `hints`."""
        self._hints = hints
        try:
            yield
        finally:
            self._hints = None

    def hinted(self, hints: Hints) -> tuple[Strategy, st.SearchStrategy[Example]]:
        """Valid values with `hints` mixed in, and the same values as Examples with a source."""
        found = self._hinted.get(hints)
        if found is None:
            root = (self.document.root,)
            plain = self.strategy(root)
            with self._hinting(hints):
                mixed = self.strategy(root)
            # hints change values, never alternatives
            assert not isinstance(plain, Empty) and not isinstance(mixed, Empty)
            drawn = self._drawn

            def kept(value: Any) -> bool:
                if self._kept(value):
                    return True
                drawn.clear()  # the filter draws again: what this attempt took does not count
                return False

            both = (self.valid, mixed.filter(kept))

            @st.composite
            def draw_example(draw: st.DrawFn) -> Example:
                drawn.clear()
                value = draw(both[draw(_HINTED_INPUT) == _HINTED_INPUTS - 1])
                return Example(value, "", self.source())

            examples = draw_example()
            valid = examples.map(attrgetter("value"))
            found = self._hinted[hints] = (valid, examples)
        return found

    def source(self) -> str:
        """The source of the value drawn last (see `SOURCES`)."""
        return next((source for source in HINT_SOURCES if source in self._drawn), "generated")

    def _with_hints(self, built: Strategy | Empty, kind: str, accepts: Check) -> Strategy | Empty:
        """`built`, mixed with the hints of `kind` (see _mixed); text is also spliced in."""
        if self._hints is None or isinstance(built, Empty):
            return built
        pools = self._hint_pools.leaf(self._hints, kind)
        return self._mixed(built, pools, accepts, splice=kind == "string") if pools else built

    def _mixed(
        self,
        built: Strategy,
        pools: list[tuple[str, tuple[Any, ...]]],
        accepts: Check,
        *,
        splice: bool = False,
    ) -> Strategy:
        """`built`, or one time in two a value from `pools` (a source, then one of its values),
        with `splice` maybe inserted into drawn text; where `accepts` allows it. Only inputs
        that take hints are drawn from such strategies (see _HINTED_INPUTS)."""
        drawn = self._drawn
        # Built once: making strategies while drawing costs more than drawing from them.
        sources = st.sampled_from([(source, st.sampled_from(values)) for source, values in pools])

        @st.composite
        def draw_mixed(draw: st.DrawFn) -> Any:
            if not draw(st.booleans()):
                return draw(built)
            source, values = draw(sources)
            value = draw(values)
            if splice and draw(st.booleans()):
                around = draw(built)
                at = draw(st.integers(0, len(around)))
                value = around[:at] + value + around[at:]
            if not accepts(value):
                return draw(built)
            drawn.add(source)
            return value

        return draw_mixed()


def _one_of(items: Sequence[Strategy | Empty]) -> Strategy | Empty:
    live = [item for item in items if not isinstance(item, Empty)]
    if live:
        return live[0] if len(live) == 1 else st.one_of(live)
    return next(iter(items), Empty("nothing is allowed"))


def _unique_by(unique: bool) -> Callable[[Any], str] | None:
    return canonical if unique else None


# ---------------------------------------------------------------------------------------------
# Leaves


def _float_multiples_ok(f: Facts) -> Check | None:
    # jsonschema divides in floating point for a float multipleOf, so some exact multiples of
    # 0.1 fail there: filter with its own verdict.
    floats = [m for m in f.multiples if isinstance(m, float)]
    if not floats:
        return None
    validator = Draft202012Validator({"allOf": [{"multipleOf": m} for m in floats]})
    return validator.is_valid


def _crossed(low: Bound | None, high: Bound | None) -> bool:
    """Whether no number lies between the bounds."""
    if low is None or high is None:
        return False
    return low.value > high.value or (low.value == high.value and (low.exclusive or high.exclusive))


def _numbers(f: Facts, kind: str) -> Strategy | Empty:
    where = fragment(f.pointer)
    step = f.step(kind)
    if step is None:
        low, high = f.lower, f.upper
        if _crossed(low, high):
            return Empty(f"no number fits the bounds at {where}")
        return st.floats(
            min_value=None if low is None else low.value,
            max_value=None if high is None else high.value,
            exclude_min=low is not None and low.exclusive,
            exclude_max=high is not None and high.exclusive,
            allow_nan=False,
            allow_infinity=False,
        ).map(lambda x: x + 0.0)  # -0.0 becomes 0.0
    k_low, k_high = f.grid(step)
    if k_low is not None and k_high is not None and k_low > k_high:
        return Empty(f"no {kind} fits the bounds and multipleOf at {where}")
    built = st.integers(k_low, k_high).map(lambda k: as_kind(k * step, kind))
    check = _float_multiples_ok(f)
    return built if check is None else built.filter(check)


def _strings(f: Facts) -> Strategy | Empty:
    if f.max_length is not None and f.min_length > f.max_length:
        return Empty(f"minLength {f.min_length} exceeds maxLength at {fragment(f.pointer)}")
    leaf: dict[str, Any] = {"type": "string", "minLength": f.min_length}
    if f.max_length is not None:
        leaf["maxLength"] = f.max_length
    if f.patterns:
        leaf["pattern"] = f.patterns[0]
    if f.formats:
        leaf["format"] = f.formats[0]
    # Imported on first use: importing hypothesis-jsonschema reads Hypothesis' Unicode tables,
    # which Hypothesis reports as slow work when it happens while pytest configures plugins.
    from hypothesis_jsonschema import from_schema

    built: Strategy = from_schema(leaf, custom_formats=CUSTOM_FORMATS)
    others = [re.compile(p) for p in f.patterns[1:]]
    formats = f.formats[1:]
    if not others and not formats:
        return built
    return built.filter(
        lambda s: (
            all(p.search(s) for p in others)
            and all(FORMAT_CHECKER.conforms(s, fmt) for fmt in formats)
        )
    )
