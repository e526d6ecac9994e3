"""Tool references: ``module:attr``, ``entry-point:GROUP[:NAME]``, and ``REF[KEY]`` for one item.

A reference names one or many tools. Loading it gives ``(ref, object, protocol hint)`` triples in
which every ``ref`` names exactly one tool, so that a worker process can load that tool alone and
a failure report can say how to load it again. Loading imports the tool's code, so it only ever
happens in a worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import re
from collections.abc import Callable, Coroutine, Mapping
from importlib import metadata
from typing import Any

__all__ = ["ENTRY_POINT_GROUPS", "LoadError", "clean_up", "load"]

ENTRY_POINT_GROUPS: dict[str, str] = {
    "axm.tools": "axm",
    "axm.tribunal.tools": "axm",
    "axio.tools": "axio",
    "amplifier.modules": "amplifier",
}
ENTRY_POINT_PREFIX = "entry-point:"
_ITEM = re.compile(r"^(?P<base>.*)\[(?P<key>[^\[\]]*)\]$")

Loaded = list[tuple[str, Any, str]]
Runner = Callable[[Coroutine[Any, Any, Any]], Any]
# What loading left to be done when the tools are no longer used: functions, sync or async.
Cleanups = list[Callable[[], Any]]


class LoadError(Exception):
    """A reference that cannot be loaded; the message is one line naming the reference."""


def _cause(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()
    return text[0] if text else type(exc).__name__


def load(ref: str, run: Runner = asyncio.run, cleanups: Cleanups | None = None) -> Loaded:
    """Load every tool ``ref`` names. Raises :class:`LoadError` with a one-line message.

    ``run`` runs a coroutine to completion (an Amplifier module's ``mount``): the worker passes
    the event loop the tool will be called on, since tools may bind resources to it. The
    cleanups of the Amplifier modules mounted are added to ``cleanups`` (see :func:`clean_up`).
    """
    item = _ITEM.match(ref)
    if item:
        loaded = load(item["base"], run, cleanups)
        key = item["key"]
        for sub_ref, obj, hint in loaded:
            if sub_ref == ref:
                return [(sub_ref, obj, hint)]
        raise LoadError(f"{ref!r}: {item['base']!r} has no tool {key!r}")
    if ref.startswith(ENTRY_POINT_PREFIX):
        return _load_entry_points(ref, run, cleanups)
    return _load_attribute(ref)


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


def _load_attribute(ref: str) -> Loaded:
    module_name, colon, attribute = ref.partition(":")
    if not colon or not module_name or not attribute:
        raise LoadError(
            f"{ref!r} is not a tool reference: use module:attribute (e.g. "
            "mypkg.tools:WordCountTool) or entry-point:GROUP[:NAME]"
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise LoadError(f"{ref!r}: no module named {exc.name!r}") from None
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {_cause(exc)}") from None
    except BaseException as exc:
        raise LoadError(f"{ref!r}: importing {module_name!r} raised {_cause(exc)}") from None
    obj: Any = module
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise LoadError(f"{ref!r}: {module_name!r} has no attribute {attribute!r}") from None
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
    return [(ref, _instantiate(ref, obj, hint), hint)]


def _instantiate(ref: str, obj: Any, hint: str) -> Any:
    if isinstance(obj, type):
        try:
            return obj()
        except BaseException as exc:
            raise LoadError(
                f"{ref!r}: instantiating {obj.__name__} with no arguments raised {_cause(exc)}"
            ) from None
    if inspect.iscoroutinefunction(obj) and hint in ("auto", "axio"):
        from axm_runtime.axio import Tool

        # A published handler is named by its entry point, as axio's loader names it.
        name = ref.rpartition(":")[2] if ref.startswith(ENTRY_POINT_PREFIX) else obj.__name__
        return Tool(name=name, handler=obj)
    return obj


def _load_entry_points(ref: str, run: Runner, cleanups: Cleanups | None) -> Loaded:
    group, _, name = ref[len(ENTRY_POINT_PREFIX) :].partition(":")
    if group not in ENTRY_POINT_GROUPS:
        raise LoadError(
            f"{ref!r}: unknown entry-point group {group!r}; use one of "
            + ", ".join(ENTRY_POINT_GROUPS)
        )
    entry_points = [ep for ep in metadata.entry_points(group=group) if not name or ep.name == name]
    if not entry_points:
        what = f"no entry point named {name!r} in" if name else "no entry points in"
        raise LoadError(f"{ref!r}: {what} group {group!r} (is the distribution installed?)")
    hint = ENTRY_POINT_GROUPS[group]
    loaded: Loaded = []
    for entry_point in sorted(entry_points, key=lambda ep: ep.name):
        entry_ref = f"{ENTRY_POINT_PREFIX}{group}:{entry_point.name}"
        try:
            obj = entry_point.load()
        except BaseException as exc:
            raise LoadError(
                f"{entry_ref!r}: loading {entry_point.value!r} raised {_cause(exc)}"
            ) from None
        if group == "amplifier.modules":
            loaded.extend(_mounted_tools(entry_ref, obj, run, cleanups))
        else:
            loaded.append((entry_ref, _instantiate(entry_ref, obj, hint), hint))
    return loaded


def _coordinator() -> Any:
    """amplifier-core's test coordinator when it is installed, else the reference one: a module
    may use any member of the coordinator it was written against, not only ``mount``."""
    try:
        testing = importlib.import_module("amplifier_core.testing")
    except ImportError:
        from axm_runtime.amplifier import Coordinator

        return Coordinator()
    return testing.MockCoordinator()


def _mounted_tools(ref: str, mount: Any, run: Runner, cleanups: Cleanups | None) -> Loaded:
    """Mount an Amplifier module; each tool it mounts, or returns, is a subject.

    What ``mount`` returns is otherwise its cleanup, called with the coordinator's own.
    """
    coordinator = _coordinator()
    try:
        returned = run(mount(coordinator, {}))
    except BaseException as exc:
        raise LoadError(f"{ref!r}: mount(coordinator, {{}}) raised {_cause(exc)}") from None
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
    return [(f"{ref}[{key}]", tool, "amplifier") for key, tool in sorted(tools.items())]
