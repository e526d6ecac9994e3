"""Tool inputs from a JSON Schema 2020-12: valid values, boundary examples, one-mistake mutations.

A tool's input schema is read as JSON Schema 2020-12, whatever its ``$schema`` says among the
published drafts (a custom dialect is rejected). From it this package makes:

- `valid_inputs`: a Hypothesis strategy of values that validate;
- `boundary_inputs`: a deterministic list of valid edge cases, each labelled;
- `invalid_inputs` / `invalid_examples`: values that break the schema at exactly one location in
  one known way, each a `Mutation` with a stable `kind`;
- `keywords_of`: the keywords a schema uses, so a report can say which ones were exercised;
- `variations`: valid inputs one change away from a valid input, to tell a refusal the schema
  explains from one it does not.

Why not `hypothesis_jsonschema.from_schema` alone: it predates 2020-12 (no ``prefixItems``,
``dependentRequired``, ``$anchor`` or ``$id``-relative references) and, with current Hypothesis, it
cannot draw a single JSON object (it relies on a private Hypothesis helper whose interface changed).
Every tool input is an object, so objects, arrays, references and combinators are built here by
construction. hypothesis-jsonschema is kept for string leaves: its regex strategy (``pattern``) and
its table of ``format`` strategies work with every Hypothesis release and would be costly to
rewrite; it only ever receives a fresh leaf schema without ``$ref`` (it rewrites schemas that have
references in place). Numbers, booleans and null are built by hand: a few lines, exact
``multipleOf`` arithmetic, and unlike hypothesis-jsonschema integers as well as floats for
``number``.

How a schema is read. The subschemas that apply at one location (a ``$ref`` target and its
siblings, ``allOf`` branches) form a conjunction whose keywords are combined one by one: types
intersect, bounds tighten, ``properties``/``items`` of every member keep applying to the same keys
and indices. ``anyOf``, ``oneOf``, ``if``/``then``/``else`` and ``dependentSchemas`` split a
location into alternatives, each built by construction; ``oneOf`` (exactly one branch), ``not``
and the ``else`` side of a condition are then enforced by filters. A reference may re-enter itself
at most `_MAX_RECURSION` times on one path; deeper, that alternative is dropped, which bounds
recursive schemas (trees) without filtering. Strategies are built once per schema (cached by
canonical JSON), and every drawn value is re-checked with a cached ``Draft202012Validator`` that
also asserts the formats jsonschema can check, so an invalid value can never come out.

Errors, all raised when a schema is first used, never while drawing::

    ValueError
     ├── InvalidSchemaError        not a valid 2020-12 schema, or a $ref to nowhere or in a loop
     ├── UnsupportedSchemaError    valid, but uses a keyword this package cannot honour
     └── UnsatisfiableSchemaError  no value can satisfy it
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

from axm_conformance._strategies._boundaries import Boundaries, is_text_edge
from axm_conformance._strategies._constants import without_local_constants
from axm_conformance._strategies._coverage import keywords_exercised, keywords_of
from axm_conformance._strategies._described import (
    described_values,
    property_names,
    singular,
    told_of,
)
from axm_conformance._strategies._document import (
    Document,
    InvalidSchemaError,
    UnsatisfiableSchemaError,
    UnsupportedSchemaError,
)
from axm_conformance._strategies._hints import SOURCES, Example, HintPools, Hints
from axm_conformance._strategies._json import Strategy, canonical
from axm_conformance._strategies._mutations import MUTATION_KINDS, Mutation, Mutations
from axm_conformance._strategies._placement import placed
from axm_conformance._strategies._shrink import size as shrink_size
from axm_conformance._strategies._shrink import smaller
from axm_conformance._strategies._tokens import structured_strings
from axm_conformance._strategies._valid import ValidInputs
from axm_conformance._strategies._variations import Cap, Served, Variation, variations_of

__all__ = [
    "MUTATION_KINDS",
    "SOURCES",
    "Cap",
    "Example",
    "Hints",
    "InvalidSchemaError",
    "Mutation",
    "Served",
    "UnsatisfiableSchemaError",
    "UnsupportedSchemaError",
    "Variation",
    "boundary_inputs",
    "described_values",
    "discarded_count",
    "generated_inputs",
    "hinted_inputs",
    "invalid_examples",
    "invalid_inputs",
    "is_valid_input",
    "keywords_exercised",
    "keywords_of",
    "property_names",
    "shrink_size",
    "simplest_input",
    "singular",
    "smaller",
    "structured_strings",
    "told_of",
    "valid_inputs",
    "variations",
    "without_local_constants",
]


class _Compiled:
    """One schema with its strategies, validators and derived examples, built once and cached."""

    def __init__(self, schema: Any) -> None:
        self.document = Document(schema)
        self.hint_pools = HintPools(schema)
        self.valid_inputs = ValidInputs(self.document, self.hint_pools)
        self.boundaries = Boundaries(self.document)
        self.mutations = Mutations(self.document, self.boundaries, self.valid_inputs)


@lru_cache(maxsize=256)
def _compiled_from(text: str) -> _Compiled:
    return _Compiled(json.loads(text))


def _compiled(schema: Any) -> _Compiled:
    try:
        text = canonical(schema)
    except (TypeError, ValueError) as err:
        raise InvalidSchemaError(f"the schema is not JSON: {err}") from None
    return _compiled_from(text)


def discarded_count(schema: Any) -> int:
    """How many generated values `valid_inputs(schema)` has thrown away as invalid so far."""
    return _compiled(schema).valid_inputs.discarded


def valid_inputs(schema: Any, hints: Hints | None = None) -> Strategy:
    """A strategy of JSON values valid against `schema` (JSON Schema 2020-12).

    With `hints`, one value in 4 takes about half its strings and numbers from them (or from the
    values the schema names) where the schema allows it; text may get one spliced in.
    Raises InvalidSchemaError, UnsupportedSchemaError or UnsatisfiableSchemaError at once.
    """
    inputs = _compiled(schema).valid_inputs
    return inputs.valid if hints is None else inputs.hinted(hints)[0]


def generated_inputs(schema: Any, hints: Hints) -> st.SearchStrategy[Example]:
    """`valid_inputs(schema, hints)`, each value an Example whose source says what it drew on."""
    return _compiled(schema).valid_inputs.hinted(hints)[1]


def hinted_inputs(schema: Any, hints: Hints, limit: int) -> list[Example]:
    """Deterministic valid inputs that each put one hint in one place (see `placed`),
    at most `limit`, none of them a boundary input."""
    compiled = _compiled(schema)
    return placed(compiled.document, compiled.boundaries, compiled.hint_pools, hints, limit)


def simplest_input(schema: Any) -> Any:
    """The first of :func:`boundary_inputs`: the required properties, each with its simplest
    value, made without building the schema's Hypothesis strategies (which takes seconds in a
    fresh process). Raises ValueError for a schema that gives no valid input."""
    examples = Boundaries(Document(schema)).examples
    if not examples:
        raise UnsatisfiableSchemaError("the schema gives no valid input")
    return examples[0].value


def boundary_inputs(schema: Any, *, text_edges: bool = True) -> list[Example]:
    """Deterministic valid edge cases: a minimal baseline, then one change at a time.

    The baseline holds the required properties only, each with its simplest value; each further
    example changes one property (nested ones included): every enum value, bounds, lengths, the
    empty string or array, non-ASCII and long text, zero and negatives, null, optional properties
    present one by one and all at once; last, unless ``text_edges`` is false, the strings that
    break path and text handling (a NUL, ``..``, a trailing slash, 256 characters). Every
    example has been validated.
    """
    examples = list(_compiled(schema).boundaries.examples)
    return examples if text_edges else [e for e in examples if not is_text_edge(e)]


def invalid_examples(schema: Any) -> list[Mutation]:
    """Deterministic invalid inputs: each kind of mistake at each place once (the simplest
    input's places, then those of the input with every optional property), each confirmed
    invalid."""
    return list(_compiled(schema).mutations.examples)


def variations(schema: Any, value: Any, served: Served) -> list[Variation]:
    """Valid inputs one change away from the refused valid input ``value``: another member of
    an enum, the value next to a declared bound inside it, an optional or undeclared property
    left out; each with the inputs that confirm a refusal, given what the tool was seen to
    serve (see `_variations`)."""
    return variations_of(_compiled(schema).document, value, served)


def is_valid_input(schema: Any, value: Any) -> bool:
    """Whether ``value`` is valid against ``schema``, as the kit's inputs are judged."""
    document = _compiled(schema).document
    return document.is_valid(document.root, value)


def invalid_inputs(schema: Any, hints: Hints | None = None) -> st.SearchStrategy[Mutation]:
    """A strategy of valid inputs broken in one known way; empty when every value is valid.

    With `hints`, the valid inputs are drawn as `valid_inputs(schema, hints)` draws them.
    """
    return _compiled(schema).mutations.strategy(hints)
