"""Amplifier tools: ``await execute(input)`` with one input dict, returning a ToolResult.

Published as ``mount(coordinator, config)`` functions in the ``amplifier.modules`` group: each
tool a module mounts (or returns) is a tool under test.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from axm_conformance.protocols.base import (
    Cleanups,
    Loaded,
    LoadError,
    Missing,
    Policy,
    ResultModel,
    Runner,
    ToolProtocol,
    cause,
    read,
)

__all__ = ["AmplifierProtocol"]


class AmplifierProtocol(ToolProtocol):
    name = "amplifier"
    title = "Amplifier"
    capabilities = frozenset({"in-process", "python-exceptions", "description", "output-schema"})
    entry_point_groups = ("amplifier.modules",)
    detection_order = 40
    # An execute that takes the input dict is an AXM shape too.
    narrows = ("axm",)
    # amplifier-core carries errors as {"message": ...}; the contract documents a str: both occur.
    result = ResultModel(
        "tool-result",
        {
            "success": ("bool",),
            "output": (),
            "error": ("str", "dict", "NoneType"),
            "metadata": ("dict", "NoneType"),
        },
        structured_field="output",
    )
    # amplifier-core's orchestrators (amplifier-module-loop-basic) await execute inside
    # `except Exception`, emit tool:error and give the model "Error executing tool: ...". They
    # validate nothing before execute.
    policy = Policy(
        exception_absorber=(
            "Amplifier's orchestrator turns an exception escaping execute into an error result "
            "and a tool:error event; return a failed ToolResult instead"
        )
    )
    call_snippet = "asyncio.run(tool.execute({input}))"
    hints = {
        "description-present": "the orchestrator reads the tool's description property",
    }
    expects_async = True

    @classmethod
    def detects(cls, obj: Any) -> bool:
        execute = read(obj, "execute")
        return not isinstance(execute, Missing) and _takes_one_input_dict(obj, execute)

    @classmethod
    def published(cls, ref: str, obj: Any, run: Runner, cleanups: Cleanups | None) -> Loaded:
        """Mount an Amplifier module; each tool it mounts, or returns, is a tool under test.

        What ``mount`` returns is otherwise its cleanup, called with the coordinator's own.
        """
        coordinator = _coordinator()
        try:
            returned = run(obj(coordinator, {}))
        except BaseException as exc:
            raise LoadError(f"{ref!r}: mount(coordinator, {{}}) raised {cause(exc)}") from None
        if cleanups is not None:
            cleanups.append(coordinator.cleanup)
        tools: dict[str, Any] = dict(coordinator.mount_points.get("tools") or {})
        if hasattr(returned, "execute"):
            if not any(tool is returned for tool in tools.values()):
                name = getattr(returned, "name", None)
                tools[name if isinstance(name, str) and name else "returned"] = returned
        elif callable(returned) and cleanups is not None:
            cleanups.append(returned)
        if not tools:
            raise LoadError(f"{ref!r}: the module mounted no tools")
        return [(f"{ref}[{key}]", tool, cls.name) for key, tool in sorted(tools.items())]

    def input_schema(self) -> tuple[Any, str, str]:
        schema, source, error = super().input_schema()
        if schema is None:
            error = "declares no input_schema: the orchestrator has nothing to tell the model"
        return schema, source, error

    async def call(self, input: Any) -> Any:
        result = self.obj.execute(input)
        return await result if inspect.isawaitable(result) else result


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


def _coordinator() -> Any:
    """amplifier-core's test coordinator when it is installed, else the reference one: a module
    may use any member of the coordinator it was written against, not only ``mount``."""
    try:
        testing = importlib.import_module("amplifier_core.testing")
    except ImportError:
        from axm_runtime.amplifier import Coordinator

        return Coordinator()
    return testing.MockCoordinator()
