"""The kit's side of the worker: load tools, describe them, call them and observe each call.

These functions run inside the worker process (see
:mod:`axm_conformance._process.parent._worker`), the only place tool code ever runs; the kit calls
them by name (``axm_conformance._process.child._agent:invoke``). Everything they return is plain
data from :mod:`axm_conformance._observation`.

A tool shares the worker process with this code, so :func:`invoke` assumes the worst of it: the
call may raise anything, return an object that raises or hangs when read, or leave the process
changed. Whatever happens, invoke returns an Observation, and it describes what the call left
behind (see :mod:`axm_conformance._process.child._sideeffects`) as ``side_effects``, each of its
kind.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
import os
import time
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from axm_conformance._jsonable import first_difference, jsonable
from axm_conformance._observation import Observation, SideEffect, SubjectInfo
from axm_conformance._process.child._exceptions import release, safe_exception_info, type_name
from axm_conformance._process.child._filewatch import FileWatch, project_roots
from axm_conformance._process.child._literals import literals_of
from axm_conformance._process.child._sideeffects import Watch, watch_writes
from axm_conformance._process.child._toolstate import ToolState
from axm_conformance._refs import clean_up, load
from axm_conformance._workdir import Snapshot, snapshot
from axm_conformance.protocols import (
    CallCrashed,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    Runner,
    ToolProtocol,
    not_a_tool,
    protocol_for,
)

__all__ = ["close_tool", "describe_all", "invoke", "open_tool", "open_tools"]


def _distribution(obj: Any) -> tuple[str, str] | None:
    """The installed distribution that provides the module ``obj`` was defined in, if any."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    top = (module or "").partition(".")[0]
    for distribution in _providers().get(top, ()):
        name = distribution.metadata["Name"]
        if name:
            return name, distribution.version
    return None


@functools.cache
def _providers() -> Mapping[str, list[metadata.Distribution]]:
    """Which installed distributions provide each top-level module, read once per process.

    What ``importlib.metadata.packages_distributions`` tells, from the same files (the declared
    ``top_level.txt``, else the first part of each path in ``RECORD``), read as plain text: that
    function also parses every distribution's metadata and makes a path object of every file
    listed, about seven times slower, and a worker that inspects a tool waits for it.
    """
    found: dict[str, list[metadata.Distribution]] = {}
    for distribution in metadata.distributions():
        declared = distribution.read_text("top_level.txt")
        names: set[str | None]
        if declared is not None:
            names = set(declared.split())
        else:
            listed = (distribution.read_text("RECORD") or "").splitlines()
            names = {_top_level(line.partition(",")[0]) for line in listed}
        for name in names:
            if name and name.isidentifier():
                found.setdefault(name, []).append(distribution)
    return found


def _top_level(path: str) -> str | None:
    """The top-level module a file listed in RECORD belongs to (None: not a module's file)."""
    head, slash, _ = path.partition("/")
    return head if slash else inspect.getmodulename(head)


def _protocol(option: str, hint: str) -> str:
    return option if option != "auto" else hint


def open_tools(
    refs: list[str],
    protocol: str,
    size_limit: int,
    options: LoadOptions | None = None,
    together: tuple[str, ...] = (),
) -> ToolState[ToolProtocol] | list[SubjectInfo]:
    """Setup of the inspecting worker: load every tool the references name.

    When they name exactly one, the state is that tool, ready to be called: the worker that
    inspected it can go on to certify it, with the tools ``together`` names loaded beside it
    (see _load_together). Otherwise the state is their descriptions. ``options`` are for the
    references a protocol loads itself (an MCP server's start).
    """
    watch_writes()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    cleanups: Cleanups = []
    protocols = [
        protocol_for(obj, sub_ref, _protocol(protocol, hint))
        for ref in refs
        for sub_ref, obj, hint in _loaded_tools(
            ref, loop.run_until_complete, cleanups, options, protocol
        )
    ]
    if len(protocols) == 1:
        state = ToolState(protocols[0], loop, size_limit, cleanups=cleanups)
        state.together = _load_together(protocols[0], together, protocol, state, options)
        return state
    # Described before the cleanups: a tool of a server is described while its server runs.
    described = [_described(protocol) for protocol in protocols]
    clean_up(cleanups, loop.run_until_complete)
    loop.close()
    return described


def _loaded_tools(
    ref: str,
    run: Runner,
    cleanups: Cleanups,
    options: LoadOptions | None,
    protocol: str = "auto",
) -> Loaded:
    loaded = load(ref, run, cleanups, options, protocol)
    for sub_ref, obj, _ in loaded:
        why = not_a_tool(obj)
        if why is not None:
            raise LoadError(f"{sub_ref!r} is {why}")
    return loaded


def _load_together(
    tool: ToolProtocol,
    refs: tuple[str, ...],
    protocol: str,
    state: ToolState[ToolProtocol],
    options: LoadOptions | None,
) -> dict[str, ToolProtocol]:
    """The tools ``refs`` names, loaded beside ``tool`` so that they share its world.

    A tool of a server is one of the tools its server's reference lists: its siblings are taken
    from the same listing, on the same session. Other references are loaded in this process,
    where a module is imported once. A sibling that cannot be loaded is left out: it only
    prepares the world of the tool certified.
    """
    base = tool.ref.rpartition("[")[0] if tool.ref.endswith("]") else ""
    listed = getattr(tool.obj, "sibling", None)
    together: dict[str, ToolProtocol] = {}
    for ref in refs:
        try:
            if base and ref.startswith(f"{base}[") and callable(listed):
                obj, hint = listed(ref[len(base) + 1 : -1]), type(tool).name
                together[ref] = protocol_for(obj, ref, _protocol(protocol, hint))
                continue
            (sub_ref, obj, hint), *_ = _loaded_tools(
                ref, state.loop.run_until_complete, state.cleanups, options
            )
            together[ref] = protocol_for(obj, sub_ref, _protocol(protocol, hint))
        except Exception:  # a sibling that does not load prepares nothing
            continue
    return together


def describe_all(state: ToolState[ToolProtocol] | list[SubjectInfo]) -> list[SubjectInfo]:
    """Describe every tool the worker loaded (see open_tools)."""
    return [_described(state.protocol)] if isinstance(state, ToolState) else state


def _described(protocol: ToolProtocol) -> SubjectInfo:
    info = protocol.describe()
    literals = literals_of(protocol.own_objects()) if info.callable.present else ()
    return dataclasses.replace(info, distribution=_distribution(protocol.obj), literals=literals)


def open_tool(
    ref: str,
    protocol: str,
    size_limit: int,
    options: LoadOptions | None = None,
    together: tuple[str, ...] = (),
) -> ToolState[ToolProtocol]:
    """Load exactly one tool, and the tools ``together`` names beside it; the worker keeps the
    result as its state."""
    state = open_tools([ref], protocol, size_limit, options, together)
    if not isinstance(state, ToolState):
        raise ValueError(f"{ref!r} names {len(state)} tools, not one")
    return state


def close_tool(state: ToolState[ToolProtocol] | list[SubjectInfo]) -> None:
    """Teardown of the worker: run what loading the tool left to do (see open_tools)."""
    if isinstance(state, ToolState):
        _renew_loop(state)
        clean_up(state.cleanups, state.loop.run_until_complete)


def invoke(
    state: ToolState[ToolProtocol],
    input: Any,
    invalid: bool = False,
    condition: str = "",
    tool: str = "",
) -> Observation:
    """Call the tool once with ``input`` and observe everything the checks judge; ``tool``
    names one of the tools loaded beside it to call instead (see open_tool).

    An ``invalid`` input goes the way the protocol's caller sends one: the protocol may refuse it
    as the orchestrator would (``rejected``) or route it through the protocol's own validation.
    A ``condition`` is one the protocol makes the call under (see ToolProtocol.calling_under).
    Never raises: when even observing the call fails (the tool left the process unable to run
    the kit's code, say), the failure is reported as what the call raised.
    """
    try:
        protocol = state.together[tool] if tool else state.protocol
        return _invoke(state, protocol, input, invalid, condition)
    except BaseException as exc:
        release(exc)
        return Observation(
            status="raised",
            exception=safe_exception_info(exc, note="raised while the kit observed the call"),
        )


def _refusal(protocol: ToolProtocol, exc: BaseException) -> str:
    """What the protocol's runtime tells the model of ``exc`` as the tool's refusal ("" when it
    is not one, or when the protocol's own reading of it fails: then it is judged as raised)."""
    try:
        said = protocol.refusal(exc)
    except Exception:
        return ""
    return str.__str__(said) if isinstance(said, str) else ""


def _invoke(
    state: ToolState[ToolProtocol],
    protocol: ToolProtocol,
    input: Any,
    invalid: bool,
    condition: str,
) -> Observation:
    before = jsonable(copy.deepcopy(input))[0]
    _renew_loop(state)
    if invalid:
        refusal = protocol.refuses(input) or protocol.coerces(input)
        if refusal:
            return Observation(status="rejected", rejected_because=refusal)
    if state.files is None:
        state.files = FileWatch(project_roots())
    protocol.prepare()
    watch = Watch(state)
    # An in-process tool works in the worker's directory: what a call changes there is its
    # world, which the same input meets changed the next time.
    state.home = state.home or os.getcwd()
    workdir = snapshot(state.home) if "in-process" in protocol.capabilities else None
    protocol.handler_called = None
    started = time.perf_counter()
    try:
        with protocol.calling_under(condition):
            value = protocol.call_invalid(input) if invalid else protocol.call(input)
        if inspect.isawaitable(value):
            value = state.loop.run_until_complete(asyncio.ensure_future(value, loop=state.loop))
    except CallCrashed as exc:
        observation = Observation(
            status="crashed",
            crash_kind=exc.kind,
            crash_detail=str(exc),
            stderr_tail=exc.stderr_tail,
            duration=time.perf_counter() - started,
        )
        return _with_side_effects(observation, watch.changes(), workdir)
    except BaseException as exc:
        duration = time.perf_counter() - started
        # The tool's frames keep its locals (a memory bomb's hoard) alive: free them first.
        release(exc)
        exception = safe_exception_info(exc, own=protocol.own_code)
        said = _refusal(protocol, exc)
        observation = Observation(
            status="raised",
            exception=dataclasses.replace(exception, refusal=said) if said else exception,
            mutation=first_difference(before, jsonable(input)[0]),
            handler_called=protocol.handler_called,
            duration=duration,
        )
        return _with_side_effects(observation, watch.changes(), workdir)
    duration = time.perf_counter() - started
    try:
        result = protocol.facts(value, size_limit=state.size_limit)
    except BaseException as exc:
        # Reading the returned object raised what ordinary error handling lets through
        # (KeyboardInterrupt, SystemExit): for the caller that is what the call raised.
        release(exc)
        note = f"raised while reading the {type_name(value)} the call returned"
        observation = Observation(
            status="raised",
            exception=safe_exception_info(exc, note=note, own=protocol.own_code),
            mutation=first_difference(before, jsonable(input)[0]),
            handler_called=protocol.handler_called,
            duration=duration,
        )
        return _with_side_effects(observation, watch.changes(), workdir)
    observation = Observation(
        status="returned",
        result=result,
        mutation=first_difference(before, jsonable(input)[0]),
        handler_called=protocol.handler_called,
        duration=duration,
    )
    effects = watch.changes() + protocol.side_effects(value)
    return _with_side_effects(observation, effects, workdir)


def _renew_loop(state: ToolState[ToolProtocol]) -> None:
    """Give the calls an event loop again when a tool closed the one they ran on.

    A loop a tool left running in a thread of its own is kept: the calls then fail as they
    would in the agent whose loop the tool took over.
    """
    if state.loop.is_closed():
        state.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(state.loop)


def _with_side_effects(
    observation: Observation, effects: tuple[SideEffect, ...], workdir: Snapshot | None = None
) -> Observation:
    """The observation carrying ``effects`` as its ``side_effects``, and whether (and which
    files) the call changed of the working directory it found as ``workdir``."""
    changes = workdir.changes(snapshot(workdir.root, workdir)) if workdir is not None else ()
    if effects or changes:
        return dataclasses.replace(
            observation,
            side_effects=effects,
            world_changed=bool(changes),
            changed_files=tuple(change.path for change in changes),
        )
    return observation
