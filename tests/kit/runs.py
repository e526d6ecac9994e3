"""What several end-to-end tests do with a pytest subprocess: certify a tool the way a user
does, and read the reproduction a failure's report prints."""

from __future__ import annotations

import json
import shlex
from typing import Any

import pytest

__all__ = ["certified", "reproduction"]


def certified(
    project: pytest.Pytester, ref: str, *options: str
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """Certify ``ref`` in a pytest subprocess at a fixed seed: the run, and its certificate."""
    result = project.runpytest_subprocess(
        "--axm-conformance",
        f"--axm-tool={ref}",
        "--axm-examples=20",
        "--axm-seed=7",
        "--axm-report=certificate.json",
        "-p",
        "no:cacheprovider",
        *options,
    )
    document = json.loads((project.path / "certificate.json").read_text())
    return result, document


def reproduction(result: pytest.RunResult) -> tuple[list[str], str]:
    """The pytest command and the Python code under the first "Reproduce with:"."""
    lines = result.stdout.lines
    start = lines.index("Reproduce with:")
    command = shlex.split(lines[start + 1])
    code: list[str] = []
    if lines[start + 2] == "or in Python:":
        # The snippet is the indented block right after; with CI set, pytest's summary repeats
        # whole reports further down, so the block ends at the first line that is not indented.
        for line in lines[start + 3 :]:
            if not line.startswith("    "):
                break
            code.append(line[4:])
    return command, "\n".join(code)
