"""Certification without pytest: :func:`check_tool`, and :func:`load_tool` to reproduce a call."""

from __future__ import annotations

import base64
import os
import pickle
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from axm_conformance._checks import CHECKS, load_check_plugins
from axm_conformance._observation import SubjectInfo
from axm_conformance._process.parent._pool import WorkersAhead, inspect_tools
from axm_conformance._process.system import _sandbox
from axm_conformance._refs import PICKLE_PREFIX, LoadError, load
from axm_conformance._report import Report
from axm_conformance._settings import Settings, SettingsError, run_seed
from axm_conformance.protocols import profiles, protocol_for

__all__ = [
    "LoadError",
    "check_installed",
    "check_tool",
    "import_engine",
    "item_keys",
    "load_tool",
    "ref_for",
]

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
# The key of a tool server as a whole: its checks are the items SERVER::CHECK.
SERVER_KEY = "SERVER"


def load_tool(ref: str, protocol: str = "auto") -> Any:
    """The one tool ``ref`` names, as the kit calls it, loaded in this process.

    A bare ``async def`` handler comes back wrapped in an axio ``Tool``, a ``@tool``-decorated
    function as its ``ToolEntry``: the object on which the reproduction snippets make their call.
    """
    loaded = load(ref, protocol=protocol)
    if len(loaded) != 1:
        raise LoadError(
            f"{ref!r} names {len(loaded)} tools; name one, e.g. {loaded[0][0]!r}"
            if loaded
            else f"{ref!r} names no tool"
        )
    sub_ref, obj, hint = loaded[0]
    return protocol_for(obj, sub_ref, hint if protocol == "auto" else protocol).obj


def ref_for(tool: Any) -> str:
    """A reference under which ``tool`` can be loaded again in a worker process.

    An object found by identity among the module-level names of its defining module is named
    ``module:attribute``; any other (an instance made on the spot, say) travels pickled, as a
    ``pickle:`` reference. What a worker cannot import (anything defined in ``__main__``) or
    receive (an object pickle refuses) is a :class:`LoadError` that says so.
    """
    for module_name in {getattr(tool, "__module__", None), type(tool).__module__}:
        module = sys.modules.get(module_name or "")
        if module is None or module_name == "__main__":
            continue
        for name, value in vars(module).items():
            if value is tool:
                return f"{module_name}:{name}"
    if "__main__" in (getattr(tool, "__module__", None), type(tool).__module__):
        raise LoadError(
            f"{_shown(tool)} is defined in __main__ (a script or a notebook), which the kit's "
            "worker process cannot import: define it in a module and pass 'module:attribute'"
        )
    try:
        return PICKLE_PREFIX + base64.b64encode(pickle.dumps(tool)).decode("ascii")
    except Exception as exc:
        raise LoadError(
            f"{_shown(tool)} cannot be sent to the kit's worker process: it has no module-level "
            f"name, and pickling it raised {type(exc).__name__}: {exc}; define it at module "
            "level and pass 'module:attribute'"
        ) from None


def _named(message: str, refs: list[str], tools: Sequence[Any]) -> str:
    """``message`` with each pickle: reference in it shown as the object it carries."""
    for ref, tool in zip(refs, tools, strict=True):
        if ref.startswith(PICKLE_PREFIX):
            quoted = re.escape(f"'{ref}") + r"(\[[^']*\])?'"
            message = re.sub(quoted, _shown(tool).replace("\\", "\\\\") + r"\1", message)
    return message


def _shown(tool: Any) -> str:
    text = repr(tool)
    return text if len(text) <= 80 else f"a {type(tool).__name__} object"


def item_keys(subjects: Iterable[SubjectInfo]) -> list[str]:
    """A short, unique, readable key per tool: its name when plain, else its reference; a
    server as a whole is SERVER (SERVER#2 for a second one)."""
    keys: list[str] = []
    for subject in subjects:
        plain = subject.name_type == "str" and _PLAIN_KEY.match(subject.name)
        key = SERVER_KEY if subject.kind == "server" else subject.name if plain else subject.ref
        candidate, count = key, 1
        while candidate in keys:
            count += 1
            candidate = f"{key}#{count}"
        keys.append(candidate)
    return keys


def import_engine() -> None:
    """Import the engine, and Hypothesis with it: what certification needs next, imported
    while the tools' worker starts."""
    import axm_conformance._engine  # noqa: F401


def check_installed(settings: Settings) -> None:
    """Raise :class:`SettingsError` where the settings name what is not installed: a protocol,
    a check (the check plugins loaded first), a server's token the environment does not hold,
    or a sandbox where one is required. Done once by
    whoever starts a run: :func:`check_tool` and the pytest plugin."""
    choices = ("auto", *profiles())
    if settings.protocol not in choices:
        raise SettingsError(
            "protocol",
            f"protocol must be one of {', '.join(choices)}, not {settings.protocol!r}",
        )
    load_check_plugins()
    unknown = [check for check in settings.checks if check not in CHECKS]
    if unknown:
        raise SettingsError(
            "checks",
            f"unknown check id {', '.join(map(repr, unknown))}; known: {', '.join(CHECKS)}",
        )
    token = settings.server_token_env
    if settings.auth == "local" and token is not None:
        raise SettingsError(
            "auth",
            "auth='local' gives the server tokens of the kit's own authorization server: "
            "leave out server_token_env, or auth",
        )
    if token is not None and not os.environ.get(token):
        raise SettingsError(
            "server_token_env",
            f"server_token_env names {token}, which this environment does not set: export "
            f"the server's bearer token as {token}",
        )
    if settings.sandbox == "required" and _sandbox.support():
        raise SettingsError(
            "sandbox", f"a sandbox is required, and none can be built: {_sandbox.support()}"
        )


def check_tool(tool_or_ref: Any, **settings: Any) -> Report:
    """Certify a tool (or every tool a reference names) and return the outcomes.

    ``tool_or_ref`` is a reference (``"module:attr"``, ``"entry-point:GROUP[:NAME]"``), a tool
    object defined at module level, or a list of these certified together (names must then be
    unique among them). ``settings`` are the fields of :class:`Settings`. A defect of
    the tool is an outcome in the report, never an exception; a bad reference raises
    :class:`LoadError` and a bad setting :class:`SettingsError`.
    """
    try:
        options = Settings(**{"sys_path": tuple(sys.path), **settings})
    except TypeError as exc:
        raise SettingsError("settings", str(exc)) from None
    check_installed(options)
    many = tool_or_ref if isinstance(tool_or_ref, list | tuple) else [tool_or_ref]
    refs = [item if isinstance(item, str) else ref_for(item) for item in many]
    workers = WorkersAhead(options)
    try:
        try:
            subjects = inspect_tools(refs, options, workers, meanwhile=import_engine)
        except LoadError as exc:
            raise LoadError(_named(str(exc), refs, many)) from None
        options.check_exemptions([subject.name for subject in subjects])
        from axm_conformance._engine import certify

        seed = run_seed(options.seed)
        options = replace(options, seed=seed)

        if any(CHECKS[check_id].per_call for check_id in options.checks or CHECKS):
            workers.plan(subjects)
        reports = tuple(
            certify(subject, key, options, seed, subjects, callers=workers)
            for subject, key in zip(subjects, item_keys(subjects), strict=True)
        )
    finally:
        workers.close()
    return Report(tools=reports, settings=options, seed=seed)
