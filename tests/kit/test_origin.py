"""Where an escaping exception came from, read from its traceback (``_origin``), in process.

The functions below stand for a tool's code: this file is the tool's own code, the standard
library is not.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import select
import statistics
import sys
from collections.abc import Callable
from typing import Any

import pytest

from axm_conformance._process.child._origin import OwnCode, origin, own_code


def refuses_negatives(n: int = -1) -> None:
    if n < 0:
        raise ValueError("n must be positive")


def translates_a_lookup() -> None:
    try:
        {}["x"]
    except KeyError as exc:
        raise LookupError("no x") from exc


def reraises_bare() -> None:
    try:
        {}["x"]
    except KeyError:
        raise


def reraises_by_name() -> None:
    try:
        {}["x"]
    except KeyError as exc:
        raise exc


def asserts() -> None:
    assert sys.maxsize < 0, "never"


def opens_a_missing_file() -> None:
    open("/nonexistent/axm-conformance/notes.txt").close()


def opens_a_nul_path() -> None:
    open("notes\0.txt").close()


def stats_a_nul_path() -> None:
    os.stat("notes\0.txt")


def reads_a_nul_path() -> None:
    pathlib.Path("notes\0.txt").read_text()


def hands_pathlib_none() -> None:
    pathlib.Path(None)  # type: ignore[arg-type]


def opens_a_name_too_long() -> None:
    open("n" * 5000).close()


def reads_a_missing_variable() -> None:
    os.environ["AXM_CONFORMANCE_NEVER_SET"]


def waits_a_negative_time() -> None:
    select.select([], [], [], -1)


def roots_a_negative() -> None:
    math.isqrt(-1)


def medians_nothing() -> None:
    statistics.median([])


def decodes_a_broken_document() -> None:
    json.loads("{")


def looks_up_a_missing_key() -> None:
    {"a": 1}["b"]


def divides_by_zero() -> None:
    1 // int("0")


def parses_a_word() -> None:
    int("seven")


def reads_a_closed_file() -> None:
    handle = open(__file__)  # noqa: SIM115
    handle.close()
    handle.read()


OWN = own_code([refuses_negatives])


@pytest.mark.parametrize(
    ("function", "expected", "where"),
    [
        (refuses_negatives, "raise", f"{__name__}.refuses_negatives"),
        (translates_a_lookup, "raise", f"{__name__}.translates_a_lookup"),
        # A re-raise keeps the traceback: judged where the KeyError was first raised.
        (reraises_bare, "other", f"{__name__}.reraises_bare"),
        (reraises_by_name, "other", f"{__name__}.reraises_by_name"),
        (asserts, "other", f"{__name__}.asserts"),
        (opens_a_missing_file, "os", "open"),
        (opens_a_nul_path, "os", "open"),  # ValueError, from a C function of io
        (stats_a_nul_path, "os", "os.stat"),
        (reads_a_nul_path, "os", "io.open"),
        (opens_a_name_too_long, "os", "open"),
        (reads_a_missing_variable, "os", "os._Environ.__getitem__"),
        (waits_a_negative_time, "os", "select.select"),
        (hands_pathlib_none, "other", None),  # a TypeError: the wrong kind of object
        (roots_a_negative, "other", "math.isqrt"),
        (medians_nothing, "other", "statistics.median"),
        (decodes_a_broken_document, "other", "json.decoder.JSONDecoder.raw_decode"),
        (looks_up_a_missing_key, "other", f"{__name__}.looks_up_a_missing_key"),
        (divides_by_zero, "other", f"{__name__}.divides_by_zero"),
        (parses_a_word, "other", "int"),
        # A method of a local object is not resolved: the limit of reading the callee.
        (reads_a_closed_file, "other", f"{__name__}.reads_a_closed_file"),
    ],
    ids=lambda value: getattr(value, "__name__", None),
)
def test_the_origin_is_read_from_the_traceback(
    function: Callable[[], None], expected: str, where: str | None
) -> None:
    with pytest.raises(BaseException) as caught:
        function()
    found, raised_in = origin(caught.value, OWN)
    assert found == expected
    if where is not None:
        assert raised_in == where


def test_a_raise_outside_the_tools_own_code_is_not_deliberate() -> None:
    with pytest.raises(LookupError) as caught:
        translates_a_lookup()
    assert origin(caught.value, OwnCode())[0] == "other"


def test_the_tools_own_code_is_its_whole_package() -> None:
    own = own_code([json.loads])
    assert own.directories == (os.path.normcase(os.path.dirname(json.__file__)),)
    assert json.decoder.__file__ in own and json.__file__ in own and __file__ not in own
    # json.decoder refuses trailing data with a raise statement: json's own, deliberate.
    with pytest.raises(ValueError, match="Extra data") as caught:
        json.loads("[1] [2]")
    assert origin(caught.value, own)[0] == "raise"


def test_a_bound_method_belongs_to_its_functions_module() -> None:
    class Tool:
        def execute(self) -> None:
            refuses_negatives()

    assert own_code([Tool().execute]) == OWN
    assert own_code([object(), "text", 3]) == OwnCode()


def test_frames_of_the_hidden_directory_are_not_named() -> None:
    here = os.path.dirname(__file__)
    with pytest.raises(KeyError) as caught:
        looks_up_a_missing_key()
    assert origin(caught.value, OWN, hidden=here) == ("other", "")
    with pytest.raises(OSError) as refused:
        opens_a_missing_file()
    assert origin(refused.value, OWN, hidden=here) == ("os", "")


def test_an_exception_without_a_traceback_is_a_crash() -> None:
    exc: Any = ValueError("never raised")
    assert origin(exc, OWN) == ("other", "")
    assert origin(FileNotFoundError("never raised"), OWN) == ("os", "")
