"""The check registry: each check is a small named function with a stable id.

A check states violations and nothing else: it yields one sentence per violation (a ``str`` is a
failure; :func:`~axm_conformance._outcomes.warning`, ``note`` and ``not_run`` make the other
findings). The engine adds the tool, the input, the traceback and how to reproduce. A check's
title is the first line of its docstring. Static checks see the tool's description; per-call
checks also see one call. A check that needs something only some protocols offer requires that
capability, and never names a protocol.

:func:`check` is public (``axm_conformance.check``): a project registers a check of its own by
decorating a function in a module it imports (its ``conftest.py``), a package by naming such a
module under the entry-point group ``axm_conformance.checks`` (as the MCP protocol registers its
wire and server checks). conformance/custom-checks.md documents it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.validators import validator_for

from axm_conformance._feeds import FEEDS, VALID, Feed
from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Call, SubjectInfo
from axm_conformance._outcomes import Finding, Severity, note
from axm_conformance.protocols import RegistryError, capabilities, groups

__all__ = [
    "CHECKS",
    "ENTRY_POINT_GROUP",
    "STATUSES",
    "Check",
    "CheckContext",
    "check",
    "checks_for",
    "first_few",
    "load_check_plugins",
]

# The entry-point group naming modules whose import registers checks.
ENTRY_POINT_GROUP = "axm_conformance.checks"
# What a call may end in; a per-call check considers some of them.
STATUSES = ("returned", "raised", "crashed", "rejected")


@dataclass
class CheckContext:
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


# Why a check does not apply to a tool: a str when it has nothing to judge there (skipped), a
# not-run finding when it would apply but what it needs failed first; None when it applies.
Applies = Callable[[SubjectInfo], str | Finding | None]
Found = Iterator[str | Finding]


def first_few(findings: Sequence[str], what: str, shown: int = 3) -> Found:
    """The first few of many findings of one kind, then how many more ``what`` there are."""
    yield from findings[:shown]
    if len(findings) > shown:
        yield f"... and {len(findings) - shown} more {what}"


def always(subject: SubjectInfo) -> str | None:
    return None


@dataclass(frozen=True)
class Check:
    """A registered check. ``applies`` gives the reason to skip it for a tool, or None.

    A per-call check judges every call whose status is in ``considers``; the calls it judged are
    the examples it ran. Its ``feed`` says which calls those are (see :mod:`_feeds`). A check
    that ``repeats`` gets each input called a second time. A check with an ``opt_out`` names the
    setting (pairs of tool name and reason) that exempts a tool from it. ``requires`` names the
    capabilities a tool's protocol must offer for the check to apply. A check's ``subject`` is
    one tool, or a server of tools as a whole (an MCP server's handshake, listing, shutdown).
    A check that ``varies`` gets, for each valid input the tool refused, the calls of its
    variations (see :func:`axm_conformance._strategies.variations`). A check that
    ``reads_world`` gets, for the first few valid calls served (alone, or after other tools of
    the tool's server or package prepared its world), what the read-only ones among those tools
    return after the call and after it again (``Call.world``). A check that is ``revealed``
    judges only what other checks' failures lead the engine to (see the engine's blame): run
    alone it finds nothing, so a reproduction of its failure runs every check.
    """

    id: str
    title: str
    group: str
    function: Callable[..., Found]
    applies: Applies
    considers: frozenset[str] = frozenset()
    repeats: bool = False
    opt_out: str = ""
    feed: Feed = VALID
    requires: tuple[str, ...] = ()
    subject: Literal["tool", "server"] = "tool"
    varies: bool = False
    reads_world: bool = False
    revealed: bool = False

    @property
    def per_call(self) -> bool:
        return bool(self.considers)

    def skip_reason(self, subject: SubjectInfo) -> Finding | None:
        """Why the check is not run on the tool, or None when it is: a note when it does not
        apply (a capability the protocol lacks, or the check's own reason), a not-run finding
        when it could not run."""
        for capability in self.requires:
            if not subject.offers(capability):
                return note(
                    f"the {subject.protocol_title} protocol does not offer "
                    f"{capabilities()[capability]} ({capability})"
                )
        reason = self.applies(subject)
        return note(reason) if isinstance(reason, str) else reason

    def findings(
        self, subject: SubjectInfo, call: Call | None, context: CheckContext
    ) -> tuple[Finding, ...]:
        """What the check finds about the tool (and the call, for a per-call check)."""
        found = (
            self.function(subject, context)
            if call is None
            else self.function(subject, call, context)
        )
        return tuple(item if isinstance(item, Finding) else Finding(item) for item in found)

    def violations(
        self, subject: SubjectInfo, call: Call | None, context: CheckContext
    ) -> tuple[Finding, ...]:
        """The findings that are violations (failures, warnings), not notes."""
        return tuple(
            finding
            for finding in self.findings(subject, call, context)
            if finding.severity is not Severity.NOTE
        )


CHECKS: dict[str, Check] = {}


def check(
    id: str,
    group: str,
    *,
    applies: Applies = always,
    considers: tuple[str, ...] = (),
    repeats: bool = False,
    opt_out: str = "",
    feed: Feed | str = VALID,
    requires: tuple[str, ...] = (),
    subject: Literal["tool", "server"] = "tool",
    varies: bool = False,
    reads_world: bool = False,
    revealed: bool = False,
) -> Callable[[Callable[..., Found]], Callable[..., Found]]:
    """Register a check under a stable ``id``; its docstring's first line is its title.

    ``group`` is one of :func:`~axm_conformance.protocols.groups` (checks run and are listed
    group by group: the groups protocols define, then the core's). A check with
    ``considers`` (statuses of :data:`STATUSES`) is called once per call of its ``feed`` (a name
    of :data:`~axm_conformance._feeds.FEEDS`, "valid" by default) as ``function(subject, call,
    context)``; one without, once per tool as ``function(subject, context)``. ``requires``
    names capabilities of :func:`~axm_conformance.protocols.capabilities` (the core's, and those
    the protocols define). A registration that
    names anything unknown raises :class:`ValueError` saying what it knows.
    """
    chosen = FEEDS.get(feed) if isinstance(feed, str) else feed
    known_groups, known_capabilities = groups(), capabilities()
    problems = [
        *([f"id {id!r} is registered twice"] if id in CHECKS else []),
        *(
            [f"an unknown group {group!r} (known: {', '.join(known_groups)})"]
            if group not in known_groups
            else []
        ),
        *[
            f"an unknown status {status!r} to consider (known: {', '.join(STATUSES)})"
            for status in considers
            if status not in STATUSES
        ],
        *([f"an unknown feed {feed!r} (known: {', '.join(FEEDS)})"] if chosen is None else []),
        *[
            f"an unknown capability {capability!r} (known: {', '.join(known_capabilities)})"
            for capability in requires
            if capability not in known_capabilities
        ],
    ]
    if problems:
        raise ValueError(f"check {id!r}: {'; '.join(problems)}")
    assert chosen is not None

    def register(function: Callable[..., Found]) -> Callable[..., Found]:
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
            feed=chosen,
            requires=requires,
            subject=subject,
            varies=varies,
            reads_world=reads_world,
            revealed=revealed,
        )
        # Listed in group order whenever registered, stable within a group.
        order = groups()
        ordered = sorted(CHECKS.values(), key=lambda registered: order.index(registered.group))
        CHECKS.clear()
        CHECKS.update((registered.id, registered) for registered in ordered)
        return function

    return register


@functools.cache
def load_check_plugins() -> tuple[str, ...]:
    """Import every module registered under :data:`ENTRY_POINT_GROUP` (which registers its
    checks), once; the names of their entry points. :class:`RegistryError` names one that
    cannot be imported."""
    loaded = []
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry_point.load()
        except Exception as exc:
            raise RegistryError(
                f"check entry point {entry_point.name!r} ({entry_point.value}) of group "
                f"{ENTRY_POINT_GROUP} raised {type(exc).__name__} on loading: {exc}"
            ) from None
        loaded.append(entry_point.name)
    return tuple(loaded)


def checks_for(kind: str, ids: Iterable[str] = ()) -> list[Check]:
    """The checks of a subject of this kind ("tool", "server"): those of ``ids``, or all
    (those the check plugins register included)."""
    load_check_plugins()
    return [CHECKS[check_id] for check_id in (ids or CHECKS) if CHECKS[check_id].subject == kind]
