"""What a protocol is written with: the protocol interface, safe attribute reads, the reduction of
a result to facts, and the kit's records and helpers a protocol needs (the tool as described, an
observation, a policy and a result model; the side effects a call left; a finding). Every
protocol, the kit's own and a third party's, imports the kit through this module, the public
``axm_conformance.checks`` and ``axm_conformance.strategies``, and the operating system part of
the process boundary (``axm_conformance._process.system``).

A protocol wraps each tool in the worker, next to it. Reading an attribute of a stranger's object
can raise, so every read here is guarded and reported rather than propagated.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from axm_conformance._jsonable import canonical_json, jsonable
from axm_conformance._observation import (
    CONTENT_BLOCKS,
    CallableInfo,
    ExceptionInfo,
    Observation,
    ParameterInfo,
    Policy,
    Profile,
    ResultFacts,
    ResultModel,
    SideEffect,
    SubjectInfo,
)
from axm_conformance._outcomes import Finding, failure, warning
from axm_conformance._process.child._exceptions import exception_info
from axm_conformance._process.child._origin import OwnCode, own_code
from axm_conformance._process.child._sideeffects import (
    canary_ran,
    left_in_temporary,
    written_outside,
)
from axm_conformance._process.child._toolstate import ToolState
from axm_conformance._process.system._sandbox import Sandbox
from axm_conformance._workdir import Change, Snapshot, snapshot
from axm_conformance.errors import AxmConformanceError
from axm_conformance.protocols._reading import (
    Missing,
    derives_from,
    described,
    is_async_callable,
    read,
    result_facts,
    signature_facts,
    type_name,
)

__all__ = [
    "CAPABILITIES",
    "CONTENT_BLOCKS",
    "ENTRY_POINT_PREFIX",
    "GROUPS",
    "CallCrashed",
    "CallableInfo",
    "Change",
    "Cleanups",
    "ExceptionInfo",
    "Finding",
    "FrameworkProtocol",
    "LoadError",
    "LoadOptions",
    "Loaded",
    "Missing",
    "Observation",
    "ParameterInfo",
    "Policy",
    "Profile",
    "RegistryError",
    "ResultFacts",
    "ResultModel",
    "Runner",
    "SideEffect",
    "Snapshot",
    "SubjectInfo",
    "Target",
    "ToolProtocol",
    "ToolState",
    "canary_ran",
    "canonical_json",
    "capabilities",
    "cause",
    "derives_from",
    "exception_info",
    "failure",
    "framework_policy",
    "groups",
    "is_async_callable",
    "jsonable",
    "left_in_temporary",
    "no_determinism_in",
    "read",
    "result_facts",
    "signature_facts",
    "snapshot",
    "warning",
    "written_outside",
]


ENTRY_POINT_PREFIX = "entry-point:"

# Loading gives (ref, object, protocol name or "auto") triples, each ref naming one tool.
Loaded = list[tuple[str, Any, str]]
# Runs a coroutine to completion, in the event loop the tools will be called on.
Runner = Callable[[Coroutine[Any, Any, Any]], Any]
# What loading left to be done when the tools are no longer used: functions, sync or async.
Cleanups = list[Callable[[], Any]]


class LoadError(AxmConformanceError):
    """A reference that cannot be loaded; the message is one line naming the reference."""


class CallCrashed(AxmConformanceError):
    """What a protocol raises when the process serving a call died or broke its transport
    during the call: a crash of the tool, reported as the worker's own crashes are, not an
    exception it raised. The message says what happened; ``stderr_tail`` what that process
    wrote last; ``kind`` how it crashed, as a worker's crash is told (``exited``, or
    ``channel`` when what it answered could not be read)."""

    def __init__(
        self, message: str, stderr_tail: str = "", kind: Literal["exited", "channel"] = "exited"
    ) -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.kind = kind


@dataclass(frozen=True)
class LoadOptions:
    """What loading a reference of an out-of-process protocol needs from the run's settings:
    ``timeout`` for a server to start and answer, in seconds, ``env``, the variables the run
    adds to a server's environment, ``sandbox``, the one a server runs in (None: none), and
    ``memo``, a directory the run's processes share to remember what a server's starts taught
    (its protocol version, its slowest start: "" for none); ``headers``, what every HTTP
    request to a server carries (``--axm-server-header``, the token
    ``--axm-server-token-env`` names: kept out of its repr), ``http_path``, where a server
    started to serve HTTP serves it (``--axm-http-path``), and ``auth``, how such a server is
    authorized (``--axm-auth``)."""

    timeout: float = 5.0
    env: Mapping[str, str] = field(default_factory=dict)
    sandbox: Sandbox | None = None
    memo: str = ""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    http_path: str = "/mcp"
    auth: str = "off"


def cause(exc: BaseException) -> str:
    """An exception in one line, for a LoadError's message."""
    text = f"{type(exc).__name__}: {exc}".splitlines()
    return text[0] if text else type(exc).__name__


@dataclass(frozen=True)
class Target:
    """The member an input reaches on one tool: its ``name`` (for the reports), the
    ``function`` itself (a :class:`Missing` when the tool has none), and whether the protocol's
    runtime ``awaits`` what it returns."""

    name: str
    function: Any
    awaits: bool


def no_determinism_in(runtime: str) -> str:
    """Why tools of ``runtime`` are not judged for determinism (``Policy.no_determinism``)."""
    return (
        f"determinism is not part of {runtime}'s tool contract: a tool answers from a world "
        "(files, the network, the time) that may change between two calls"
    )


def framework_policy(runtime: str, **settings: Any) -> Policy:
    """The policy of an agent framework's tools: the framework validates a call's arguments
    before the tool runs and raises when they break the schema, and determinism is no part of
    its contract; ``settings`` are the rest of its :class:`Policy`."""
    return Policy(invalid="raise", no_determinism=no_determinism_in(runtime), **settings)


# What a protocol may offer, and what a check that requires it then relies on. A check whose
# capability the tool's protocol does not offer is skipped, saying so. These are the core's; a
# protocol defines its own in ToolProtocol.defines (see capabilities).
CAPABILITIES: dict[str, str] = {
    "in-process": "a Python object called in the worker (its signature, its input, its source)",
    "python-exceptions": "errors that escape a call as Python exceptions",
    "description": "a description the model reads",
    "output-schema": "a declared output schema",
    "discovery-metadata": "discovery metadata (expose_directly, domain, tags, agent_hint)",
    "behaviour-hints": (
        "declared hints about its behaviour (read-only, destructive, idempotent, closed world), "
        "held to what a call changes in its working directory and to what it serves cut off "
        "from the network"
    ),
    "effects-declared": "declared kinds of access (read, write, execute, external)",
    "writes-traced": (
        "the paths it tried to write outside its working and temporary directories, traced "
        "where it runs (a server's sandbox, through strace)"
    ),
    "guards": "permission guards in front of the tool",
    "concurrency-limit": "a limit on concurrent calls",
    "refusal-exceptions": (
        "refusals raised as exceptions the runtime tells the model (ToolProtocol.refusal), "
        "judged as refused calls"
    ),
}


class RegistryError(AxmConformanceError):
    """A protocol entry point that cannot be used; the message names it."""


@dataclass
class ToolProtocol:
    """A tool protocol: which objects follow it, what they declare, and how they are called.

    A subclass is one protocol, registered under the entry-point group
    ``axm_conformance.protocols``. Its class attributes are read by the kit (detection, the
    severity policy, the reproduction snippet, the probes); an instance wraps one loaded tool in
    the worker process, where it describes the tool and makes its calls.
    """

    obj: Any
    ref: str

    name: ClassVar[str]
    title: ClassVar[str]  # the name as the protocol's documents spell it
    capabilities: ClassVar[frozenset[str]] = frozenset()
    # The capabilities this protocol defines beyond the core's CAPABILITIES, each with what a
    # check that requires it relies on; and the check groups its own checks run in, before the
    # core's (GROUPS): a protocol's checks of its transport come first.
    defines: ClassVar[dict[str, str]] = {}
    groups: ClassVar[tuple[str, ...]] = ()
    # Entry-point groups tools of this protocol are published in (``entry-point:GROUP[:NAME]``).
    entry_point_groups: ClassVar[tuple[str, ...]] = ()
    # The framework's class its tools are instances of, as (module, class name): a subclass
    # defined in any module under that one counts (see derives_from).
    tool_class: ClassVar[tuple[str, str] | None] = None
    # The prefix, or the prefixes, of the references this protocol loads itself
    # (``mcp:COMMAND``, ``mcp-http:COMMAND``), with load_ref.
    ref_prefix: ClassVar[str | tuple[str, ...]] = ""
    # Detection tries protocols in this order (lowest first): the most specific shape first.
    detection_order: ClassVar[int] = 10
    # The protocols whose shape this one's is a special case of: an object both detect is this
    # protocol's, as meant; any other protocol that detects it too is reported beside it.
    narrows: ClassVar[tuple[str, ...]] = ()
    result: ClassVar[ResultModel] = ResultModel("json")
    policy: ClassVar[Policy] = Policy()
    # How a person makes one call, ``{input}`` standing for the input's Python literal, and the
    # lines that come before it (imports, objects the call needs).
    call_snippet: ClassVar[str] = ""
    snippet_setup: ClassVar[tuple[str, ...]] = ()
    # The worker functions ("module:function") that make the probes' calls, by feed name.
    probes: ClassVar[dict[str, str]] = {}
    # What to do about a finding of a check, by check id, as this protocol's tools do it: the
    # report of a failure or a warning ends with it.
    hints: ClassVar[dict[str, str]] = {}
    # The member an input reaches, whether it is awaited, and how the input reaches it.
    callable_name: ClassVar[str] = "execute"
    expects_async: ClassVar[bool] = False
    call_style: ClassVar[Literal["keywords", "dict"]] = "dict"
    # Set by call_invalid where the protocol can see whether the tool's own code ran.
    handler_called: bool | None = None
    # The titles of the other protocols that detected the tool, when detection chose this one.
    rivals: tuple[str, ...] = ()

    @classmethod
    def detects(cls, obj: Any) -> bool:
        """Whether ``obj`` has this protocol's shape (for ``--axm-protocol=auto``): by default,
        whether it is an instance of the framework's ``tool_class``."""
        return cls.tool_class is not None and derives_from(obj, *cls.tool_class)

    @classmethod
    def tool_from(cls, ref: str, obj: Any) -> Any | None:
        """The tool a bare object stands for under this protocol (an ``async def`` handler
        wrapped as axio wraps it, say), a list of the tools it holds (a toolkit), or None when
        the object is not such a thing."""
        return None

    @classmethod
    def tool_named(cls, ref: str, obj: Any) -> Any | None:
        """The tool an object stands for when this protocol is named for it
        (``--axm-protocol``): by default what ``tool_from`` gives. A protocol that makes a tool
        of any plain function (Pydantic AI's agents do) does so only when named."""
        return cls.tool_from(ref, obj)

    @classmethod
    def published(cls, ref: str, obj: Any, run: Runner, cleanups: Cleanups | None) -> Loaded:
        """The tools an object published in one of ``entry_point_groups`` gives, each with its
        own reference: by default the object itself. ``run`` runs a coroutine in the event
        loop the tools will be called on; a cleanup loading leaves goes to ``cleanups``.
        Raises :class:`LoadError`."""
        return [(ref, obj, cls.name)]

    @classmethod
    def load_ref(cls, ref: str, options: LoadOptions, cleanups: Cleanups | None) -> Loaded:
        """The tools a reference starting with ``ref_prefix`` names, each with its own
        reference (``REF[TOOL]``). What must be done when they are no longer used goes to
        ``cleanups``. Raises :class:`LoadError`."""
        raise LoadError(f"{ref!r}: the {cls.title} protocol loads no references of its own")

    @classmethod
    def unlisted(cls, obj: Any) -> str:
        """Why the reference that loaded ``obj`` alone gave none of its tools, when something
        kept it from giving them ("" when it has none)."""
        return ""

    def describe(self) -> SubjectInfo:
        """The tool as the static checks see it."""
        schema, source, error = self.input_schema()
        target = self.target()
        parameters, takes_var_keyword, has_signature = signature_facts(target.function)
        return self._info(
            variant="",
            input_schema=schema,
            schema_source=source,
            schema_error=error,
            output_schema=self.output_schema(),
            call_style=self.call_style,
            callable=CallableInfo(
                name=target.name,
                present=not isinstance(target.function, Missing),
                is_callable=callable(target.function),
                is_async=is_async_callable(target.function),
                expects_async=target.awaits,
                parameters=parameters,
                takes_var_keyword=takes_var_keyword,
                has_signature=has_signature,
            ),
        )

    def target(self) -> Target:
        """The member an input reaches on this tool. By default the tool's ``callable_name``
        member, awaited when ``expects_async``; a protocol whose tools differ (a function or a
        coroutine behind one decorator) says which, tool by tool."""
        return Target(self.callable_name, read(self.obj, self.callable_name), self.expects_async)

    def tool_policy(self) -> Policy:
        """The severity rule for this tool: by default the protocol's ``policy``; a protocol
        whose runtime treats tools differently (one tool's validation errors returned to the
        model, another's raised) gives each tool its own."""
        return self.policy

    def refusal(self, exc: BaseException) -> str:
        """What the protocol's runtime tells the model when a call raised ``exc`` as the
        tool's refusal of its input (a framework's retry or refusal exception), "" when ``exc``
        is not one: such an exception is judged as a refused call, not as an error."""
        return ""

    @classmethod
    def schema_document(cls, declared: Any) -> tuple[Any, str]:
        """The JSON Schema a tool's declared schema stands for, and why there is none ("" when
        there is). A dict or a bool is one; a pydantic model class or ``TypeAdapter`` gives
        its JSON Schema; any other object is none (it would not even leave the worker). A
        protocol whose tools declare schemas some other way overrides this one hook."""
        if declared is None or isinstance(declared, (dict, bool, list, str, int, float)):
            return declared, ""
        for method in ("model_json_schema", "json_schema"):
            make = read(declared, method)
            if callable(make):
                try:
                    return make(), ""
                except Exception as exc:
                    return None, f"{method}() of {described(declared)} raised {cause(exc)}"
        return None, f"it is {described(declared)}, not a JSON Schema (a dict) or a pydantic model"

    @classmethod
    def profile(cls) -> Profile:
        """The protocol's face in the kit's process, made once from what the class declares,
        carried by each tool it describes. :class:`~axm_conformance.protocols.RegistryError`
        names a capability it offers that neither the core nor the protocol defines."""
        return _profile_of(cls)

    def input_schema(self) -> tuple[Any, str, str]:
        """The input schema, where it comes from ("declared", "derived"), and why there is
        none ("" when there is one)."""
        schema = read(self.obj, "input_schema")
        if isinstance(schema, Missing):
            return None, "", schema.error or "declares no input_schema"
        return schema, "declared", ""

    def output_schema(self) -> Any:
        """The declared output schema; None when there is none."""
        schema = read(self.obj, "output_schema")
        return None if isinstance(schema, Missing) or schema in ({}, None) else schema

    def prepare(self) -> None:
        """Make the tool ready for the next call, before the call is watched: what this does
        (a server started again after it died) is not the call's doing."""

    def call(self, input: Any) -> Any:
        """Start one call with ``input``: its return value, possibly awaitable."""
        raise NotImplementedError

    def side_effects(self, value: Any) -> tuple[SideEffect, ...]:
        """What the call that returned ``value`` did that the worker cannot see from its own
        process (a server's writes its sandbox refused): none by default."""
        return ()

    def calling_under(self, condition: str) -> contextlib.AbstractContextManager[None]:
        """Make the calls inside the block under ``condition`` ("": as always): a probe's,
        such as ``offline`` (the tool cut off from the network)."""
        if condition:
            raise ValueError(f"{self.title} tools cannot be called {condition}")
        return contextlib.nullcontext()

    def refuses(self, input: Any) -> str:
        """Why the protocol's caller would refuse ``input`` before the tool sees it ("": never).

        Keyword arguments are built from a JSON object: anything else cannot even be sent.
        """
        if self.call_style == "keywords" and not isinstance(input, dict):
            return "the input is not an object, so it cannot be passed as keyword arguments"
        return ""

    def coerces(self, input: Any) -> str:
        """How the protocol's runtime makes an input that breaks the schema into one the schema
        allows before the tool sees it ("" when it does not): a framework that validates
        leniently (pydantic's ``"3"`` for an integer, unknown keys dropped) hands the tool a
        valid input, and such an input is not sent as an invalid one."""
        return ""

    def call_invalid(self, input: Any) -> Any:
        """Start one call with an input that breaks the schema, as the protocol's caller would."""
        return self.call(input)

    def own_objects(self) -> tuple[Any, ...]:
        """What the tool's author wrote, whose packages are the tool's own code and whose
        modules' literals are hints: by default the tool's class and the member an input
        reaches (which a base class elsewhere may provide). A protocol whose tools are a
        framework's objects wrapping the author's function gives that function alone."""
        return (type(self.obj), self.target().function)

    @functools.cached_property
    def own_code(self) -> OwnCode:
        """The files of the tool's own code, read once."""
        return own_code(obj for obj in self.own_objects() if not isinstance(obj, Missing))

    def _info(self, **facts: Any) -> SubjectInfo:
        schema, error = self.schema_document(facts["input_schema"])
        if error:
            facts["schema_error"] = f"the declared input schema: {error}"
        facts["input_schema"] = schema
        facts["output_schema"] = self.schema_document(facts["output_schema"])[0]
        name = read(self.obj, "name")
        description = facts.pop("description", read(self.obj, "description"))
        return SubjectInfo(
            ref=self.ref,
            protocol=self.name,
            protocol_title=self.title,
            capabilities=self.capabilities,
            name=jsonable(name)[0] if not isinstance(name, Missing) else None,
            name_type=type_name(name),
            description=jsonable(description)[0] if not isinstance(description, Missing) else None,
            description_type=type_name(description),
            result=self.result,
            policy=self.tool_policy(),
            profile=self.profile(),
            also_detected=self.rivals,
            **facts,
        )

    def payload(self, value: Any) -> tuple[Any, str]:
        """A bare returned value as the result checks see it, and the name of its type."""
        return value, type(value).__name__

    def facts(self, value: Any, *, size_limit: int) -> ResultFacts:
        """Reduce a returned value to the facts the result checks judge."""
        is_mapping = isinstance(value, Mapping)
        fields: dict[str, Any] = {}
        field_types: dict[str, str] = {}
        read_errors: dict[str, str] = {}
        if (
            self.result.returns == "tool-result"
            and value is not None
            and not isinstance(value, str)
        ):
            getter: Callable[[str], Any] = (
                (lambda key: value[key] if key in value else Missing())
                if is_mapping
                else (lambda key: read(value, key))
            )
            for key in self.result.fields:
                item = getter(key)
                if isinstance(item, Missing):
                    if item.error:
                        read_errors[key] = item.error
                    continue
                fields[key], field_types[key] = item, type(item).__name__
        else:
            fields["value"], field_types["value"] = self.payload(value)
        return result_facts(
            fields,
            size_limit=size_limit,
            type_name=type(value).__name__,
            is_mapping=is_mapping,
            field_types=field_types,
            read_errors=read_errors,
        )


class FrameworkProtocol(ToolProtocol):
    """The tools of an agent framework: instances of its ``tool_class``, called in the worker
    with keyword arguments the framework validates first (see framework_policy), their errors
    escaping as Python exceptions and their descriptions read by the model."""

    capabilities = frozenset({"in-process", "python-exceptions", "description"})
    call_style = "keywords"


# Checks run and are listed group by group, cheapest and most fundamental first: these are the
# core's, after the groups protocols define (see groups).
GROUPS = (
    "structure",
    "schema",
    "clients",
    "calls",
    "results",
    "behaviour",
    "security",
    "invalid",
    "guards",
    "concurrency",
)


def _protocol_classes() -> list[type[ToolProtocol]]:
    """Every protocol class defined so far, in the order they were defined."""
    found: list[type[ToolProtocol]] = []
    pending = [ToolProtocol]
    while pending:
        for subclass in pending.pop(0).__subclasses__():
            if subclass not in found:
                found.append(subclass)
                pending.append(subclass)
    return found


# Each protocol's profile, made once; a protocol class that is gone (a test's) takes its own.
_PROFILES: weakref.WeakKeyDictionary[type[ToolProtocol], Profile] = weakref.WeakKeyDictionary()


def _profile_of(protocol: type[ToolProtocol]) -> Profile:
    if protocol in _PROFILES:
        return _PROFILES[protocol]
    known = capabilities()
    unknown = sorted(protocol.capabilities - known.keys())
    if unknown:
        raise RegistryError(
            f"protocol {protocol.name!r} offers {', '.join(map(repr, unknown))}, which neither "
            "the core's CAPABILITIES nor any protocol's defines describes: define it"
        )
    _PROFILES[protocol] = Profile(
        name=protocol.name,
        title=protocol.title,
        capabilities={
            capability: known[capability] for capability in sorted(protocol.capabilities)
        },
        defines=dict(protocol.defines),
        groups=protocol.groups,
        entry_point_groups=protocol.entry_point_groups,
        ref_prefix=protocol.ref_prefix,
        result=protocol.result,
        policy=protocol.policy,
        hints=dict(protocol.hints),
        call_snippet=protocol.call_snippet,
        snippet_setup=protocol.snippet_setup,
        probes=dict(protocol.probes),
    )
    return _PROFILES[protocol]


def capabilities() -> dict[str, str]:
    """Every capability a check may require: the core's and those the protocols defined so far
    define, each with what a check that requires it relies on. A protocol's checks import its
    package, which defines it, before they are registered."""
    table = dict(CAPABILITIES)
    for protocol in _protocol_classes():
        table.update(protocol.defines)
    return table


def groups() -> tuple[str, ...]:
    """Every check group in run order: those the protocols defined so far define, then the
    core's."""
    defined = [group for protocol in _protocol_classes() for group in protocol.groups]
    return (*dict.fromkeys(defined), *GROUPS)
