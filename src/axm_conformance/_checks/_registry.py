"""The check registry: each check is a small named function with a stable id.

A check states violations and nothing else: it yields one sentence per violation. The engine adds
the tool, the input, the traceback and how to reproduce. A check's title is the first line of its
docstring. Static checks see the tool's description; per-call checks also see one call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from axm_conformance._observation import Call, SubjectInfo, canonical_json

__all__ = ["CHECKS", "FEEDS", "GROUPS", "Check", "Context", "Note", "Warn", "check"]


class Warn(str):
    """A violation that is only a warning unless the run is strict (``--axm-strict``)."""

    __slots__ = ()


class Note(str):
    """Not a violation: a fact worth reporting about a check that passed (a peak seen)."""

    __slots__ = ()


@dataclass
class Context:
    """What a check may consult besides the tool: settings, the other tools, shared caches."""

    settings: Any
    subjects: tuple[SubjectInfo, ...] = ()
    _validators: dict[str, Any] = field(default_factory=dict)

    def validator(self, schema: Any) -> Any:
        """A jsonschema validator for ``schema`` (its own draft, else 2020-12), built once.

        ``format`` stays an annotation, as JSON Schema 2020-12 specifies by default.
        """
        key = canonical_json(schema)
        if key not in self._validators:
            cls = validator_for(schema, default=Draft202012Validator)
            self._validators[key] = cls(schema)
        return self._validators[key]


Applies = Callable[[SubjectInfo], str | None]
StaticCheck = Callable[[SubjectInfo, Context], Iterator[str]]
CallCheck = Callable[[SubjectInfo, Call, Context], Iterator[str]]


def always(subject: SubjectInfo) -> str | None:
    return None


@dataclass(frozen=True)
class Check:
    """A registered check. ``applies`` gives the reason to skip it for a tool, or None.

    A per-call check judges every call whose status is in ``considers``; the calls it judged are
    the examples it ran. Its ``feed`` says which calls those are: "valid" inputs, "invalid" ones
    (one mistake each), or the probes "guards", "crashing-guard" and "concurrency" (calls of an
    instrumented copy of the tool). A check that ``repeats`` gets each input called a second
    time. A check with an ``opt_out`` names the setting (pairs of tool name and reason) that
    exempts a tool from it.
    """

    id: str
    title: str
    group: str
    function: Callable[..., Iterator[str]]
    applies: Applies
    considers: frozenset[str] = frozenset()
    repeats: bool = False
    opt_out: str = ""
    feed: str = "valid"

    @property
    def per_call(self) -> bool:
        return bool(self.considers)


CHECKS: dict[str, Check] = {}
# Checks run and are listed group by group, cheapest and most fundamental first.
GROUPS = (
    "structure",
    "schema",
    "calls",
    "results",
    "behaviour",
    "invalid",
    "guards",
    "concurrency",
)
FEEDS = ("valid", "invalid", "guards", "crashing-guard", "concurrency")


def check(
    id: str,
    group: str,
    *,
    applies: Applies = always,
    considers: tuple[str, ...] = (),
    repeats: bool = False,
    opt_out: str = "",
    feed: str = "valid",
) -> Callable[[Callable[..., Iterator[str]]], Callable[..., Iterator[str]]]:
    """Register a check under a stable ``id``; its docstring's first line is its title."""

    def register(function: Callable[..., Iterator[str]]) -> Callable[..., Iterator[str]]:
        if id in CHECKS:
            raise ValueError(f"check id {id!r} is registered twice")
        if group not in GROUPS:
            raise ValueError(f"check {id!r} names an unknown group {group!r}")
        if feed not in FEEDS:
            raise ValueError(f"check {id!r} names an unknown feed {feed!r}")
        title = inspect.getdoc(function) or ""
        CHECKS[id] = Check(
            id=id,
            title=title.splitlines()[0] if title else id,
            group=group,
            function=function,
            applies=applies,
            considers=frozenset(considers),
            repeats=repeats,
            opt_out=opt_out,
            feed=feed,
        )
        return function

    return register
