"""Structural checks: what a tool declares, read without calling it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._observation import SubjectInfo
from axm_conformance._outcomes import note, warning

__all__: list[str] = []


def _recognised(subject: SubjectInfo) -> str | None:
    return "the object matches no tool protocol" if subject.protocol == "unknown" else None


@check("protocol-shape", "structure")
def protocol_shape(subject: SubjectInfo, context: CheckContext) -> Found:
    """The object has the members of a tool protocol."""
    if subject.protocol == "unknown":
        yield f"a {subject.variant} object matches no tool protocol: it lacks " + " and ".join(
            subject.missing
        )
    elif subject.also_detected:
        yield warning(
            f"it has the shape of {' and '.join(subject.also_detected)} tools too, and was "
            f"certified as {subject.protocol_title}'s, whose detection_order is lower: name "
            "the protocol meant with --axm-protocol"
        )


@check("name-valid", "structure", applies=_recognised)
def name_valid(subject: SubjectInfo, context: CheckContext) -> Found:
    """The name is a string that every client accepts as a tool name."""
    pattern, rule = context.settings.name_pattern, subject.policy.name_rule
    if subject.name_type != "str":
        yield f"the name is {subject.name_type}, not a str"
    elif rule and not re.fullmatch(rule, subject.name):
        yield f"the name {subject.name!r} breaks the {subject.protocol_title} rule {rule}"
    elif not re.fullmatch(pattern, subject.name):
        message = f"the name {subject.name!r} does not match {pattern}"
        yield warning(f"{message}, which not every client accepts") if rule else message


def _shadow(subject: SubjectInfo, refs: set[str]) -> str | None:
    """The tool under test that the protocol's runtime loads instead of ``subject``, if any."""
    return next((ref for ref in subject.shadowed_by if ref in refs), None)


@check("name-unique", "structure", applies=_recognised)
def name_unique(subject: SubjectInfo, context: CheckContext) -> Found:
    """No other tool under test has the same name."""
    refs = {other.ref for other in context.subjects}
    shadow = _shadow(subject, refs)
    if shadow is not None:
        yield note(
            f"shadowed by {shadow}, to which the {subject.protocol_title} runtime resolves the name"
        )
        return
    others = [
        other.ref
        for other in context.subjects
        if other.ref != subject.ref
        and other.name_type == "str"
        and other.name == subject.name
        and _shadow(other, refs) is None
    ]
    if subject.name_type == "str" and others:
        yield f"the name {subject.name!r} is also the name of " + ", ".join(others)


@check("description-present", "structure", requires=("description",))
def description_present(subject: SubjectInfo, context: CheckContext) -> Found:
    """The description the model reads is a non-empty string."""
    if subject.description_type == "missing" and not subject.policy.description_required:
        yield warning(
            f"the tool has no description: the {subject.protocol_title} protocol makes it "
            "optional, but the model then has only the name to choose the tool by"
        )
    elif subject.description_type != "str":
        yield f"the description is {subject.description_type}, not a str"
    elif not subject.description.strip():
        yield "the description is empty"


@check("callable-shape", "structure", applies=_recognised, requires=("in-process",))
def callable_shape(subject: SubjectInfo, context: CheckContext) -> Found:
    """The execute method or handler exists, is callable, and is sync or async as required."""
    target = subject.callable
    name = target.name
    if not target.present:
        yield f"there is no {name}"
        return
    if not target.is_callable:
        yield f"{name} is not callable"
        return
    if target.expects_async and not target.is_async:
        yield f"{name} is not async def, but the {subject.protocol} protocol awaits it"
    if not target.expects_async and target.is_async:
        yield f"{name} is async def, but the {subject.protocol} protocol calls it synchronously"
    if subject.call_style == "keywords":
        for parameter in target.parameters:
            if parameter.kind == "POSITIONAL_ONLY":
                yield (
                    f"parameter {parameter.name!r} of {name} is positional-only: "
                    "the caller passes every argument by keyword"
                )


_METADATA_TYPES: dict[str, tuple[str, Callable[[str, Any], bool]]] = {
    "expose_directly": ("a bool", lambda kind, value: kind == "bool"),
    "domain": ("a str or None", lambda kind, value: kind in ("str", "NoneType")),
    "agent_hint": ("a str or None", lambda kind, value: kind in ("str", "NoneType")),
    "tags": (
        "a set, frozenset, list or tuple of str",
        lambda kind, value: (
            kind in ("set", "frozenset", "list", "tuple")
            and all(isinstance(tag, str) for tag in value)
        ),
    ),
}


@check(
    "axm-metadata-types",
    "structure",
    applies=lambda s: None if s.metadata else "the tool declares no discovery metadata",
    requires=("discovery-metadata",),
)
def axm_metadata_types(subject: SubjectInfo, context: CheckContext) -> Found:
    """Discovery metadata (expose_directly, domain, tags, agent_hint) has the documented types."""
    for key, (kind, value) in sorted(subject.metadata.items()):
        expected, accepts = _METADATA_TYPES[key]
        if not accepts(kind, value):
            yield f"{key} is {kind} {value!r}, expected {expected}"
