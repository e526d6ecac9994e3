"""The literals the worker reads from a tool's source (mirroring Hypothesis' local constants)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._process.child._literals import literals_of

SOURCE = '''
"""Module docstring: not a literal."""

UNUSED = {"zzz": 9}
MODES = {"csv": 1, "tsv": 2}
LIMIT = -250
RATIO = 0.75
BLANK = "   "
LONG = "a message that is much longer than twenty characters"


def handler(text: str, mode: str = "csv") -> str:
    """Docstring: not a literal either."""
    if text.startswith("--") or text.encode().startswith(b"%PDF"):
        raise ValueError(f"bad {text}")
    return str(MODES[mode] * 3j + 0.0) + ("" if mode else "x")
'''


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "literal_tool.py").write_text(textwrap.dedent(SOURCE))
    monkeypatch.syspath_prepend(str(tmp_path))
    import literal_tool

    yield literal_tool
    sys.modules.pop("literal_tool", None)


def test_literals_follow_hypothesis_rules(module: Any) -> None:
    """Strings, bytes as text, numbers with their sign; no docstrings, f-strings, blank or long
    strings, zero floats, and the imaginary part of a complex number on its own."""
    found = literals_of([module.handler])
    assert sorted(map(repr, found)) == sorted(
        map(repr, ("zzz", 9, "csv", "tsv", 1, 2, -250, 0.75, "--", "%PDF", 3.0, "x"))
    )


def test_the_callable_literals_come_first(module: Any) -> None:
    """Those of the definition that holds the callable, in source order, then those of the
    module-level names it reads, then the rest of the module's."""
    found = literals_of([module.handler])
    assert found == ("csv", "--", "%PDF", 3.0, "x", "tsv", 1, 2, "zzz", 9, -250, 0.75)


def test_the_module_read_is_the_one_defining_the_callable(module: Any) -> None:
    class Tool:
        execute = staticmethod(module.handler)

    # The test's own class leads nowhere: its function is the handler, defined in the module.
    assert literals_of([Tool().execute]) == literals_of([module.handler])


def test_the_kit_own_modules_are_not_read() -> None:
    from axm_runtime.axio import Tool

    async def handler() -> str:
        return "x"

    handler.__module__ = "axm_runtime.axio"
    assert literals_of([Tool(name="t", handler=handler).handler]) == ()
