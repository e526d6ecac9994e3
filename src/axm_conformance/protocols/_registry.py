"""The registered protocols, and which one a tool follows.

Protocols are registered under the entry-point group ``axm_conformance.protocols``, the kit's
own like any other; each entry point names a :class:`ToolProtocol` subclass.

Detection rule, first match wins:

1. the protocol named by ``--axm-protocol``, or implied by the entry-point group the tool came
   from (each protocol lists its groups);
2. the protocols in their ``detection_order``, the most specific shape first (where another
   protocol detects the object too, and the first does not declare that it ``narrows`` it, the
   ``protocol-shape`` check warns, naming both): for the kit's own,
   ``tool_use`` (a ``@tool``-decorated function, or an object with ``handler`` and
   ``output_schema``), ``axio`` (an object with a ``handler``), ``amplifier`` (an ``execute``
   that takes exactly one required positional parameter, the input dict: named ``input``,
   annotated as a mapping, or unannotated on an object that declares ``input_schema``), ``axm``
   (any other object with an ``execute``);
3. otherwise no protocol: the ``protocol-shape`` check fails, listing what is missing. An object
   with no mark of a tool at all (no ``name``, no member a protocol calls: a number, a dict, a
   synchronous function) is not certified: loading it is a usage error saying what a tool has.

Whether ``execute`` is sync or async does not decide the protocol: an Amplifier-shaped tool with a
synchronous ``execute`` is an Amplifier tool that fails ``callable-shape``.
"""

from __future__ import annotations

import functools
import inspect
import reprlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from axm_conformance._observation import CallableInfo, SubjectInfo
from axm_conformance.protocols.base import Missing, Profile, RegistryError, ToolProtocol, read

__all__ = [
    "ENTRY_POINT_GROUP",
    "UnknownProtocol",
    "detect",
    "entry_point_groups",
    "not_a_tool",
    "profile_of_ref",
    "profiles",
    "protocol_for",
    "protocol_named",
    "protocol_of_ref",
    "registered",
    "tool_from",
]

ENTRY_POINT_GROUP = "axm_conformance.protocols"


@functools.cache
def registered() -> dict[str, type[ToolProtocol]]:
    """Every registered protocol by name, in detection order."""
    found: dict[str, type[ToolProtocol]] = {}
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            protocol = entry_point.load()
        except Exception as exc:
            raise RegistryError(
                f"protocol entry point {entry_point.name!r} ({entry_point.value}) of group "
                f"{ENTRY_POINT_GROUP} raised {type(exc).__name__} on loading: {exc}"
            ) from None
        if not (isinstance(protocol, type) and issubclass(protocol, ToolProtocol)):
            raise RegistryError(
                f"protocol entry point {entry_point.name!r} ({entry_point.value}) is not a "
                "subclass of axm_conformance.protocols.ToolProtocol"
            )
        if found.get(protocol.name, protocol) is not protocol:
            raise RegistryError(f"two protocols are registered under the name {protocol.name!r}")
        found[protocol.name] = protocol
    if not found:
        raise RegistryError(
            f"no protocol is registered under the entry-point group {ENTRY_POINT_GROUP}: "
            "reinstall axm-conformance (pip install axm-conformance, or pip install -e .)"
        )
    ordered = sorted(found.values(), key=lambda protocol: (protocol.detection_order, protocol.name))
    for protocol in ordered:
        protocol.profile()  # what it declares is held to the registry's rules now, not mid-run
    return {protocol.name: protocol for protocol in ordered}


def profiles() -> dict[str, Profile]:
    """Every registered protocol's face in the kit's process, by name, in detection order:
    what the kit's process reads of a protocol (its adapter, :func:`registered`, is the
    worker's)."""
    return {name: protocol.profile() for name, protocol in registered().items()}


def protocol_named(name: str) -> type[ToolProtocol]:
    """The registered protocol of this name; :class:`UnknownProtocol` for any other."""
    return registered().get(name, UnknownProtocol)


def profile_of_ref(ref: str) -> Profile | None:
    """The profile of the protocol that loads ``ref`` itself (its ``ref_prefix`` starts it),
    if any."""
    return next(
        (
            profile
            for profile in profiles().values()
            if profile.ref_prefix and ref.startswith(profile.ref_prefix)
        ),
        None,
    )


def protocol_of_ref(ref: str) -> type[ToolProtocol] | None:
    """The adapter of the protocol that loads ``ref`` itself, if any."""
    profile = profile_of_ref(ref)
    return None if profile is None else registered()[profile.name]


def entry_point_groups() -> dict[str, str]:
    """The entry-point groups tools are published in, by name, each with the protocol it
    implies."""
    groups = {
        group: name for name, profile in profiles().items() for group in profile.entry_point_groups
    }
    return dict(sorted(groups.items()))


def detect(obj: Any) -> str:
    """The protocol ``obj`` follows by the detection rule (steps 2 and 3)."""
    return next(
        (name for name, protocol in registered().items() if protocol.detects(obj)), "unknown"
    )


def tool_from(ref: str, obj: Any, hint: str) -> Any:
    """The tool a loaded object stands for under the protocol ``hint`` ("auto": any)."""
    if hint != "auto":
        tool = protocol_named(hint).tool_named(ref, obj)
        return obj if tool is None else tool
    for protocol in registered().values():
        tool = protocol.tool_from(ref, obj)
        if tool is not None:
            return tool
    return obj


def protocol_for(obj: Any, ref: str, protocol: str = "auto") -> ToolProtocol:
    """The protocol ``obj`` follows (the one named, or the detected one), wrapping it.

    An object named as one protocol's (by ``--axm-protocol`` or its entry-point group) that
    lacks the member that protocol calls, and has another protocol's shape, matches no
    protocol: its description says which one it looks like.
    """
    if protocol == "auto":
        detected = [found for found in registered().values() if found.detects(obj)]
        if not detected:
            return UnknownProtocol(obj, ref)
        winner, *others = detected
        chosen = winner(obj, ref)
        chosen.rivals = tuple(other.title for other in others if other.name not in winner.narrows)
        return chosen
    chosen = protocol_named(protocol)(obj, ref)
    if isinstance(read(chosen.obj, chosen.callable_name), Missing):
        looks_like = detect(obj)
        if looks_like not in ("unknown", protocol):
            # Described as what it looks like is (a decorated function's entry, say).
            shaped = protocol_named(looks_like)(obj, ref).obj
            return UnknownProtocol(shaped, ref, loaded_as=protocol, looks_like=looks_like)
    return chosen


def not_a_tool(obj: Any) -> str | None:
    """Why ``obj`` is neither a tool nor an attempt at one, in a sentence that says what a tool
    must have; None when it follows a protocol or has a mark of a tool (a ``name``, or a member
    that a protocol calls), which a check then judges."""
    marks = {"name", *(protocol.callable_name for protocol in _in_process())}
    if any(protocol.detects(obj) for protocol in registered().values()):
        return None
    # A read that raised is a mark too: the member is there, and a check will say it breaks.
    found = [read(obj, mark) for mark in marks]
    if any(not isinstance(value, Missing) or value.error for value in found):
        return None
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return (
            f"a synchronous function ({obj.__name__}), which no protocol calls: decorate it with "
            "axm_runtime.tool_use's @tool, or make it an `async def` handler (axio)"
        )
    return (
        f"{_a(type(obj).__name__)} ({reprlib.repr(obj)}), not a tool: a tool has a `name` and "
        f"a member an input reaches: {_members()}"
    )


def _in_process() -> list[type[ToolProtocol]]:
    """The protocols whose tools are objects here, not servers."""
    return [p for p in registered().values() if "in-process" in p.capabilities]


def _members() -> str:
    """The members the in-process protocols call, with the protocols that call each."""
    by_member: dict[str, list[str]] = {}
    for protocol in _in_process():
        by_member.setdefault(protocol.callable_name, []).append(protocol.title)
    return " or ".join(f"`{member}` ({', '.join(titles)})" for member, titles in by_member.items())


def _a(title: str) -> str:
    """A protocol's title with its indefinite article."""
    return f"{'an' if title[0] in 'AEIOUaeiou' else 'a'} {title}"


@dataclass
class UnknownProtocol(ToolProtocol):
    """An object that matches no protocol: described, never called. ``loaded_as`` is the
    protocol it was named as, when another one's shape (``looks_like``) is what it has."""

    name = "unknown"
    title = "unknown"
    loaded_as: str = ""
    looks_like: str = ""

    def describe(self) -> SubjectInfo:
        missing = []
        if isinstance(read(self.obj, "name"), Missing):
            missing.append("a `name`")
        if self.looks_like:
            missing.append(self._mistaken())
        else:
            missing.append(f"a member an input reaches: {_members()}")
        return self._info(
            variant=type(self.obj).__name__,
            input_schema=None,
            schema_source="",
            schema_error="",
            output_schema=None,
            call_style="none",
            callable=CallableInfo(
                name="execute",
                present=False,
                is_callable=False,
                is_async=False,
                expects_async=False,
            ),
            missing=tuple(missing),
        )

    def _mistaken(self) -> str:
        """What the object lacks as the protocol it was named as, and what it looks like."""
        named, looks = protocol_named(self.loaded_as), protocol_named(self.looks_like)
        where = ", or publish it in " + " or ".join(looks.entry_point_groups)
        return (
            f"the `{named.callable_name}` of {_a(named.title)} tool: it was loaded as "
            f"{named.title} (by --axm-protocol or its entry-point group), but it has the shape "
            f"of {_a(looks.title)} tool; certify it as one with --axm-protocol={looks.name}"
            + (where if looks.entry_point_groups else "")
        )

    def call(self, input: Any) -> Any:
        raise TypeError(f"{type(self.obj).__name__} matches no tool protocol")
