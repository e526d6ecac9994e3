"""The other tools of a tool's home (its server, its package), as its certification keeps them:
those that may still prepare its world, what their calls made, and which of them read it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._observation import SubjectInfo
from axm_conformance._process._containment import refusal
from axm_conformance._settings import Settings
from axm_conformance._strategies import property_names, singular

__all__ = ["Together", "weight"]

# The calls per tool whose world is read (see _world.read_world), and the read-only tools read:
# each reading costs a call of the tool and three of each.
_READINGS = 2
_READERS = 2


@dataclass
class Together:
    """The other tools of the tool's home, and what their calls made."""

    # By reference: the tools loaded beside the tool certified that may still prepare its world.
    tools: dict[str, SubjectInfo]
    # Values the steps' calls carried, as (member name, value), the most recent last.
    kept: list[tuple[str, str | int]] = field(default_factory=list)
    # By reference: an input each tool served, to read the world with (read-only tools).
    served: dict[str, Any] = field(default_factory=dict)
    readings: int = _READINGS

    @classmethod
    def of(
        cls, subject: SubjectInfo, subjects: Iterable[SubjectInfo], settings: Settings
    ) -> Together:
        """The tools of ``subject``'s home among ``subjects`` that the settings let be called."""
        tools = {
            other.ref: other
            for other in subjects
            if subject.shares_home(other) and refusal(settings, other.effects) is None
        }
        return cls(tools)

    def readers(self, subject: SubjectInfo) -> list[SubjectInfo]:
        """The tools that declare themselves read-only (MCP's readOnlyHint), whose results are
        the world as the tool's server shows it: at most _READERS, those that need no input
        first (they read the server's state as a whole: a history, a listing), then those whose
        names the subject shares (see weight)."""
        readers = [
            tool for tool in self.tools.values() if tool.annotations.get("readOnlyHint") is True
        ]
        return sorted(readers, key=lambda tool: (_needs_input(tool), -weight(tool, subject)))[
            :_READERS
        ]


def _needs_input(tool: SubjectInfo) -> bool:
    schema = tool.input_schema
    return not isinstance(schema, dict) or bool(schema.get("required"))


def weight(tool: SubjectInfo, subject: SubjectInfo) -> int:
    """How much ``tool`` is chosen to prepare ``subject``'s world: more when it may change the
    world (it does not declare itself read-only), more when a name of the subject's properties
    is a name of the tool's properties or of its output's, or a word of its name (a writer's
    ``sheet`` for a reader's ``sheet``, a creator's ``id`` for a getter's, ``list_terms`` for a
    lookup's ``term``)."""
    names = {singular(name) for name in property_names(subject.input_schema)}
    offered = property_names(tool.input_schema) | property_names(tool.output_schema)
    offered |= set(
        re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", str(tool.name)).lower())
    )
    shared = names & {singular(name) for name in offered if name}
    return 1 + (tool.annotations.get("readOnlyHint") is not True) + 3 * bool(shared)
