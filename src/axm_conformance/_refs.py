"""Tool references: ``module:attr``, ``entry-point:GROUP[:NAME]``, and ``REF[KEY]`` for one item;
``pickle:DATA`` for an object :func:`check_tool` was given that has no module-level name; and the
forms a protocol loads itself, by their prefix (``mcp:COMMAND``).

A reference names one or many tools. Loading it gives ``(ref, object, protocol hint)`` triples in
which every ``ref`` names exactly one tool, so that a worker process can load that tool alone and
a failure report can say how to load it again. Loading imports the tool's code, so it only ever
happens in a worker.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import inspect
import pickle
import re
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

from axm_conformance.protocols import (
    ENTRY_POINT_PREFIX,
    Cleanups,
    Loaded,
    LoadError,
    LoadOptions,
    Runner,
    cause,
    entry_point_groups,
    protocol_named,
    protocol_of_ref,
    tool_from,
)

__all__ = ["PICKLE_PREFIX", "LoadError", "clean_up", "import_attribute", "load"]

PICKLE_PREFIX = "pickle:"
_ITEM = re.compile(r"^(?P<base>.*)\[(?P<key>[^\[\]]*)\]$")


def load(
    ref: str,
    run: Runner = asyncio.run,
    cleanups: Cleanups | None = None,
    options: LoadOptions | None = None,
    protocol: str = "auto",
) -> Loaded:
    """Load every tool ``ref`` names. Raises :class:`LoadError` with a one-line message.

    ``protocol`` is the one the run names (``--axm-protocol``), which may make a tool of an
    object no other protocol would (Pydantic AI of a plain function); "auto": none is named.

    ``run`` runs a coroutine to completion (an Amplifier module's ``mount``): the worker passes
    the event loop the tool will be called on, since tools may bind resources to it. What
    loading leaves to be done (an Amplifier module's cleanups, a server to stop) is added to
    ``cleanups`` (see :func:`clean_up`). ``options`` are for the references a protocol loads
    itself.
    """
    item = _ITEM.match(ref)
    if item:
        loaded = load(item["base"], run, cleanups, options, protocol)
        key = item["key"]
        for sub_ref, obj, hint in loaded:
            if sub_ref == ref:
                return [(sub_ref, obj, hint)]
        keys = [sub_ref[len(item["base"]) :] for sub_ref, _, _ in loaded if sub_ref != item["base"]]
        has = f"its tools are {', '.join(keys)}" if keys else _unlisted(item["base"], loaded)
        raise LoadError(f"{ref!r}: {item['base']!r} has no tool {key!r} ({has})")
    own = protocol_of_ref(ref)
    if own is not None:
        return own.load_ref(ref, options or LoadOptions(), cleanups)
    if ref.startswith(ENTRY_POINT_PREFIX):
        return _load_entry_points(ref, run, cleanups)
    if ref.startswith(PICKLE_PREFIX):
        return _load_pickled(ref)
    return _load_attribute(ref, protocol)


def _unlisted(base: str, loaded: Loaded) -> str:
    """Why ``base``, which gave no tool of its own, gave none: what its protocol says (a server
    that could not be asked), or that it has none."""
    own = protocol_of_ref(base)
    told = [own.unlisted(obj) for _, obj, _ in loaded] if own is not None else []
    return next((why for why in told if why), "it names no tool of its own")


def clean_up(cleanups: Cleanups, run: Runner) -> None:
    """Call the cleanups loading left, the last first, each in the event loop ``run`` runs.

    No check judges a cleanup: one that raises is passed over, and the others still run.
    """
    while cleanups:
        with contextlib.suppress(Exception):
            run(_called(cleanups.pop()))


async def _called(cleanup: Callable[[], Any]) -> None:
    # Called inside the loop: amplifier-core's coordinator needs a running loop to clean up.
    outcome = cleanup()
    if inspect.isawaitable(outcome):
        await outcome


def _load_attribute(ref: str, protocol: str) -> Loaded:
    usage = (
        "a tool reference: use module:attribute (e.g. mypkg.tools:WordCountTool), "
        "entry-point:GROUP[:NAME], mcp:COMMAND or mcp-http:COMMAND"
    )
    return _expand(ref, import_attribute(ref, usage), protocol)


def import_attribute(ref: str, usage: str) -> Any:
    """The object a ``module:attribute`` reference names (``module:Class.method`` too). Raises
    :class:`LoadError` with a one-line message; ``usage`` says what ``ref`` should have been."""
    module_name, colon, attribute = ref.partition(":")
    if not colon or not module_name or not attribute:
        raise LoadError(f"{ref!r} is not {usage}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise LoadError(f"{ref!r}: no module named {exc.name!r}") from None
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {cause(exc)}") from None
    except BaseException as exc:
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {cause(exc)}") from None
    obj: Any = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LoadError(f"{ref!r}: {module_name!r} has no attribute {attribute!r}") from None
    return obj


def _load_pickled(ref: str) -> Loaded:
    """The object a ``pickle:`` reference carries: one the same user's kit sent its worker."""
    try:
        obj = pickle.loads(base64.b64decode(ref[len(PICKLE_PREFIX) :], validate=True))
    except Exception as exc:
        raise LoadError(f"a pickle: reference that does not load: {cause(exc)}") from None
    return _expand(ref, obj, "auto")


def _expand(ref: str, obj: Any, hint: str) -> Loaded:
    """One triple per tool in ``obj``: containers are opened, classes and handlers made tools."""
    if isinstance(obj, list | tuple):
        return [
            triple for i, item in enumerate(obj) for triple in _expand(f"{ref}[{i}]", item, hint)
        ]
    if isinstance(obj, Mapping):
        return [
            triple for key, item in obj.items() for triple in _expand(f"{ref}[{key}]", item, hint)
        ]
    tool = _instantiate(ref, obj, hint)
    if isinstance(tool, list):  # a protocol's collection of tools (a toolkit's)
        return _expand(ref, tool, hint)
    return [(ref, tool, hint)]


def _instantiate(ref: str, obj: Any, hint: str) -> Any:
    if isinstance(obj, type):
        try:
            obj = obj()
        except BaseException as exc:
            raise LoadError(
                f"{ref!r}: instantiating {obj.__name__} with no arguments raised {cause(exc)}"
            ) from None
    return tool_from(ref, obj, hint)


def _load_entry_points(ref: str, run: Runner, cleanups: Cleanups | None) -> Loaded:
    group, _, name = ref[len(ENTRY_POINT_PREFIX) :].partition(":")
    groups = entry_point_groups()
    if group not in groups:
        raise LoadError(
            f"{ref!r}: unknown entry-point group {group!r}; use one of " + ", ".join(groups)
        )
    entry_points = [ep for ep in metadata.entry_points(group=group) if not name or ep.name == name]
    if not entry_points:
        what = f"no entry point named {name!r} in" if name else "no entry points in"
        raise LoadError(f"{ref!r}: {what} group {group!r} (is the distribution installed?)")
    protocol = protocol_named(groups[group])
    loaded: Loaded = []
    for entry_point in sorted(entry_points, key=lambda ep: ep.name):
        entry_ref = f"{ENTRY_POINT_PREFIX}{group}:{entry_point.name}"
        try:
            obj = entry_point.load()
        except BaseException as exc:
            raise LoadError(
                f"{entry_ref!r}: loading {entry_point.value!r} raised {cause(exc)}"
            ) from None
        loaded.extend(
            (sub_ref, _instantiate(sub_ref, tool, protocol.name), protocol.name)
            for sub_ref, tool, _ in protocol.published(entry_ref, obj, run, cleanups)
        )
    return loaded
