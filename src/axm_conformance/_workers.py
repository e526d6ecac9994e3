"""The workers tools run in: the one that loads and describes them, and one per tool certified,
each started before it is needed."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence

from axm_conformance._forkserver import ForkServer
from axm_conformance._observation import SubjectInfo
from axm_conformance._refs import LoadError
from axm_conformance._settings import Settings, SettingsError
from axm_conformance._worker import Outcome, Worker, WorkerConfig, fork_server
from axm_conformance.protocols import LoadOptions, protocol_of_ref

__all__ = ["WorkersAhead", "inspect_tools", "tool_worker"]

# Loading imports the tool's package, which can be slow; it still must not hang a run.
_LOAD_TIMEOUT = 120.0
# A server answers its handshake within --axm-timeout, or this when it is larger: starting an
# interpreter and importing an SDK takes seconds on a busy machine.
_SERVER_START = 10.0
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


def inspect_tools(
    refs: Sequence[str],
    settings: Settings,
    workers: WorkersAhead | None = None,
    meanwhile: Callable[[], object] = lambda: None,
) -> list[SubjectInfo]:
    """Load the references in a worker and describe each tool they name.

    When they name exactly one tool and ``workers`` is given, the worker, which has the tool
    loaded, is kept there to certify it. ``meanwhile`` is called while the worker starts and
    loads the tools, on another core. Raises :class:`LoadError` with a one-line message for a
    reference that cannot be loaded.
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
    meanwhile()
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
    """A worker as the settings ask for, whose setup loads the tools ``refs`` names.

    A worker that starts servers has no address-space limit: a server inherits it, and the
    runtimes of Node, Go and the JVM reserve more address space at start than they ever use.
    """
    serves = any(
        protocol is not None and "in-process" not in protocol.capabilities
        for protocol in map(protocol_of_ref, [refs] if isinstance(refs, str) else refs)
    )
    options = LoadOptions(max(settings.timeout, _SERVER_START), dict(settings.mcp_env))
    return WorkerConfig(
        timeout=settings.timeout,
        sys_path=settings.sys_path,
        memory_limit=None if serves else settings.memory_limit,
        user=settings.worker_user,
        files=settings.worker_files,
        setup=setup,
        setup_args=(refs, settings.protocol, settings.max_result_bytes, options),
        setup_timeout=setup_timeout,
        teardown="axm_conformance._agent:close_tool",
        fork_server=forks,
        stacks=not serves,
    )


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

        A tool this run refuses to call (:meth:`Settings.refusal`) gets no worker, nor does a
        server as a whole (its checks make no call).
        """
        order = [
            subject
            for subject in order
            if subject.kind == "tool" and self.settings.refusal(subject.effects) is None
        ]
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
