"""Every registered protocol, in process, on fixture tools: which objects it recognises, what it
says about them, how it calls them, and the registry that finds the protocols.

No worker runs here: these are the protocols the worker uses, called directly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import pickle
import tomllib
from collections.abc import Callable, Iterator
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

import pytest

import zoo_amplifier
import zoo_axio
import zoo_axm
import zoo_langchain
import zoo_openai_agents
import zoo_pydantic_ai
import zoo_smolagents
import zoo_tool_use
from axm_conformance._checks import CHECKS, CheckContext
from axm_conformance._feeds import FEEDS
from axm_conformance._refs import clean_up, load
from axm_conformance.protocols import (
    ENTRY_POINT_GROUP,
    LoadError,
    RegistryError,
    ToolProtocol,
    _registry,
    capabilities,
    detect,
    entry_point_groups,
    profile_of_ref,
    profiles,
    protocol_for,
    protocol_named,
    registered,
    tool_from,
)
from axm_conformance.protocols._registry import UnknownProtocol
from axm_conformance.protocols.base import LoadOptions
from axm_conformance.protocols.mcp._server import Connection, McpTool, command_of
from axm_runtime.axio import AllowAllGuard, HandlerError, Tool
from tests.conftest import FIXTURES

MANIFEST: list[dict[str, Any]] = tomllib.loads((FIXTURES / "manifest.toml").read_text())["tool"]
# Hostile tools are loaded only in workers; the others are plain objects, safe to load here.
# A plain function named as a protocol's (Pydantic AI's) is that protocol's only when named.
ZOO = [entry for entry in MANIFEST if not entry.get("hostile") and not entry.get("named")]


# Detection


@pytest.mark.parametrize("entry", ZOO, ids=[entry["ref"] for entry in ZOO])
def test_every_fixture_tool_is_detected_as_the_protocol_the_manifest_gives(
    entry: dict[str, Any],
) -> None:
    ((ref, obj, hint),) = load(entry["ref"])
    assert (ref, hint) == (entry["ref"], "auto")
    assert detect(obj) == entry["protocol"]
    assert protocol_for(obj, ref).describe().protocol == entry["protocol"]


class _Handler:
    async def handler(self, text: str) -> str:
        return text


class _HandlerWithOutputSchema(_Handler):
    output_schema: dict[str, Any] = {}


class _Entry:
    tool_entry = object()


class _NamedInput:
    async def execute(self, input):  # type: ignore[no-untyped-def]
        return input


class _SyncNamedInput:
    def execute(self, input):  # type: ignore[no-untyped-def]
        return input


class _MappingInput:
    async def execute(self, data: dict[str, Any]) -> Any:
        return data


class _DeclaredSchema:
    input_schema: dict[str, Any] = {"type": "object"}

    async def execute(self, data):  # type: ignore[no-untyped-def]
        return data


class _Unannotated:
    def execute(self, data):  # type: ignore[no-untyped-def]
        return data


class _Keywords:
    def execute(self, *, text: str) -> str:
        return text


class _InputAndMore:
    async def execute(self, input: dict[str, Any], *, mode: str) -> Any:
        return input


class _Nothing:
    name = "nothing"


@pytest.mark.parametrize(
    ("obj", "protocol"),
    [
        (_HandlerWithOutputSchema(), "tool_use"),
        (_Entry(), "tool_use"),
        (_Handler(), "axio"),
        (_NamedInput(), "amplifier"),
        # Sync or async does not decide: a sync one is an Amplifier tool that fails callable-shape.
        (_SyncNamedInput(), "amplifier"),
        (_MappingInput(), "amplifier"),
        (_DeclaredSchema(), "amplifier"),
        (_Unannotated(), "axm"),
        (_Keywords(), "axm"),
        (_InputAndMore(), "axm"),
        (_Nothing(), "unknown"),
    ],
    ids=lambda value: type(value).__name__.lstrip("_") if not isinstance(value, str) else value,
)
def test_detection_takes_the_most_specific_shape_first(obj: Any, protocol: str) -> None:
    assert detect(obj) == protocol


# What describe() says


# (ref, object, expected facts) of one correct tool per protocol.
DESCRIBED: dict[str, tuple[str, Any, dict[str, Any]]] = {
    "axm": (
        "zoo_axm:SlugTool",
        zoo_axm.SlugTool(),
        {
            "callable": ("execute", False, False),
            "call_style": "keywords",
            "schema_source": "derived",
        },
    ),
    "axio": (
        "zoo_axio:convert_length",
        zoo_axio.convert_length,
        {
            "callable": ("handler", True, True),
            "call_style": "keywords",
            "schema_source": "derived",
        },
    ),
    "tool_use": (
        "zoo_tool_use:celsius_to_kelvin",
        zoo_tool_use.celsius_to_kelvin,
        {
            "callable": ("handler", False, False),
            "call_style": "dict",
            "schema_source": "declared",
        },
    ),
    "amplifier": (
        "zoo_amplifier:TodoTool",
        zoo_amplifier.TodoTool(),
        {
            "callable": ("execute", True, True),
            "call_style": "dict",
            "schema_source": "declared",
        },
    ),
    "langchain": (
        "zoo_langchain:capital_of",
        zoo_langchain.capital_of,
        {
            "callable": ("coroutine", True, True),
            "call_style": "keywords",
            "schema_source": "declared",
        },
    ),
    "smolagents": (
        "zoo_smolagents:Repeat",
        zoo_smolagents.Repeat(),
        {
            "callable": ("forward", False, False),
            "call_style": "keywords",
            "schema_source": "declared",
        },
    ),
    "openai_agents": (
        "zoo_openai_agents:capital_of",
        zoo_openai_agents.capital_of,
        {
            "callable": ("capital_of", True, True),
            "call_style": "keywords",
            "schema_source": "declared",
        },
    ),
    "pydantic_ai": (
        "zoo_pydantic_ai:capital_tool",
        zoo_pydantic_ai.capital_tool,
        {
            "callable": ("capital_of", True, True),
            "call_style": "keywords",
            "schema_source": "derived",
        },
    ),
}


def in_process() -> set[str]:
    """The protocols whose tools are Python objects here (MCP's are described and called by
    tests/kit/test_mcp_servers.py, through servers)."""
    return {
        name for name, protocol in registered().items() if "in-process" in protocol.capabilities
    }


def test_a_correct_tool_of_every_registered_protocol_is_described_here() -> None:
    assert set(DESCRIBED) == in_process()


@pytest.mark.parametrize("name", list(DESCRIBED))
def test_describe_gives_the_facts_the_checks_read(name: str) -> None:
    ref, obj, expected = DESCRIBED[name]
    info = protocol_for(obj, ref).describe()
    assert (info.ref, info.protocol, info.protocol_title) == (ref, name, registered()[name].title)
    target = info.callable
    assert (target.name, target.is_async, target.expects_async) == expected["callable"]
    assert target.present and target.is_callable and target.has_signature
    assert info.call_style == expected["call_style"]
    assert info.schema_source == expected["schema_source"]
    assert info.schema_error == ""
    assert isinstance(info.input_schema, dict) and info.input_schema["type"] == "object"
    assert info.capabilities == registered()[name].capabilities
    assert info.name_type == "str"


# Which protocols offer each capability: what the contract pages say about each protocol.
FRAMEWORKS = {"langchain", "smolagents", "openai_agents", "pydantic_ai"}
OFFERED = {
    "in-process": {"axm", "axio", "tool_use", "amplifier", *FRAMEWORKS},
    "python-exceptions": {"axm", "axio", "tool_use", "amplifier", *FRAMEWORKS},
    "description": {"axio", "tool_use", "amplifier", "mcp", *FRAMEWORKS},
    "output-schema": {"axm", "tool_use", "amplifier", "mcp", "smolagents", "pydantic_ai"},
    "refusal-exceptions": {"pydantic_ai"},
    "discovery-metadata": {"axm"},
    "json-rpc": {"mcp"},
    "behaviour-hints": {"mcp"},
    "writes-traced": {"mcp"},
    "effects-declared": {"axio"},
    "guards": {"axio"},
    "concurrency-limit": {"axio"},
}


def test_each_capability_is_offered_by_the_protocols_whose_runtime_has_it() -> None:
    assert set(OFFERED) == set(capabilities())
    offered = {
        capability: {
            name for name, protocol in registered().items() if capability in protocol.capabilities
        }
        for capability in capabilities()
    }
    assert offered == OFFERED


def test_each_protocol_has_its_own_severity_policy() -> None:
    axm, axio, tool_use, amplifier = (
        registered()[name].policy for name in ("axm", "axio", "tool_use", "amplifier")
    )
    # AXM: its MCP layer validates before execute and absorbs what escapes; it promises
    # determinism.
    assert axm.exception == "result" and axm.invalid == "result"
    assert axm.invalid_absorber and axm.exception_absorber and axm.promises_determinism
    # axio: only its own errors escape, a handler's wrapped; unknown keys are dropped.
    assert axio.exception == "wrapped" and axio.invalid == "raise"
    assert axio.allowed_exceptions == ("GuardError", "HandlerError")
    assert axio.strips_unknown_keys and not axio.promises_determinism
    # tool_use: a raise is the domain error; the registry refuses invalid input.
    assert (tool_use.exception, tool_use.invalid) == ("domain", "refuse")
    # Amplifier: the orchestrator absorbs an escaping exception, and validates nothing.
    assert amplifier.exception == "result" and amplifier.exception_absorber
    assert not amplifier.invalid_absorber


def test_axm_reads_a_declared_schema_and_the_discovery_metadata() -> None:
    declared = protocol_for(zoo_axm.RenamedParameterTool(), "zoo_axm:RenamedParameterTool")
    assert declared.describe().schema_source == "declared"
    metadata = protocol_for(zoo_axm.GitLogTool(), "zoo_axm:GitLogTool").describe().metadata
    assert metadata["tags"] == ("str", "git,history")


def test_axio_describes_a_handler_class_without_a_signature_and_counts_guards() -> None:
    info = protocol_for(zoo_axio.paginate, "zoo_axio:paginate").describe()
    assert info.variant == "handler-class"
    assert (info.callable.has_signature, info.callable.parameters) == (False, ())
    assert protocol_for(zoo_axio.convert_length, "ref").describe().variant == "function"
    guards = (AllowAllGuard(), AllowAllGuard())
    guarded: Tool[Any] = Tool(name="g", handler=_Handler().handler, guards=guards, concurrency=3)
    described = protocol_for(guarded, "ref").describe()
    assert (described.guards, described.concurrency) == (2, 3)


def test_a_tool_use_function_stands_for_the_entry_it_carries() -> None:
    protocol = protocol_for(zoo_tool_use.celsius_to_kelvin, "ref")
    assert protocol.obj is zoo_tool_use.celsius_to_kelvin.tool_entry


def test_an_object_of_no_protocol_is_described_with_what_it_lacks() -> None:
    info = protocol_for(_Nothing(), "ref").describe()
    assert (info.protocol, info.call_style, info.variant) == ("unknown", "none", "_Nothing")
    assert info.missing == (
        "a member an input reaches: `invoke` (LangChain) or `forward` (smolagents) or "
        "`on_invoke_tool` (OpenAI Agents SDK) or `function` (Pydantic AI) or `handler` "
        "(tool_use, axio) or `execute` (Amplifier, AXM)",
    )
    assert protocol_for(object(), "ref").describe().missing[0] == "a `name`"


# Calls


def settle(value: Any) -> Any:
    return asyncio.run(value) if inspect.iscoroutine(value) else value


# (ref, object, input, result fields) of a call of one correct tool per protocol.
CALLED: dict[str, tuple[str, Any, dict[str, Any], dict[str, Any]]] = {
    "axm": (
        "zoo_axm:SlugTool",
        zoo_axm.SlugTool(),
        {"title": "Hello, World!"},
        {
            "success": True,
            "data": {"slug": "hello-world"},
            "error": None,
            "hint": None,
            "text": None,
        },
    ),
    "axio": (
        "zoo_axio:convert_length",
        zoo_axio.convert_length,
        {"value": 1.5, "unit": "cm"},
        {"value": "150 cm"},
    ),
    "tool_use": (
        "zoo_tool_use:celsius_to_kelvin",
        zoo_tool_use.celsius_to_kelvin,
        {"celsius": 0},
        {"value": {"kelvin": 273.15}},
    ),
    "amplifier": (
        "zoo_amplifier:TodoTool",
        zoo_amplifier.TodoTool(),
        {"action": "add", "item": "milk"},
        {"success": True, "output": {"added": "milk"}, "error": None, "metadata": None},
    ),
    "langchain": (
        "zoo_langchain:capital_of",
        zoo_langchain.capital_of,
        {"country": "Japan"},
        {"content": "Tokyo", "status": "success"},
    ),
    "smolagents": (
        "zoo_smolagents:Repeat",
        zoo_smolagents.Repeat(),
        {"text": "ab", "times": 3},
        {"value": "ababab"},
    ),
    "openai_agents": (
        "zoo_openai_agents:percent_of",
        zoo_openai_agents.percent_of,
        {"value": 1, "total": 4},
        {"value": "25.0%"},
    ),
    "pydantic_ai": (
        "zoo_pydantic_ai:capital_tool",
        zoo_pydantic_ai.capital_tool,
        {"country": "Peru"},
        {"value": "Lima"},
    ),
}


def test_a_correct_tool_of_every_registered_protocol_is_called_here() -> None:
    assert set(CALLED) == in_process()


@pytest.mark.parametrize("name", list(CALLED))
def test_a_correct_tool_is_called_as_its_protocol_calls_it(name: str) -> None:
    ref, obj, input, fields = CALLED[name]
    protocol = protocol_for(obj, ref)
    assert protocol.refuses(input) == ""
    facts = protocol.facts(settle(protocol.call(input)), size_limit=1 << 20)
    assert facts.fields == fields
    assert facts.problems == () and not facts.truncated


def test_an_async_execute_called_as_axm_gives_a_coroutine_and_leaves_none_pending() -> None:
    protocol = protocol_for(zoo_axm.AsyncWeatherTool(), "zoo_axm:AsyncWeatherTool")
    returned = protocol.call({"city": "Oslo"})
    assert not inspect.isawaitable(returned)
    assert protocol.facts(returned, size_limit=1 << 20).type_name == "coroutine"


def test_a_result_over_the_size_limit_is_cut_and_its_size_a_lower_bound() -> None:
    protocol = protocol_for(zoo_axio.convert_length, "ref")
    facts = protocol.facts("x" * 5000, size_limit=1000)
    assert facts.truncated and facts.size > 1000
    assert facts.fingerprint.startswith("at least ")


@pytest.mark.parametrize(
    ("input", "refusal"),
    [
        ({"title": "a"}, ""),
        ({}, "the arguments do not bind to execute: missing a required argument: 'title'"),
        (
            {"title": "a", "colour": "red"},
            "the arguments do not bind to execute: got an unexpected keyword argument 'colour'",
        ),
        ([1], "the input is not an object, so it cannot be passed as keyword arguments"),
    ],
    ids=["binds", "missing", "unknown", "not-an-object"],
)
def test_axm_refuses_what_does_not_bind_to_execute(input: Any, refusal: str) -> None:
    """The orchestrator binds arguments before the tool runs: such a call never reaches it."""
    assert protocol_for(zoo_axm.SlugTool(), "ref").refuses(input) == refusal


def test_a_dict_protocol_refuses_nothing() -> None:
    """An Amplifier tool gets the input as it is: judging what it does with it is its check."""
    protocol = protocol_for(zoo_amplifier.TodoTool(), "ref")
    assert protocol.refuses([1]) == protocol.refuses({}) == ""


def test_tool_use_invalid_input_goes_through_the_registry() -> None:
    protocol = protocol_for(zoo_tool_use.celsius_to_kelvin, "ref")
    assert protocol.call_invalid({"celsius": "hot"}) == {
        "status": "failure",
        "errors": ["/celsius: 'hot' is not of type 'number'"],
    }
    assert protocol.handler_called is False
    assert protocol.call_invalid({"celsius": 1}) == {"status": "success", "errors": []}
    assert protocol.handler_called is True


def test_axio_invalid_input_records_whether_the_handler_ran() -> None:
    protocol = protocol_for(zoo_axio.convert_length, "ref")
    with pytest.raises(HandlerError, match="is not of type 'number'"):
        settle(protocol.call_invalid({"value": "far"}))
    assert protocol.handler_called is False
    assert settle(protocol.call_invalid({"value": 2})) == "2 m"
    assert protocol.handler_called is True


# Loading


async def shout(text: str) -> str:
    return text.upper()


def test_axio_wraps_a_bare_async_def_as_its_loader_does() -> None:
    tool = registered()["axio"].tool_from("tests.unit.test_protocols:shout", shout)
    assert isinstance(tool, Tool) and (tool.name, tool.handler) == ("shout", shout)
    assert settle(protocol_for(tool, "ref").call({"text": "hi"})) == "HI"
    # Published in axio.tools, it is named by its entry point.
    published = registered()["axio"].tool_from("entry-point:axio.tools:yell", shout)
    assert published is not None and published.name == "yell"
    # Anything else is not a bare handler.
    assert registered()["axio"].tool_from("ref", str.upper) is None
    assert registered()["axio"].tool_from("ref", zoo_axio.convert_length) is None


def test_the_registry_makes_a_tool_of_a_bare_object_only_where_a_protocol_does() -> None:
    assert isinstance(tool_from("ref", shout, "auto"), Tool)
    assert tool_from("ref", shout, "axm") is shout
    plain = _Keywords()
    assert tool_from("ref", plain, "auto") is plain


@pytest.fixture
def run() -> Iterator[Callable[[Any], Any]]:
    """One event loop for a module's mount and its cleanups, as the worker keeps one."""
    loop = asyncio.new_event_loop()
    yield loop.run_until_complete
    loop.close()


def test_an_amplifier_module_is_mounted_and_cleaned_up(
    run: Callable[[Any], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cleanups: list[Callable[[], Any]] = []
    amplifier = registered()["amplifier"]
    loaded = amplifier.published(
        "entry-point:amplifier.modules:todo", zoo_amplifier.mount, run, cleanups
    )
    assert [(ref, type(tool), hint) for ref, tool, hint in loaded] == [
        ("entry-point:amplifier.modules:todo[todo]", zoo_amplifier.TodoTool, "amplifier")
    ]
    session = [tmp_path / name for name in zoo_amplifier.SESSION_FILES]
    assert all(path.exists() for path in session)
    # The coordinator's cleanup and the one mount returned.
    assert len(cleanups) == 2
    clean_up(cleanups, run)
    assert not any(path.exists() for path in session)


def test_every_tool_an_amplifier_module_mounts_is_a_tool_under_test(
    run: Callable[[Any], Any],
) -> None:
    from axm_runtime.examples import amplifier_tools

    amplifier = registered()["amplifier"]
    loaded = amplifier.published(
        "entry-point:amplifier.modules:ex", amplifier_tools.mount, run, None
    )
    assert [ref for ref, _, _ in loaded] == [
        "entry-point:amplifier.modules:ex[calculator]",
        "entry-point:amplifier.modules:ex[text_stats]",
    ]
    returned = amplifier.published(
        "entry-point:amplifier.modules:r", zoo_amplifier.mount_returning_the_tool, run, None
    )
    assert [(ref, type(tool)) for ref, tool, _ in returned] == [
        ("entry-point:amplifier.modules:r[todo]", zoo_amplifier.TodoTool)
    ]


async def _mounts_nothing(coordinator: Any, config: Any) -> None:
    return None


async def _mount_fails(coordinator: Any, config: Any) -> None:
    raise OSError("no such file: settings.toml")


@pytest.mark.parametrize(
    ("mount", "message"),
    [
        (_mounts_nothing, "'entry-point:amplifier.modules:m': the module mounted no tools"),
        (
            _mount_fails,
            "'entry-point:amplifier.modules:m': mount(coordinator, {}) raised "
            "OSError: no such file: settings.toml",
        ),
    ],
    ids=["mounts-nothing", "raises"],
)
def test_an_amplifier_module_that_gives_no_tool_is_a_load_error(
    run: Callable[[Any], Any], mount: Any, message: str
) -> None:
    amplifier = registered()["amplifier"]
    with pytest.raises(LoadError) as raised:
        amplifier.published("entry-point:amplifier.modules:m", mount, run, None)
    assert str(raised.value) == message


def test_other_protocols_publish_the_object_itself(run: Callable[[Any], Any]) -> None:
    tool = zoo_axm.SlugTool()
    assert registered()["axm"].published("entry-point:axm.tools:slug", tool, run, None) == [
        ("entry-point:axm.tools:slug", tool, "axm")
    ]


# The registry


def test_the_protocols_are_registered_in_detection_order() -> None:
    protocols = registered()
    assert list(protocols) == [
        "langchain",
        "smolagents",
        "openai_agents",
        "pydantic_ai",
        "tool_use",
        "axio",
        "amplifier",
        "axm",
        "mcp",
    ]
    orders = [protocol.detection_order for protocol in protocols.values()]
    assert orders == sorted(orders)
    assert all(name == protocol.name for name, protocol in protocols.items())
    assert protocol_named("no-such-protocol") is UnknownProtocol


def test_each_entry_point_group_implies_one_protocol() -> None:
    assert entry_point_groups() == {
        "axm.tools": "axm",
        "axm.tribunal.tools": "axm",
        "axio.tools": "axio",
        "amplifier.modules": "amplifier",
    }


@pytest.mark.parametrize("name", list(registered()))
def test_a_protocol_declares_what_the_kit_reads_from_it(name: str) -> None:
    protocol = registered()[name]
    assert protocol.capabilities <= set(capabilities())
    assert "{input}" in protocol.call_snippet
    # A probe feed is offered exactly where the capability it judges is.
    wanted = {"guards", "crashing-guard"} if "guards" in protocol.capabilities else set()
    if "concurrency-limit" in protocol.capabilities:
        wanted.add("concurrency")
    assert set(protocol.probes) == wanted
    for feed, target in protocol.probes.items():
        assert feed in FEEDS
        module, _, function = target.partition(":")
        assert callable(getattr(import_module(module), function))


class _Metadata:
    """importlib.metadata as the registry sees it, with these protocol entry points."""

    def __init__(self, found: list[metadata.EntryPoint]) -> None:
        self.found = found

    def entry_points(self, *, group: str) -> list[metadata.EntryPoint]:
        assert group == ENTRY_POINT_GROUP
        return self.found


class Impostor(ToolProtocol):
    """Registered under a name the kit already has."""

    name = "axm"
    title = "AXM"


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """Make the registry read the given protocol entry points (besides the installed ones, with
    ``installed=True``), afresh."""

    def use(*values: str, installed: bool = False) -> None:
        found = list(metadata.entry_points(group=ENTRY_POINT_GROUP)) if installed else []
        found += [
            metadata.EntryPoint(f"extra{index}", value, ENTRY_POINT_GROUP)
            for index, value in enumerate(values)
        ]
        monkeypatch.setattr(_registry, "metadata", _Metadata(found))
        registered.cache_clear()

    yield use
    registered.cache_clear()


@pytest.mark.parametrize(
    ("values", "installed", "message"),
    [
        (
            ("os.path:join",),
            True,
            "protocol entry point 'extra0' (os.path:join) is not a subclass of "
            "axm_conformance.protocols.ToolProtocol",
        ),
        (
            ("no_such_module_here:Protocol",),
            True,
            "protocol entry point 'extra0' (no_such_module_here:Protocol) of group "
            "axm_conformance.protocols raised ModuleNotFoundError on loading: No module named "
            "'no_such_module_here'",
        ),
        (
            ("tests.unit.test_protocols:Impostor",),
            True,
            "two protocols are registered under the name 'axm'",
        ),
        (
            (),
            False,
            "no protocol is registered under the entry-point group axm_conformance.protocols: "
            "reinstall axm-conformance (pip install axm-conformance, or pip install -e .)",
        ),
    ],
    ids=["not-a-protocol", "does-not-load", "twice", "none"],
)
def test_an_unusable_protocol_entry_point_is_a_one_line_registry_error(
    entry_points: Callable[..., None], values: tuple[str, ...], installed: bool, message: str
) -> None:
    entry_points(*values, installed=installed)
    with pytest.raises(RegistryError) as raised:
        registered()
    assert str(raised.value) == message


def test_a_protocol_registered_by_entry_point_is_detected_before_the_kits_own(
    entry_points: Callable[..., None],
) -> None:
    """The registry orders by ``detection_order``, whoever registered the protocol."""
    entry_points("tests.unit.test_protocols:RunProtocol", installed=True)
    assert list(registered())[:2] == ["run", "langchain"]
    assert detect(_Runs()) == "run"
    assert detect(_Keywords()) == "axm"


class RunProtocol(ToolProtocol):
    """Tools with a ``run(input)``: more specific than any of the kit's own shapes."""

    name = "run"
    title = "run"
    detection_order = 5
    callable_name = "run"

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return callable(getattr(obj, "run", None))


class _Runs(_Keywords):
    def run(self, input: dict[str, Any]) -> Any:
        return input


class ExecuteRunProtocol(RunProtocol):
    """A plugin whose shape overlaps AXM's without narrowing it: both detect the same object."""

    name = "execute-run"
    title = "execute-run"
    detection_order = 60

    @classmethod
    def detects(cls, obj: Any) -> bool:
        return callable(getattr(obj, "execute", None))


def test_two_protocols_that_detect_one_object_are_both_named(
    entry_points: Callable[..., None],
) -> None:
    """The lower detection_order wins, and protocol-shape warns naming the other: the kit's
    own overlaps (tool_use within axio, Amplifier within AXM) are declared and never warned."""
    entry_points("tests.unit.test_protocols:ExecuteRunProtocol", installed=True)
    chosen = protocol_for(zoo_axm.SlugTool(), "zoo_axm:SlugTool")
    assert (chosen.name, chosen.rivals) == ("axm", ("execute-run",))
    (finding,) = CHECKS["protocol-shape"].findings(
        chosen.describe(), None, CheckContext(settings=None)
    )
    assert finding.text.startswith(
        "it has the shape of execute-run tools too, and was certified as AXM's"
    )
    amplifier = next(entry["ref"] for entry in ZOO if entry["protocol"] == "amplifier")
    ((ref, obj, _),) = load(amplifier)
    assert protocol_for(obj, ref).rivals == ("execute-run",)


def test_the_kits_own_overlapping_shapes_are_declared() -> None:
    for entry in ZOO:
        ((ref, obj, _),) = load(entry["ref"])
        assert protocol_for(obj, ref).rivals == (), entry["ref"]


class _Model:
    """Stands for a pydantic model class: what declares its JSON Schema by a method."""

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]:
        return {"type": "object", "properties": {"city": {"type": "string"}}}


@pytest.mark.parametrize(
    ("declared", "document", "error"),
    [
        ({"type": "object"}, {"type": "object"}, ""),
        (True, True, ""),
        (_Model, {"type": "object", "properties": {"city": {"type": "string"}}}, ""),
        (object(), None, "it is a object, not a JSON Schema (a dict) or a pydantic model"),
        (int, None, "it is the class int, not a JSON Schema (a dict) or a pydantic model"),
    ],
)
def test_a_declared_schema_becomes_a_json_schema_document(
    declared: Any, document: Any, error: str
) -> None:
    """A schema declared as an object (a pydantic model class, as frameworks declare them) is
    read through ToolProtocol.schema_document; anything else is no schema, said in one line,
    never an object that cannot leave the worker."""
    assert ToolProtocol.schema_document(declared) == (document, error)


def test_a_tool_whose_schema_is_a_model_class_is_described_with_its_json_schema() -> None:
    class Weather:
        name = "weather"
        input_schema = _Model

        def execute(self, *, city: str) -> Any:
            return city

    described = RunProtocol(Weather(), "t:Weather").describe()
    assert described.input_schema == _Model.model_json_schema()
    assert described.schema_error == ""


class PerToolProtocol(RunProtocol):
    """Tools whose callable, and whether it is awaited, differ tool by tool."""

    name = "per-tool"
    title = "per-tool"
    call_snippet = "tool.go({input})"

    def target(self) -> Any:
        from axm_conformance.protocols import Target

        coroutine = getattr(self.obj, "coroutine", None)
        if coroutine is not None:
            return Target("coroutine", coroutine, awaits=True)
        return Target("func", self.obj.func, awaits=False)


def test_the_member_an_input_reaches_is_read_tool_by_tool() -> None:
    async def fetch(city: str) -> str:
        return city

    def look_up(city: str) -> str:
        return city

    class Wrapper:
        def __init__(self, **members: Any) -> None:
            self.__dict__.update(members)

    for tool, name, is_async in (
        (Wrapper(coroutine=fetch), "coroutine", True),
        (Wrapper(func=look_up), "func", False),
    ):
        described = PerToolProtocol(tool, "t").describe().callable
        assert (described.name, described.is_async, described.expects_async) == (
            name,
            is_async,
            is_async,
        )
        # The tool's own objects are its function, not the wrapper's class alone.
        assert PerToolProtocol(tool, "t").own_objects()[1] is getattr(tool, name)


def test_a_reproduction_snippet_is_lines_whose_last_is_the_call() -> None:
    assert PerToolProtocol.profile().snippet("{'a': 1}") == ("tool.go({'a': 1})",)
    assert protocol_named("amplifier").profile().snippet("{}") == (
        "import asyncio",
        "asyncio.run(tool.execute({}))",
    )
    # The lines a call needs come between the imports the call implies and the call itself.
    *setup, call = protocol_named("openai_agents").profile().snippet("{}")
    assert setup == ["import asyncio", "import json", "from agents.tool_context import ToolContext"]
    assert call.startswith("asyncio.run(tool.on_invoke_tool(ToolContext(")


@pytest.mark.parametrize(
    ("tool", "named", "says"),
    [
        (
            zoo_tool_use.celsius_to_kelvin,
            "axm",
            "it lacks the `execute` of an AXM tool: it was loaded as AXM (by --axm-protocol or "
            "its entry-point group), but it has the shape of a tool_use tool; certify it as one "
            "with --axm-protocol=tool_use",
        ),
        (
            zoo_axm.SlugTool(),
            "axio",
            "it lacks the `handler` of an axio tool: it was loaded as axio (by --axm-protocol or "
            "its entry-point group), but it has the shape of an AXM tool; certify it as one with "
            "--axm-protocol=axm, or publish it in axm.tools or axm.tribunal.tools",
        ),
    ],
)
def test_a_tool_named_as_another_protocols_says_which_it_looks_like(
    tool: Any, named: str, says: str
) -> None:
    """A tool_use tool published under axm.tools is not described as an AXM tool without a
    name and an execute: the one finding says what it is and how to certify it."""
    described = protocol_for(tool, "entry-point:axm.tools:t", named).describe()
    assert described.protocol == "unknown"
    assert isinstance(described.name, str)  # read as the protocol it looks like reads it
    (finding,) = CHECKS["protocol-shape"].findings(described, None, CheckContext(settings=None))
    assert finding.text.endswith(says)


def test_a_tool_with_the_member_of_the_protocol_it_is_named_as_keeps_that_protocol() -> None:
    """An AXM tool named as Amplifier has an execute: it is judged as Amplifier's, by
    callable-shape and the rest, not re-detected."""
    assert protocol_for(zoo_axm.SlugTool(), "zoo_axm:SlugTool", "amplifier").name == "amplifier"


def _text_result(text: str, *, failed: bool = False) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": text}], "isError": failed}}


def test_an_mcp_success_in_the_form_of_the_servers_own_errors_is_told() -> None:
    """The form of a server's errors is learnt from its failed answers, whichever tool gave
    them: their text up to the first ': ', or the whole message when it has none."""
    connection = Connection(["server"], LoadOptions())
    tool = McpTool(connection, definition={"name": "read"})
    neighbour = McpTool(connection, definition={"name": "write"})
    tool.remember(_text_result("Error: no such file", failed=True))
    neighbour.remember({"error": {"code": -32603, "message": "quota exceeded"}})
    tool.remember(_text_result("3"))  # a success teaches nothing
    assert connection.error_texts == ["Error: no such file", "quota exceeded"]
    assert tool.resembled_error(_text_result("Error: disk full")) == "Error: no such file"
    assert tool.resembled_error(_text_result("quota exceeded")) == "quota exceeded"
    assert tool.resembled_error(_text_result("quota exceeded soon")) == ""
    assert tool.resembled_error(_text_result("Errors: none")) == ""
    assert tool.resembled_error(_text_result("Error: disk full", failed=True)) == ""


# Two faces


@pytest.mark.parametrize("name", list(registered()))
def test_a_protocols_profile_is_what_its_adapter_declares_frozen_and_picklable(name: str) -> None:
    """The kit's process knows a protocol by its profile alone: it must say what the adapter
    declares, each capability with what a check requiring it relies on, and cross processes."""
    adapter, profile = registered()[name], profiles()[name]
    assert pickle.loads(pickle.dumps(profile)) == profile
    with pytest.raises(dataclasses.FrozenInstanceError):
        profile.name = "other"  # type: ignore[misc]
    assert (profile.name, profile.title, profile.policy, profile.result) == (
        adapter.name,
        adapter.title,
        adapter.policy,
        adapter.result,
    )
    assert profile.capabilities.keys() == adapter.capabilities
    assert all(profile.capabilities[each] == capabilities()[each] for each in profile.capabilities)
    for group in profile.entry_point_groups:
        assert entry_point_groups()[group] == name


def test_a_protocol_offering_a_capability_nobody_defines_is_a_registry_error() -> None:
    class Telepathic(ToolProtocol):
        name = "telepathic"
        title = "Telepathic"
        capabilities = frozenset({"in-process", "telepathy"})

    with pytest.raises(RegistryError, match="'telepathic' offers 'telepathy', which neither"):
        Telepathic.profile()


def test_a_reference_a_protocol_loads_itself_is_known_by_its_profile() -> None:
    profile = profile_of_ref("mcp:python -m server")
    assert profile is not None and profile.name == "mcp"
    assert "in-process" not in profile.capabilities
    assert profile_of_ref("zoo_axm:SlugTool") is None


def test_an_http_server_is_told_its_port_in_its_command_or_its_environment() -> None:
    assert command_of("mcp-http:srv --port {port}") == ["srv", "--port", "{port}"]
    assert command_of("mcp-http:srv", {"PORT": "{port}"}) == ["srv"]
    with pytest.raises(LoadError, match=r"put \{port\} where .* or in its environment"):
        command_of("mcp-http:srv --port 80")
    # Over stdio no port is wanted.
    assert command_of("mcp:srv") == ["srv"]
