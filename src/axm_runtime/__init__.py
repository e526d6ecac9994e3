"""Reference runtime of the tool protocols certified by axm-conformance.

One module per protocol: :mod:`axm_runtime.axm`, :mod:`axm_runtime.axio`,
:mod:`axm_runtime.tool_use` and :mod:`axm_runtime.amplifier`; small correct tools of each in
:mod:`axm_runtime.examples`; JSON Schema validation with ECMA-262 regular expressions in
:mod:`axm_runtime.schema`. The runtime depends on pydantic, jsonschema and regress, and never
imports pytest or Hypothesis.
"""

__all__: list[str] = []
