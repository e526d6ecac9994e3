"""Certification without pytest: :func:`check_tool`, and :func:`load_tool` to reproduce a call."""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from axm_conformance._forkserver import ForkServer
from axm_conformance._observation import SubjectInfo
from axm_conformance._refs import LoadError, load
from axm_conformance._report import Report
from axm_conformance._settings import Settings, SettingsError, run_seed
from axm_conformance._worker import Outcome, Worker, WorkerConfig, fork_server

__all__ = [
    "LoadError",
    "WorkersAhead",
    "check_tool",
    "inspect_tools",
    "item_keys",
    "load_tool",
    "ref_for",
    "tool_worker",
]

# Loading imports the tool's package, which can be slow; it still must not hang a run.
_LOAD_TIMEOUT = 120.0
# What a tool's worker runs at start.
_OPEN_TOOL = "axm_conformance._agent:open_tool"
# What a fork server imports for its workers: the kit's worker side and its reference runtime
# (pydantic with it), which tools written against the seeds import.
_PRELOAD = (
    "axm_conformance._agent",
    "axm_runtime.amplifier",
    "axm_runtime.axio",
    "axm_runtime.axm",
    "axm_runtime.tool_use",
)
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")


def load_tool(ref: str, protocol: str = "auto") -> Any:
    """The one tool ``ref`` names, as the kit calls it, loaded in this process.

    A bare ``async def`` handler comes back wrapped in an axio ``Tool``, a ``@tool``-decorated
    function as its ``ToolEntry``: the object on which the reproduction snippets make their call.
    """
    from axm_conformance._subjects import adapter_for

    loaded = load(ref)
    if len(loaded) != 1:
        raise LoadError(
            f"{ref!r} names {len(loaded)} tools; name one, e.g. {loaded[0][0]!r}"
            if loaded
            else f"{ref!r} names no tool"
        )
    sub_ref, obj, hint = loaded[0]
    return adapter_for(obj, sub_ref, hint if protocol == "auto" else protocol).obj


def ref_for(tool: Any) -> str:
    """A ``module:attribute`` reference under which ``tool`` can be loaded again.

    Tools run in a worker process, which loads them by reference; an object is found by identity
    among the module-level names of its defining module.
    """
    for module_name in {getattr(tool, "__module__", None), type(tool).__module__}:
        module = sys.modules.get(module_name or "")
        if module is None or module_name == "__main__":
            continue
        for name, value in vars(module).items():
            if value is tool:
                return f"{module_name}:{name}"
    raise LoadError(
        f"cannot find a module-level name for {tool!r}: the kit runs tools in a separate "
        "process, which loads them by reference; pass 'module:attribute' instead"
    )


def inspect_tools(
    refs: Sequence[str], settings: Settings, workers: WorkersAhead | None = None
) -> list[SubjectInfo]:
    """Load the references in a worker and describe each tool they name.

    When they name exactly one tool and ``workers`` is given, the worker, which has the tool
    loaded, is kept there to certify it. Raises :class:`LoadError` with a one-line message for
    a reference that cannot be loaded.
    """
    config = _worker_config(
        settings,
        "axm_conformance._agent:open_tools",
        list(refs),
        setup_timeout=_LOAD_TIMEOUT,
    )
    try:
        worker = Worker(config).start()
    except ValueError as exc:  # an unknown user, or one this process cannot switch to
        raise SettingsError("worker_user", str(exc)) from None
    # Certification needs the engine next, and Hypothesis with it: imported while the worker
    # starts and loads the tools, on another core.
    import axm_conformance._engine  # noqa: F401

    try:
        outcome = worker.call("axm_conformance._agent:describe_all", timeout=_LOAD_TIMEOUT)
    except PermissionError as exc:
        worker.close()
        raise SettingsError(
            "worker_user",
            f"user {settings.worker_user!r} cannot run this Python ({sys.executable}): "
            f"{exc.strerror}; run the kit from an interpreter and environment that user "
            "can read (e.g. a virtual environment outside /root)",
        ) from None
    if not outcome.ok:
        worker.close()
        raise LoadError(_load_failure(refs, outcome))
    subjects: list[SubjectInfo] = outcome.value
    if workers is not None and len(subjects) == 1:
        workers.adopt(subjects[0], worker)
    else:
        worker.close()
    return subjects


def _load_failure(refs: Sequence[str], outcome: Outcome) -> str:
    if outcome.error is not None:
        if outcome.error.type_name.rpartition(".")[2] == "LoadError":
            return outcome.error.message
        return (
            f"loading {', '.join(refs)} raised {outcome.error.type_name}: {outcome.error.message}"
        )
    assert outcome.crash is not None
    return f"loading {', '.join(refs)} crashed the worker: {outcome.crash.detail}"


def tool_worker(
    subject: SubjectInfo, settings: Settings, forks: ForkServer | None = None
) -> Worker:
    """The worker a tool is called in, started now (forked from ``forks`` when given): ready by
    the time the engine calls it."""
    return Worker(_worker_config(settings, _OPEN_TOOL, subject.ref, forks=forks)).start()


def _worker_config(
    settings: Settings,
    setup: str,
    refs: str | list[str],
    setup_timeout: float | None = None,
    forks: ForkServer | None = None,
) -> WorkerConfig:
    """A worker as the settings ask for, whose setup loads the tools ``refs`` names."""
    return WorkerConfig(
        timeout=settings.timeout,
        sys_path=settings.sys_path,
        memory_limit=settings.memory_limit,
        user=settings.worker_user,
        files=settings.worker_files,
        setup=setup,
        setup_args=(refs, settings.protocol, settings.max_result_bytes),
        setup_timeout=setup_timeout,
        teardown="axm_conformance._agent:close_tool",
        fork_server=forks,
    )


def item_keys(subjects: Iterable[SubjectInfo]) -> list[str]:
    """A short, unique, readable key per tool: its name when plain, else its reference."""
    keys: list[str] = []
    for subject in subjects:
        plain = subject.name_type == "str" and _PLAIN_KEY.match(subject.name)
        key = subject.name if plain else subject.ref
        candidate, count = key, 1
        while candidate in keys:
            count += 1
            candidate = f"{key}#{count}"
        keys.append(candidate)
    return keys


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
    many = tool_or_ref if isinstance(tool_or_ref, list | tuple) else [tool_or_ref]
    refs = [item if isinstance(item, str) else ref_for(item) for item in many]
    workers = WorkersAhead(options)
    try:
        subjects = inspect_tools(refs, options, workers)
        from axm_conformance._checks import CHECKS
        from axm_conformance._engine import certify

        seed = run_seed(options.seed)
        options = replace(options, seed=seed)

        if any(CHECKS[check_id].per_call for check_id in options.checks or CHECKS):
            workers.plan(subjects)
        reports = tuple(
            certify(subject, key, options, seed, subjects, workers=workers)
            for subject, key in zip(subjects, item_keys(subjects), strict=True)
        )
    finally:
        workers.close()
    return Report(tools=reports, settings=options, seed=seed)


class WorkersAhead:
    """The tools' workers, each started before it is needed.

    A worker takes a good part of a second to start (the interpreter, the imports, loading the
    tool). The worker that inspected a sole tool is kept to certify it (:func:`inspect_tools`).
    Given the order in which tools will be certified, the first tool's worker starts at once
    and each next one when the worker before it is taken, so that starting it overlaps with
    certifying the tool before. When more than one tool is certified, workers after the first
    are forked from a fork server, which has done a worker's imports once for all of them.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.following: dict[str, SubjectInfo] = {}  # by ref: the tool certified next
        self.started: dict[str, Worker] = {}
        self.forks: ForkServer | None = None

    def adopt(self, subject: SubjectInfo, worker: Worker) -> None:
        """Keep a running worker that has the tool loaded, to certify it."""
        self.started[subject.ref] = worker

    def plan(self, order: Sequence[SubjectInfo]) -> None:
        """The order in which the tools will be certified; the first one's worker starts.

        A tool this run refuses to call (:meth:`Settings.refusal`) gets no worker.
        """
        order = [subject for subject in order if self.settings.refusal(subject.effects) is None]
        self.following = {before.ref: after for before, after in itertools.pairwise(order)}
        if order:
            self._start(order[0])
        self.expect(len(order))

    def expect(self, tools: int) -> None:
        """How many tools will be certified here: for more than one, a fork server starts."""
        if tools > 1 and self.forks is None:
            self.forks = fork_server(*_PRELOAD).start()

    def take(self, subject: SubjectInfo) -> Worker:
        """The tool's worker (started ahead, or now); the next tool's worker starts."""
        worker = self.started.pop(subject.ref, None) or tool_worker(
            subject, self.settings, self.forks
        )
        following = self.following.get(subject.ref)
        if following is not None:
            self._start(following)
        return worker

    def close(self) -> None:
        """Stop the workers started for tools that were not certified after all."""
        for worker in self.started.values():
            worker.close()
        self.started.clear()
        if self.forks is not None:
            self.forks.close()
            self.forks = None

    def _start(self, subject: SubjectInfo) -> None:
        if subject.ref not in self.started:
            self.started[subject.ref] = tool_worker(subject, self.settings, self.forks)
