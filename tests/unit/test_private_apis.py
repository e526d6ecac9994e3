"""The private parts of pytest and pytest-xdist the plugin relies on, each used in one place:
these fail loudly the day a release changes them, rather than the plugin going quiet.

- the terminal writer's ``_current_line``, which the progress shown at the end of pytest's line
  reads and restores (``_pytest._LineProgress``), since pytest has no public way to write there;
- xdist's ``dist`` option, which ``register`` turns from ``load`` into ``loadscope`` so that each
  tool's items stay on one worker (a tool is certified once).
"""

from __future__ import annotations

import pytest


def test_pytests_terminal_writer_keeps_the_line_it_is_writing(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfigure()
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    writer = reporter._tw
    writer.write("tests/test_a.py ..")
    assert writer._current_line == "tests/test_a.py .."


def test_xdist_distributes_by_the_option_the_plugin_rewrites(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    assert pytester.parseconfig("-p", "xdist").option.dist == "no"
    assert pytester.parseconfig("-p", "xdist", "--dist", "load").option.dist == "load"
    assert pytester.parseconfig("-p", "xdist", "--dist", "loadscope").option.dist == "loadscope"
