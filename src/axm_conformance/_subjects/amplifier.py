"""Amplifier tools: ``await execute(input)`` with one input dict, returning a ToolResult."""

from __future__ import annotations

import inspect
from typing import Any

from axm_conformance._observation import SubjectInfo
from axm_conformance._subjects._base import (
    Adapter,
    Missing,
    is_async_callable,
    read,
    signature_facts,
)
from axm_conformance._subjects.axm import _declared_output_schema

__all__ = ["AmplifierAdapter"]


class AmplifierAdapter(Adapter):
    protocol = "amplifier"
    returns = "tool-result"
    # amplifier-core carries errors as {"message": ...}; the contract documents a str: both occur.
    result_fields = {
        "success": ("bool",),
        "output": (),
        "error": ("str", "dict", "NoneType"),
        "metadata": ("dict", "NoneType"),
    }
    structured_field = "output"
    # amplifier-core's orchestrators (amplifier-module-loop-basic) await execute inside
    # `except Exception`, emit tool:error and give the model "Error executing tool: ...". They
    # validate nothing before execute.
    exception_absorber = (
        "Amplifier's orchestrator turns an exception escaping execute into an error result "
        "and a tool:error event; return a failed ToolResult instead"
    )

    def describe(self) -> SubjectInfo:
        execute = read(self.obj, "execute")
        parameters, takes_var_keyword, has_signature = signature_facts(execute)
        schema = read(self.obj, "input_schema")
        error = (
            "declares no input_schema: the orchestrator has nothing to tell the model"
            if isinstance(schema, Missing)
            else ""
        )
        return self._info(
            variant="",
            has_description=True,
            input_schema=None if isinstance(schema, Missing) else schema,
            schema_source="" if error else "declared",
            schema_error=error,
            output_schema=_declared_output_schema(self.obj),
            call_style="dict",
            callable_name="execute",
            callable_present=not isinstance(execute, Missing),
            callable_is_callable=callable(execute),
            callable_is_async=is_async_callable(execute),
            expects_async=True,
            parameters=parameters,
            takes_var_keyword=takes_var_keyword,
            has_signature=has_signature,
        )

    async def call(self, input: Any) -> Any:
        result = self.obj.execute(input)
        return await result if inspect.isawaitable(result) else result
