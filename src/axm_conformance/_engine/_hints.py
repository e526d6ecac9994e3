"""The values likely to reach a tool's domain, by source: the names of the worker files, its
source's literals, what its descriptions and its server's instructions name (see
_strategies.Hints)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from axm_conformance._observation import SubjectInfo
from axm_conformance._settings import Settings
from axm_conformance._strategies import Hints, described_values, structured_strings, told_of

__all__ = ["hints_for"]

# The first values of a source, the nearest to the tool, come before the strings built of them.
_NEAREST_HINTS = 16


def hints_for(subject: SubjectInfo, settings: Settings) -> Hints:
    """The values likely to reach the tool's domain, by source (see _strategies.Hints)."""
    told = told_of(subject.instructions, subject.name, subject.input_schema)
    described = described_values(subject.description, subject.input_schema, told)
    return Hints.of(
        {
            "worker-file": _worker_file_names(settings),
            "source-literal": _with_structured(subject.literals),
            "description": _with_structured(described),
        }
    )


def _with_structured(values: Sequence[str | int | float]) -> list[str | int | float]:
    """A source's values with the strings built of its tokens (see structured_strings):
    after its first values, the nearest to the tool, so that the placed inputs reach them."""
    nearest = _NEAREST_HINTS
    return [*values[:nearest], *structured_strings(values), *values[nearest:]]


def _worker_file_names(settings: Settings) -> list[str]:
    """The worker files as the tool finds them: paths relative to its working directory."""
    if settings.worker_files is None:
        return []
    root = Path(settings.worker_files)
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file())
