"""What the worker tells the kit about a tool and about each call: plain data, picklable.

A tool's objects never leave the worker process; the checks see only these records. They are built
on the worker side by the protocols and read on the kit side by the checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from axm_conformance._disguise import error_form
from axm_conformance._jsonable import canonical_json
from axm_conformance._outcomes import Finding
from axm_conformance._workdir import Change

__all__ = [
    "CONTENT_BLOCKS",
    "PROGRAMMING_ERRORS",
    "Alike",
    "Call",
    "CallableInfo",
    "EffectKind",
    "ExceptionInfo",
    "Observation",
    "ParameterInfo",
    "Policy",
    "Profile",
    "Reading",
    "ResultFacts",
    "ResultModel",
    "SideEffect",
    "Step",
    "SubjectInfo",
    "Varied",
]

Origin = Literal["os", "raise", "other"]

# Exceptions that mean the tool's own code is wrong, not that the input or the world was: what
# an axio handler that ran with arguments its runtime should have refused must not raise.
PROGRAMMING_ERRORS = frozenset(
    {
        "TypeError",
        "AttributeError",
        "KeyError",
        "IndexError",
        "NameError",
        "UnboundLocalError",
        "ZeroDivisionError",
        "AssertionError",
        "RecursionError",
    }
)


# The type name ResultFacts gives a list of content blocks (TextBlock, ImageBlock, ...), which an
# axio agent passes on to the model as it passes on a str.
CONTENT_BLOCKS = "list[ContentBlock]"


@dataclass(frozen=True)
class ParameterInfo:
    """One parameter of the tool's execute/handler."""

    name: str
    kind: str  # inspect.Parameter kind name, e.g. "KEYWORD_ONLY"
    required: bool


@dataclass(frozen=True)
class CallableInfo:
    """The Python callable an input reaches (``execute``, ``handler``, ``run``...), as declared."""

    name: str
    present: bool
    is_callable: bool
    is_async: bool
    expects_async: bool  # the protocol awaits it
    parameters: tuple[ParameterInfo, ...] = ()
    takes_var_keyword: bool = False
    has_signature: bool = False


@dataclass(frozen=True)
class ResultModel:
    """The result a protocol's tools return: ``returns`` names the contract ("tool-result", "str"
    for a str or a list of content blocks, "json" for any JSON value); ``fields`` the fields of
    a tool-result with the type names each may have (() for any JSON); ``structured_field`` the
    field an output schema describes ("" for the value itself); ``success`` the field that tells
    a success from a failure, and its value on success, taken as well when the field is absent
    (``("success", True)``; MCP's is ``("isError", False)``, a protocol with a status field
    ``("status", "success")``): any other value reports a failure; ``error_field`` the field a
    failure says what went wrong in (a str, or a dict with a ``message`` str; where it is the
    ``structured_field`` too, a success's text there is its payload, not an error); ``error_type``
    the type name of an answer that is an error instead of a result (MCP's JSON-RPC error
    response), if any."""

    returns: Literal["tool-result", "str", "json"]
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)
    structured_field: str = ""
    success: tuple[str, Any] = ("success", True)
    error_field: str = "error"
    error_type: str = ""

    def succeeded(self, result: ResultFacts) -> bool:
        """Whether a result reports a success: its success field holds the success value (the
        same JSON value: ``1`` is not ``true``), or is absent."""
        if self.error_type and result.type_name == self.error_type:
            return False
        name, value = self.success
        found = result.fields.get(name, value)
        return type(found) is type(value) and found == value

    def disguised(self, result: ResultFacts) -> str:
        """Why a result that reports a success is an error in disguise (see
        :mod:`axm_conformance._disguise`); "" when it is none, or reports no success."""
        if not self.succeeded(result) or result.truncated:
            return ""
        if result.resembled_error:
            return f"it takes the form of the error {result.resembled_error[:100]!r} it gave"
        for name in (self.structured_field or "value", "content"):
            if name in result.fields:
                found = error_form(result.fields[name])
                if found:
                    return found
        return ""

    def served(self, observation: Observation) -> bool:
        """Whether a call was served: it returned a success that is not an error in disguise."""
        result = observation.result
        return result is not None and self.succeeded(result) and not self.disguised(result)

    def refused(self, observation: Observation) -> bool:
        """Whether a call was refused: it returned a result that reports a failure, or raised
        what its protocol's runtime takes as the tool's refusal (not whether it crashed). An
        error in disguise is neither served nor refused: what only its form says is never
        grounds to blame a tool for refusing."""
        if observation.exception is not None:
            return bool(observation.exception.refusal)
        return observation.result is not None and not self.succeeded(observation.result)

    def error_text(self, result: ResultFacts) -> str:
        """What a result's error field says (its text, or its dict's ``message``), stripped."""
        error = result.fields.get(self.error_field)
        if isinstance(error, dict):
            error = error.get("message")
        return error.strip() if isinstance(error, str) else ""

    def says(self, result: ResultFacts, limit: int = 100) -> str:
        """What a result says, in one line of at most ``limit`` characters: its error, else its
        text, else its JSON."""
        fields = result.fields
        error = self.error_text(result)
        if error:
            return _one_line(error, limit)
        for name in ("content", self.structured_field or "value"):
            value = fields.get(name)
            if isinstance(value, list):
                value = "".join(
                    str(block.get("text", "")) for block in value if isinstance(block, dict)
                )
            if isinstance(value, str) and value.strip():
                return _one_line(value, limit)
        others = {k: v for k, v in fields.items() if k != self.success[0]}
        return _one_line(canonical_json(others), limit)


@dataclass(frozen=True)
class Policy:
    """How a protocol's runtime treats what a call does: the severity rule, per protocol.

    An exception that escapes a call on a valid input is, by ``exception``, against the protocol
    ("result": it wants a failed result instead), its ordinary error path ("domain"), or allowed
    only as one of the runtime's ``allowed_exceptions``, judged by its cause ("wrapped"). An
    input that breaks the schema is answered, by ``invalid``, with a failed result, by raising
    one of ``allowed_exceptions``, or refused by the caller before the tool runs ("refuse"); a
    protocol whose refusals follow rules of its own (MCP's JSON-RPC errors) judges the answer
    itself with ``judge_invalid``, a module-level function (so that the policy stays picklable)
    given the subject and the observation of the call, which yields the findings as a check
    does. ``exception_absorber`` names what turns an exception against the protocol into an
    error the model sees, when something does; ``invalid_absorber`` what keeps an input that
    breaks the schema from the tool. ``promises_determinism``: the protocol says the same input
    gives the same result. ``strips_unknown_keys``: the runtime drops keys the callable does not
    take before calling it. ``name_rule`` is the protocol's own rule for tool names (a regex),
    where it has one: a name that breaks it fails, and one that keeps it but not the portable
    pattern of the ``name_pattern`` setting is a warning. Where the description is not
    ``description_required`` (the protocol's documents make it optional), a tool without one is
    a warning. ``no_determinism`` says why the protocol's tools are not judged for determinism
    at all ("" when they are). ``denial_exception`` names the exception a call denied by a guard
    in front of the tool raises (axio's ``GuardError``), where the protocol has guards.
    ``schema_adapters`` pairs a client profile or one of its rules (``openai-strict``,
    ``openai-root-properties``) with what in the protocol's runtime keeps the client from
    meeting it (a transformer that rewrites the schema, a mode it never sends): what that
    profile or rule finds is then a note naming it. conformance/protocols.md documents each
    setting and what it reads.
    """

    exception: Literal["result", "domain", "wrapped"] = "result"
    allowed_exceptions: tuple[str, ...] = ()
    invalid: Literal["result", "raise", "refuse"] = "result"
    judge_invalid: Callable[[SubjectInfo, Observation], Iterator[str | Finding]] | None = None
    exception_absorber: str = ""
    invalid_absorber: str = ""
    promises_determinism: bool = False
    strips_unknown_keys: bool = False
    name_rule: str = ""
    description_required: bool = True
    no_determinism: str = ""
    denial_exception: str = ""
    schema_adapters: tuple[tuple[str, str], ...] = ()


def _one_line(text: str, limit: int = 100) -> str:
    """A text on one line, shortened to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass(frozen=True)
class Profile:
    """A protocol as the kit's process knows it: one of the protocol's two faces (the other is
    its adapter, the :class:`~axm_conformance.protocols.ToolProtocol` the worker calls tools
    through). Frozen and picklable; the registry serves one per protocol, and every tool the
    protocol describes carries its own, so that nothing is looked up by name after loading.

    ``name`` and ``title`` (as the protocol's documents spell it); ``capabilities``, what it
    offers, each with what a check that requires it relies on, of which it ``defines`` some
    itself (beyond the core's); the check ``groups`` its own checks run in, first; the
    ``entry_point_groups`` its tools are published in and the ``ref_prefix`` of the references
    it loads itself (``mcp:``); its ``result`` model and its severity ``policy`` (how it judges
    an invalid input's answer among it; a tool may narrow it, see ``SubjectInfo.policy``); what
    to do about a check's finding (``hints``, by check id); how a person makes one call
    (``call_snippet``, ``{input}`` standing for the input's Python literal, after the
    ``snippet_setup`` lines); and, by name, the worker function that makes each of its probes.
    """

    hints: Mapping[str, str] = field(default_factory=dict)
    call_snippet: str = ""
    snippet_setup: tuple[str, ...] = ()
    probes: Mapping[str, str] = field(default_factory=dict)
    name: str = field(default="", kw_only=True)
    title: str = field(default="", kw_only=True)
    capabilities: Mapping[str, str] = field(default_factory=dict, kw_only=True)
    defines: Mapping[str, str] = field(default_factory=dict, kw_only=True)
    groups: tuple[str, ...] = field(default=(), kw_only=True)
    entry_point_groups: tuple[str, ...] = field(default=(), kw_only=True)
    ref_prefix: str | tuple[str, ...] = field(default="", kw_only=True)
    result: ResultModel = field(default_factory=lambda: ResultModel("json"), kw_only=True)
    policy: Policy = field(default_factory=Policy, kw_only=True)

    def snippet(self, input: str) -> tuple[str, ...]:
        """The Python that makes one call of the tool held in ``tool`` with ``input`` (the
        input's Python literal), for a failure's reproduction: lines whose last is an
        expression whose value is what the call gave (the kit prints it); imports first:
        ``import asyncio`` where it runs a coroutine, then the setup. () when there is none."""
        if not self.call_snippet:
            return ()
        call = self.call_snippet.format(input=input)
        asyncio = ("import asyncio",) if "asyncio." in call else ()
        return (*asyncio, *self.snippet_setup, call)


@dataclass(frozen=True)
class SubjectInfo:
    """Everything the static checks need to know about one tool, read without calling it.

    ``protocol`` is the name of the protocol it follows, ``protocol_title`` that name as its
    documents spell it, ``capabilities`` what the protocol offers (see
    :func:`axm_conformance.protocols.capabilities`). ``call_style`` says how an input reaches
    the tool: "keywords" (each property a keyword argument), "dict" (the input object as one
    argument) or "none" (the tool cannot be called).
    """

    ref: str
    protocol: str
    protocol_title: str
    capabilities: frozenset[str]
    variant: str
    name: Any
    name_type: str
    description: Any
    description_type: str
    input_schema: Any
    schema_source: str  # "declared", "derived" or "" when there is none
    schema_error: str
    output_schema: Any
    call_style: Literal["keywords", "dict", "none"]
    callable: CallableInfo
    result: ResultModel
    policy: Policy
    profile: Profile = field(default_factory=Profile)
    metadata: dict[str, tuple[str, Any]] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    guards: int = 0
    concurrency: Any = None
    distribution: tuple[str, str] | None = None  # (name, version) of the package it comes from
    # The kinds of access the tool declares (axio's: "read", "write", "execute", "external").
    effects: tuple[str, ...] = ()
    # The str, bytes (as text) and number literals of the tool's own source, in source order:
    # values inputs are made of besides the schema's (see _process.child._literals).
    literals: tuple[str | int | float, ...] = ()
    # What the tool's home tells a client of all its tools (an MCP server's instructions): its
    # values are hints, as those of the tool's own descriptions are.
    instructions: str = ""
    # References whose tool the protocol's runtime loads instead of this one when both are
    # published under the same name (axm prefers axm.tribunal.tools to axm.tools).
    shadowed_by: tuple[str, ...] = ()
    # What the tool declares about its behaviour (MCP's annotations: readOnlyHint, ...).
    annotations: dict[str, Any] = field(default_factory=dict)
    # Set for a tool server as a whole: what its protocol observed of it (MCP's ServerFacts),
    # which that protocol's server checks judge.
    server: Any = None
    # Seconds describing the subject took (a server observed whole), charged to its checks.
    described_in: float = 0.0
    # The version of its protocol the tool was spoken to in, where the protocol has several on
    # the wire (MCP's 2024-11-05 ... 2026-07-28); "" where it has none.
    protocol_version: str = ""
    # Where the version spoken lets a tool refuse an input it finds invalid with an error
    # response of any code, the words that let it (MCP up to 2025-06-18 lists "Invalid
    # arguments" among the protocol errors); "" where it does not.
    errors_refuse: str = ""
    # The other protocols whose shape the tool has, when detection chose its protocol among
    # several that do not narrow one another.
    also_detected: tuple[str, ...] = ()
    # Where someone else serves the tool (a remote MCP server's address): what a call does
    # there, its writes, its processes, its reach, is not seen; "" where the kit runs it.
    remote: str = ""

    @property
    def kind(self) -> Literal["tool", "server"]:
        """What the subject is: one tool, or a server of tools."""
        return "tool" if self.server is None else "server"

    def offers(self, capability: str) -> bool:
        return capability in self.capabilities

    @property
    def home(self) -> str:
        """Where the tool comes from, as far as its world goes: its server (the reference of
        an MCP server's tools, without the tool's key), else the package it is published in,
        else its module; "" when none is known. The tools of one home share a world, and are
        explored together."""
        if self.server is not None:
            return ""
        if not self.offers("in-process"):
            return self.ref.rpartition("[")[0] if self.ref.endswith("]") else ""
        if self.distribution is not None:
            return f"package {self.distribution[0]}"
        module, colon, _ = self.ref.partition(":")
        plain = colon and not self.ref.startswith(("entry-point:", "pickle:"))
        return f"module {module}" if plain else ""

    def shares_home(self, other: SubjectInfo) -> bool:
        """Whether ``other`` is another tool of this tool's home (see home)."""
        return (
            other.ref != self.ref
            and other.kind == "tool"
            and bool(self.home)
            and other.home == self.home
        )

    @property
    def needs_network(self) -> bool:
        """Whether the tool declares it may reach the network: axio access that is external
        (or of an unknown kind), an MCP tool whose openWorldHint is not false (MCP's default
        is true). A tool of a protocol with no such declaration declares it does not."""
        if any(access in self.effects for access in ("external", "unknown")):
            return True
        return self.offers("behaviour-hints") and self.annotations.get("openWorldHint") is not False


@dataclass(frozen=True)
class ExceptionInfo:
    """An exception that escaped the tool, with its cause chain and the tool's own traceback.

    ``origin`` is read from the traceback where the tool ran
    (:mod:`axm_conformance._process.child._origin`): "os" (the operating system interface
    refused), "raise" (a ``raise`` statement in the tool's own code) or "other" (a crash: a
    programming error, or a library error left unhandled).
    ``raised_in`` is the dotted name of the function it came from, "" when not known.
    """

    type_name: str
    qualified_name: str
    ancestors: tuple[str, ...]  # names of the class and its bases
    message: str
    traceback: str
    is_exception: bool  # False for SystemExit, KeyboardInterrupt, CancelledError, ...
    cause: ExceptionInfo | None = None
    origin: Origin = "other"
    raised_in: str = ""
    # What the protocol's runtime tells the model of it where it takes it as the tool's refusal
    # of the input (``ToolProtocol.refusal``), not as an error: "" when it does not.
    refusal: str = ""

    def is_a(self, name: str) -> bool:
        """Whether the exception's class is, or derives from, a class of this name."""
        return name in self.ancestors

    def summary(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


@dataclass(frozen=True)
class ResultFacts:
    """What a call returned, reduced to facts: its type, its fields, and its payload as JSON.

    ``fields`` holds a JSON-safe rendering of each result field (the protocol's ``result_fields``,
    or ``value`` for a bare value) and ``field_types`` their Python type names (for a list of
    content blocks, rendered as their fields, :data:`CONTENT_BLOCKS`). ``problems`` lists
    every place the payload is not strict JSON. ``size`` is the payload's serialised size in bytes;
    when it is over the limit, ``truncated`` is set, the rendering is cut, and ``size`` is only
    a lower bound. ``wire_errors`` says where a result that came over a wire broke its
    protocol's message format (the official schema, stray output), one sentence each.
    ``changes`` says what the call changed in the tool's working directory, where the protocol
    watches it, one :class:`Change` per file ("created notes.txt", "appended to log.txt",
    "rewrote notes.json keeping its content", "overwrote a.txt", "deleted b.txt"),
    and ``state`` is a digest of that directory after the call ("" where it is not watched).
    ``resembled_error`` is, for a success whose only text takes the form of the tool's own error
    messages, the error message it resembles ("" otherwise, or where it is not known).
    """

    type_name: str
    is_mapping: bool
    fields: dict[str, Any]
    field_types: dict[str, str]
    read_errors: dict[str, str]
    problems: tuple[str, ...]
    size: int
    truncated: bool
    fingerprint: str
    wire_errors: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    state: str = ""
    resembled_error: str = ""


EffectKind = Literal["process", "outside", "temporary", "project", "state", "executed"]


@dataclass(frozen=True)
class SideEffect:
    """Something a call left changed, in one sentence. ``kind`` says what, and so which check
    judges it and how severely: ``process`` (processes left running), ``outside`` (writes
    outside the tool's working and temporary directories, whose ``paths`` are named),
    ``temporary`` (files left in a temporary directory), ``project`` (files changed in the
    project, which another process may have changed), ``state`` (the worker process's own
    state: threads, streams, environment, ...) or ``executed`` (the kit's canary program ran,
    with the ``tokens`` of the payloads that named it)."""

    kind: EffectKind
    text: str
    paths: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Observation:
    """One call: its input as sent, and what came back or went wrong."""

    status: Literal["returned", "raised", "crashed", "rejected"]
    result: ResultFacts | None = None
    exception: ExceptionInfo | None = None
    crash_kind: str = ""
    crash_detail: str = ""
    stderr_tail: str = ""
    mutation: str = ""  # where the call changed its input, when it did
    rejected_because: str = ""  # why the caller refused the input before the tool saw it
    handler_called: bool | None = None  # None where it cannot be observed
    side_effects: tuple[SideEffect, ...] = ()  # what the call left behind
    # Whether the call changed the files of the tool's working directory (an in-process tool's;
    # a server's changes are its result's): the same input then meets another world; and which.
    world_changed: bool = False
    changed_files: tuple[str, ...] = ()
    duration: float = 0.0

    def named_by_effects(self) -> frozenset[str]:
        """What the call's effects name: the tokens the kit's canary program ran with, and the
        names of the files it changed in its working directory or tried to write outside it
        (what the payloads of the security checks are told apart by)."""
        changed = self.result.changes if self.result is not None else ()
        paths = [
            *self.changed_files,
            *(change.path for change in changed),
            *(path for effect in self.side_effects for path in effect.paths),
        ]
        tokens = (token for effect in self.side_effects for token in effect.tokens)
        return frozenset((*tokens, *(os.path.basename(path) for path in paths)))

    def signature(self) -> str:
        """What two calls with the same input must agree on to count as the same outcome."""
        if self.result is not None:
            return f"returned {self.result.fingerprint}"
        if self.exception is not None:
            return f"raised {self.exception.qualified_name}"
        return f"{self.status} {self.crash_kind}"


@dataclass(frozen=True)
class Varied:
    """A refused valid input changed in one way its schema allows (``kind``; ``said`` says the
    change) and what became of it; when it was served, what became of the inputs that confirm
    the refusal was of what changed (``confirming`` says what they are). For a bound found by
    bisection (a cap), ``bound`` holds the numbers a refusal names when it states that bound:
    the last value served, then the first refused (their lengths, for text and arrays)."""

    kind: str
    said: str
    observation: Observation
    confirming: str = ""
    confirmations: tuple[Observation, ...] = ()
    bound: tuple[float, ...] = ()


@dataclass(frozen=True)
class Step:
    """A call made before the call judged, in the same worker: of another tool of the same
    server or package (made to prepare its world), or of the tool itself; which tool (its
    reference and name), with what input, and whether it was sent as an invalid one."""

    ref: str
    name: str
    input: Any
    invalid: bool = False

    def __str__(self) -> str:
        return f"{self.name}({canonical_json(self.input)})"


@dataclass(frozen=True)
class Reading:
    """What a read-only tool of the same server returned (the fingerprint of its result, and a
    preview) after the call judged, and after that call was made once more: the state the
    call left, as another tool sees it."""

    observer: Step
    once: str
    twice: str
    once_preview: str
    twice_preview: str


@dataclass(frozen=True)
class Call:
    """An input and its observation, as the per-call checks receive them."""

    input: Any
    observation: Observation
    label: str = ""
    repeat: Observation | None = None  # the same input again, for checks that compare
    invalid: bool = False  # the input breaks the schema (on purpose)
    trace: Any = None  # what a probe recorded, for the probe checks
    # A refused valid input's variations, one change each, and what became of them.
    variations: tuple[Varied, ...] = ()
    # The calls of other tools made just before, in order (a sequence that prepared its world),
    # or, once a failure is found to need them, the calls it needs (of the tool itself too).
    before: tuple[Step, ...] = ()
    # What read-only tools of the same server returned after the call and after it again.
    world: tuple[Reading, ...] = ()
    # Every call made in the worker since it last started fresh, in order (``before`` among
    # them): what a failure that does not happen again alone is made again after.
    prefix: tuple[Step, ...] = ()
    # For the same input made again after ``before``: what it came to in a fresh worker, with
    # nothing before it (a check of the state the calls left compares the two).
    fresh: Observation | None = None
    # When its answer is one the tool gave as a success to many inputs alike, and not to the
    # values other tools made: how it answered them (see _engine._templates).
    alike: Alike | None = None


@dataclass(frozen=True)
class Alike:
    """A success given alike to ``inputs`` distinct inputs the kit drew (``calls`` calls in
    all), the strings they echo and the digits aside, where the values other tools made were
    answered otherwise (``otherwise``, one such answer)."""

    inputs: int
    calls: int
    otherwise: str
