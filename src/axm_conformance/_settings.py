"""Settings of a certification run, shared by the pytest plugin and :func:`check_tool`."""

from __future__ import annotations

import hashlib
import math
import os
import random
import re
from dataclasses import dataclass, fields
from typing import Any

from axm_conformance._options import is_header
from axm_conformance._process.system import _sandbox
from axm_conformance.errors import AxmConformanceError

__all__ = [
    "DEFAULT_NAME_PATTERN",
    "Settings",
    "SettingsError",
    "derived_seed",
    "new_seed",
    "parse_exemptions",
    "run_seed",
]

DEFAULT_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# How a server the kit starts over HTTP is authorized: not at all, or as a protected resource of
# an authorization server the kit runs on loopback (see protocols/mcp/_authority).
AUTH_MODES = ("off", "local")


class SettingsError(AxmConformanceError, ValueError):
    """A setting with a value it cannot take; ``setting`` names it, and so does the message."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class Settings:
    """How a certification runs: a plain record of what was asked, checked as written (what
    it names among what is installed, and what the machine makes of it, are
    :mod:`axm_conformance._process._containment`'s).

    ``examples`` generated inputs per tool (boundary examples come on top), ``timeout`` seconds per
    call, ``seed`` for Hypothesis (None: a random one, reported), ``protocol`` to force one,
    ``checks`` to run only those ids (all when empty), ``name_pattern`` that tool names must
    match, ``max_result_bytes`` for one serialised result, ``memory_limit`` in bytes for the
    worker (None: unlimited), ``nondeterministic`` (tool name, reason) pairs exempt from the
    determinism check, ``strict`` to turn every warning into a failure,
    ``tool_budget`` seconds one tool may take over all its checks, ``worker_user`` the
    (unprivileged) account tool code runs as, ``worker_files`` a directory whose contents are
    copied into the worker's working directory before it starts, ``allow_root`` to call tools
    that declare write or execute access as root, ``sys_path`` entries the worker imports tools
    from, ``server_env`` (name, value) pairs the environment of a tool server (MCP's) gets,
    ``server_headers`` (name, value) pairs every HTTP request to a server carries,
    ``server_token_env`` the environment variable holding a bearer token those requests carry
    (read where the run starts, never written anywhere), ``http_path`` the path of the MCP
    endpoint of a server the kit starts over HTTP, ``auth`` whether such a server is a
    protected resource of an authorization server the kit runs for it ("local") or not ("off"),
    ``pace`` the seconds to leave at least between two calls of a tool (0: none), ``sandbox``
    whether workers run in a sandbox ("auto": where one can be built, "required", "off"),
    ``network`` the names of the tools that reach the network in it besides those that declare
    they need one ("*": every tool), ``long_lived`` (tool name, reason) pairs exempt from the
    check that a call leaves no process running, ``clients`` the client profiles (``openai``,
    ``openai-strict``, ... see conformance/clients.md) whose findings fail a tool.
    """

    examples: int = 100
    timeout: float = 5.0
    seed: int | None = None
    protocol: str = "auto"
    checks: tuple[str, ...] = ()
    name_pattern: str = DEFAULT_NAME_PATTERN
    max_result_bytes: int = 1024 * 1024
    memory_limit: int | None = 2 * 1024**3
    nondeterministic: tuple[tuple[str, str], ...] = ()
    strict: bool = False
    tool_budget: float = 600.0
    worker_user: str | None = None
    worker_files: str | None = None
    allow_root: bool = False
    sys_path: tuple[str, ...] = ()
    server_env: tuple[tuple[str, str], ...] = ()
    server_headers: tuple[tuple[str, str], ...] = ()
    server_token_env: str | None = None
    http_path: str = "/mcp"  # the SDKs' default
    auth: str = "off"
    pace: float = 0.0
    sandbox: str = "auto"
    network: tuple[str, ...] = ()
    long_lived: tuple[tuple[str, str], ...] = ()
    clients: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self._absolute_paths()
        self._check_numbers()
        self._check_entries()

    def _absolute_paths(self) -> None:
        # The worker runs elsewhere (its own working directory): relative entries, and the ""
        # that means "the current directory", must name the directory they mean here.
        absolute = tuple(os.path.abspath(entry or os.curdir) for entry in self.sys_path)
        object.__setattr__(self, "sys_path", absolute)
        if self.worker_files is not None:
            files = os.path.abspath(self.worker_files)
            if not os.path.isdir(files):
                raise SettingsError("worker_files", f"worker_files {files!r} is not a directory")
            object.__setattr__(self, "worker_files", files)

    def _check_numbers(self) -> None:
        _whole(self.examples, "examples", minimum=1)
        if (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, int | float)
            or not (self.timeout > 0)
        ):
            raise SettingsError(
                "timeout", f"timeout must be a positive number of seconds, not {self.timeout!r}"
            )
        if (
            isinstance(self.tool_budget, bool)
            or not isinstance(self.tool_budget, int | float)
            or not (self.tool_budget > 0)
        ):
            raise SettingsError(
                "tool_budget",
                f"tool_budget must be a positive number of seconds, not {self.tool_budget!r}",
            )
        if (
            isinstance(self.pace, bool)
            or not isinstance(self.pace, int | float)
            or not (0 <= self.pace < math.inf)
        ):
            raise SettingsError(
                "pace", f"pace must be a number of seconds, 0 or more, not {self.pace!r}"
            )
        if self.seed is not None:
            _whole(self.seed, "seed", minimum=0)
        _whole(self.max_result_bytes, "max_result_bytes", minimum=1)
        if self.memory_limit is not None:
            _whole(self.memory_limit, "memory_limit", minimum=1)

    def _check_entries(self) -> None:
        """The pattern, the exemptions, the environment given to servers, the tools given the
        network and the sandbox mode, as written."""
        try:
            re.compile(self.name_pattern)
        except (re.error, TypeError) as exc:
            raise SettingsError(
                "name_pattern", f"name_pattern {self.name_pattern!r} is not a regex: {exc}"
            ) from None
        for exemptions in _EXEMPTIONS:
            for entry in getattr(self, exemptions):
                if not (len(entry) == 2 and all(isinstance(part, str) and part for part in entry)):
                    raise SettingsError(
                        exemptions,
                        f"{exemptions} entries are (tool name, reason) pairs, not {entry!r}",
                    )
        for entry in self.server_env:
            if not (
                len(entry) == 2
                and all(isinstance(part, str) for part in entry)
                and entry[0].isidentifier()
            ):
                raise SettingsError(
                    "server_env", f"server_env entries are (name, value) pairs, not {entry!r}"
                )
        for entry in self.server_headers:
            if not (len(entry) == 2 and all(isinstance(part, str) for part in entry)) or (
                not is_header(*entry)
            ):
                raise SettingsError(
                    "server_headers",
                    f"server_headers entries are (HTTP header name, value) pairs, not {entry!r}",
                )
        token = self.server_token_env
        if token is not None and not (isinstance(token, str) and token.isidentifier()):
            raise SettingsError(
                "server_token_env",
                f"server_token_env names an environment variable, not {token!r}",
            )
        if self.auth not in AUTH_MODES:
            raise SettingsError(
                "auth", f"auth is one of {', '.join(AUTH_MODES)}, not {self.auth!r}"
            )
        path = self.http_path
        if not (isinstance(path, str) and path.startswith("/") and is_header("Path", path)):
            raise SettingsError(
                "http_path", f"http_path is a path that starts with '/', not {path!r}"
            )
        if not all(isinstance(name, str) and name for name in self.network):
            raise SettingsError(
                "network", f"network names tools, or '*' for all, not {self.network!r}"
            )
        from axm_conformance._clients import PROFILES

        unknown_clients = [name for name in self.clients if name not in PROFILES]
        if unknown_clients:
            raise SettingsError(
                "clients",
                f"unknown client {', '.join(map(repr, unknown_clients))}; known: "
                f"{', '.join(PROFILES)}",
            )
        if self.sandbox not in _sandbox.MODES:
            raise SettingsError(
                "sandbox",
                f"sandbox must be one of {', '.join(_sandbox.MODES)}, not {self.sandbox!r}",
            )

    def exemption(self, opt_out: str, name: Any) -> str | None:
        """The configured reason a tool of this name is exempt from a check, if it is."""
        return dict(getattr(self, opt_out)).get(name) if opt_out else None

    def check_exemptions(self, names: list[Any]) -> None:
        """Raise :class:`SettingsError` for an exemption, or a tool given the network, that
        names none of the tools under test: a misspelt name would otherwise do nothing,
        silently."""
        named = [
            (exemptions, name)
            for exemptions in _EXEMPTIONS
            for name, _ in getattr(self, exemptions)
        ]
        named += [("network", name) for name in self.network if name != "*"]
        for setting, name in named:
            if name not in names:
                known = ", ".join(sorted(str(other) for other in names)) or "none"
                what = "the exemption" if setting in _EXEMPTIONS else "it"
                raise SettingsError(
                    setting,
                    f"{name!r} names no tool under test (tools: {known}); fix the name or "
                    f"remove {what}",
                )

    def reaches_network(self, name: Any, declared: bool) -> bool:
        """Whether the tool of this name gets the network in its sandbox: it declares it
        needs one (``declared``), or the run gives it one."""
        return declared or "*" in self.network or name in self.network

    def non_defaults(self) -> dict[str, Any]:
        """The settings that differ from the defaults, for reproduction commands."""
        return {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if getattr(self, field.name) != field.default and field.name != "sys_path"
        }


def _whole(value: Any, name: str, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingsError(
            name, f"{name} must be a whole number of at least {minimum}, not {value!r}"
        )


def new_seed() -> int:
    """A fresh seed for a run that was not given one."""
    return random.SystemRandom().getrandbits(32)


def run_seed(given: int | None, profile: str | None = None) -> int | None:
    """The seed a run uses: the one given, else a fresh one, else None when the Hypothesis
    profile (``profile``, else the one loaded) derandomizes, as its ``ci`` profile does when
    ``CI`` is set: each tool's seed is then derived from the tool (see derived_seed).
    Raises ``hypothesis.errors.InvalidArgument`` for an unknown profile."""
    if given is not None:
        return given
    import hypothesis  # a settings object, not the engine: reading a profile costs nothing

    chosen = hypothesis.settings.get_profile(profile) if profile else hypothesis.settings()
    return None if chosen.derandomize else new_seed()


def derived_seed(*parts: str) -> int:
    """A seed that depends on ``parts`` alone (a tool's key and its input schema, say): a
    derandomized run gives unchanged tools the same inputs every time."""
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return int.from_bytes(digest[:4], "big")


# The settings that exempt tools, by name and with a reason, from one check each.
_EXEMPTIONS = ("nondeterministic", "long_lived")


def parse_exemptions(
    lines: list[str], setting: str = "nondeterministic"
) -> tuple[tuple[str, str], ...]:
    """Read ``NAME: reason`` lines (the ``axm_nondeterministic`` or ``axm_long_lived`` ini
    setting, named by ``setting``) into pairs."""
    pairs = []
    for line in lines:
        name, colon, reason = line.partition(":")
        if not colon or not name.strip() or not reason.strip():
            raise SettingsError(setting, f"{line!r} is not 'TOOL NAME: reason' (both are needed)")
        pairs.append((name.strip(), reason.strip()))
    return tuple(pairs)
