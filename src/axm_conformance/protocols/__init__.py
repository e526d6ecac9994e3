"""Tool protocols: what a protocol is to the kit, and the registry of those it knows.

A protocol is a :class:`ToolProtocol` subclass registered under the entry-point group
``axm_conformance.protocols``; the kit's own nine (AXM, axio, tool_use, Amplifier, MCP,
LangChain, smolagents, the OpenAI Agents SDK and Pydantic AI) are registered the same way.
Adding one takes one module, one entry point, a contract page and fixtures::

    [project.entry-points."axm_conformance.protocols"]
    mine = "my_package.conformance:MyProtocol"

A protocol says which objects follow it (:meth:`ToolProtocol.detects`), where they are
published (``entry_point_groups``), how to describe one and call it, its result model, its
severity policy (per tool where it varies: :meth:`ToolProtocol.tool_policy`), how a person makes
the same call (``call_snippet``), the probes it supports and the :data:`CAPABILITIES` it offers.
conformance/protocols.md documents every member. Checks require capabilities and never name a
protocol.

A protocol has two faces: the :class:`ToolProtocol` subclass is its adapter, through which the
worker loads and calls tools; its :class:`Profile`, made once from what the class declares, is
what the kit's process knows of it (:func:`profiles`, and the one every tool carries).

A protocol whose tools live in another process (MCP's servers) loads references of its own
form (``ref_prefix``, :meth:`ToolProtocol.load_ref`), and reports a call its server did not
survive by raising :class:`CallCrashed`.
"""

from axm_conformance._observation import (
    CallableInfo,
    ParameterInfo,
    Policy,
    ResultModel,
    SideEffect,
    SubjectInfo,
)
from axm_conformance.protocols._registry import (
    ENTRY_POINT_GROUP,
    detect,
    entry_point_groups,
    not_a_tool,
    profile_of_ref,
    profiles,
    protocol_for,
    protocol_named,
    protocol_of_ref,
    registered,
    tool_from,
)
from axm_conformance.protocols.base import (
    CAPABILITIES,
    ENTRY_POINT_PREFIX,
    GROUPS,
    CallCrashed,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    Missing,
    Profile,
    RegistryError,
    Runner,
    Target,
    ToolProtocol,
    capabilities,
    cause,
    groups,
    is_async_callable,
    read,
    signature_facts,
)

__all__ = [
    "CAPABILITIES",
    "ENTRY_POINT_GROUP",
    "ENTRY_POINT_PREFIX",
    "GROUPS",
    "CallCrashed",
    "CallableInfo",
    "Cleanups",
    "LoadError",
    "LoadOptions",
    "Loaded",
    "Missing",
    "ParameterInfo",
    "Policy",
    "Profile",
    "RegistryError",
    "ResultModel",
    "Runner",
    "SideEffect",
    "SubjectInfo",
    "Target",
    "ToolProtocol",
    "capabilities",
    "cause",
    "detect",
    "entry_point_groups",
    "groups",
    "is_async_callable",
    "not_a_tool",
    "profile_of_ref",
    "profiles",
    "protocol_for",
    "protocol_named",
    "protocol_of_ref",
    "read",
    "registered",
    "signature_facts",
    "tool_from",
]
