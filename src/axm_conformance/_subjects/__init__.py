"""Protocol adapters: which protocol a tool follows, and how to describe and call it.

Detection rule, first match wins:

1. the protocol named by ``--axm-protocol``, or implied by the entry-point group the tool came
   from (``axm.tools``, ``axm.tribunal.tools``, ``axio.tools``, ``amplifier.modules``);
2. ``tool_use``: a ``@tool``-decorated function, or an object with ``handler`` and
   ``output_schema`` (a ``ToolEntry``);
3. ``axio``: an object with a ``handler`` (a ``Tool`` wrapping an ``async def`` or a
   ``ToolHandler``);
4. ``amplifier``: an object whose ``execute`` takes exactly one required positional parameter
   that is the input dict: named ``input``, annotated as a mapping, or unannotated on an object
   that declares ``input_schema``;
5. ``axm``: any other object with an ``execute``;
6. otherwise no protocol: the ``protocol-shape`` check fails, listing what is missing.

Whether ``execute`` is sync or async does not decide the protocol: an Amplifier-shaped tool with a
synchronous ``execute`` is an Amplifier tool that fails ``callable-shape``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from axm_conformance._observation import SubjectInfo
from axm_conformance._subjects._base import Adapter, Missing, read
from axm_conformance._subjects.amplifier import AmplifierAdapter
from axm_conformance._subjects.axio import AxioAdapter
from axm_conformance._subjects.axm import AXMAdapter
from axm_conformance._subjects.tool_use import ToolUseAdapter, entry_of

__all__ = ["ADAPTERS", "Adapter", "adapter_for"]

ADAPTERS: dict[str, type[Adapter]] = {
    "axm": AXMAdapter,
    "axio": AxioAdapter,
    "tool_use": ToolUseAdapter,
    "amplifier": AmplifierAdapter,
}


class UnknownAdapter(Adapter):
    """An object that matches no protocol: described, never called."""

    protocol = "unknown"
    returns = "json"

    def describe(self) -> SubjectInfo:
        missing = []
        if isinstance(read(self.obj, "name"), Missing):
            missing.append("a `name`")
        missing.append("an `execute` method (AXM, Amplifier) or a `handler` (axio, tool_use)")
        return self._info(
            variant=type(self.obj).__name__,
            has_description=False,
            input_schema=None,
            schema_source="",
            schema_error="",
            output_schema=None,
            call_style="none",
            callable_name="execute",
            callable_present=False,
            callable_is_callable=False,
            callable_is_async=False,
            expects_async=False,
            parameters=(),
            takes_var_keyword=False,
            has_signature=False,
            missing=tuple(missing),
        )

    def call(self, input: Any) -> Any:
        raise TypeError(f"{type(self.obj).__name__} matches no tool protocol")


def _takes_one_input_dict(obj: Any, execute: Any) -> bool:
    try:
        signature = inspect.signature(execute)
    except (TypeError, ValueError):
        return False
    required = [
        p
        for p in signature.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if len(required) != 1 or required[0].kind is inspect.Parameter.KEYWORD_ONLY:
        return False
    (parameter,) = required
    annotation = parameter.annotation
    if isinstance(annotation, str):
        mapping_annotation = annotation.split("[")[0].strip() in {"dict", "Dict", "Mapping"}
    else:
        origin = getattr(annotation, "__origin__", annotation)
        mapping_annotation = isinstance(origin, type) and issubclass(origin, Mapping)
    unannotated = annotation is inspect.Parameter.empty
    declares_schema = not isinstance(read(obj, "input_schema"), Missing)
    return parameter.name == "input" or mapping_annotation or (unannotated and declares_schema)


def detect(obj: Any) -> str:
    """The protocol ``obj`` follows by the detection rule (steps 2 to 6)."""
    if not isinstance(read(obj, "tool_entry"), Missing):
        return "tool_use"
    has_handler = not isinstance(read(obj, "handler"), Missing)
    if has_handler and not isinstance(read(obj, "output_schema"), Missing):
        return "tool_use"
    if has_handler:
        return "axio"
    execute = read(obj, "execute")
    if isinstance(execute, Missing):
        return "unknown"
    return "amplifier" if _takes_one_input_dict(obj, execute) else "axm"


def adapter_for(obj: Any, ref: str, protocol: str = "auto") -> Adapter:
    """The adapter for ``obj``: the named protocol's, or the detected one's."""
    chosen = detect(obj) if protocol == "auto" else protocol
    if chosen == "tool_use":
        obj = entry_of(obj)
    return ADAPTERS.get(chosen, UnknownAdapter)(obj, ref)
