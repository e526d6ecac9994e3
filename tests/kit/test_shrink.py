"""Shrinking starts from the failing input: candidates one cut smaller, in a strict order."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from axm_conformance._strategies import shrink_size, smaller

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)


def greedy(value: Any, fails: Any) -> Any:
    """Shrink as the engine does: the first smaller candidate that still fails, until none."""
    while True:
        for candidate in smaller(value):
            if shrink_size(candidate) < shrink_size(value) and fails(candidate):
                value = candidate
                break
        else:
            return value


def test_a_string_shrinks_to_the_two_separators_that_fail() -> None:
    assert greedy("settings=records=a", lambda text: text.count("=") >= 2) == "=="


def test_an_object_loses_what_the_failure_does_not_need() -> None:
    failing = {"name": "a long name", "count": 937, "tags": ["x", "y", "z"], "on": True}
    shrunk = greedy(failing, lambda value: value.get("count", 0) > 100)
    assert shrunk == {"count": 101}


def test_a_negative_number_shrinks_toward_zero() -> None:
    assert greedy(-5000, lambda number: number < -40) == -41


@pytest.mark.parametrize("value", [None, True, False, 0, 0.0, "", [], {}])
def test_the_simplest_values_have_nothing_smaller(value: Any) -> None:
    assert [c for c in smaller(value) if shrink_size(c) < shrink_size(value)] == []


@given(JSON)
def test_the_biggest_cut_comes_first(value: Any) -> None:
    """Whatever the value, a failure that every input shows shrinks to a simplest value in a
    few steps: the first cut offered is the biggest (an empty value, zero, a property fewer)."""
    shrunk = greedy(value, lambda candidate: True)
    assert shrunk in (None, True, False, 0, 0.0, "", [], {})
