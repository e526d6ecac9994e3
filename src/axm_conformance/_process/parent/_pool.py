"""The workers tools run in: the one that loads and describes them, and one per tool certified,
each started before it is needed."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import itertools
import os
import shutil
import stat
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from axm_conformance._observation import SubjectInfo
from axm_conformance._process._containment import contained, refusal
from axm_conformance._process._records import Answer
from axm_conformance._process.parent._entries import (
    CLOSE_TOOL,
    DESCRIBE_ALL,
    OPEN_TOOL,
    OPEN_TOOLS,
    PRELOAD,
)
from axm_conformance._process.parent._forkserver import ForkServer
from axm_conformance._process.parent._toolworker import ToolWorker
from axm_conformance._process.parent._worker import WorkerConfig, fork_server
from axm_conformance._process.system import _trace
from axm_conformance._process.system._sandbox import Sandbox
from axm_conformance._refs import LoadError
from axm_conformance._settings import Settings, SettingsError
from axm_conformance.protocols import LoadOptions, profile_of_ref

__all__ = ["WorkersAhead", "inspect_tools", "tool_worker"]

# Loading imports the tool's package, which can be slow; it still must not hang a run.
_LOAD_TIMEOUT = 120.0
# A server answers its handshake within --axm-timeout, or this when it is larger: starting an
# interpreter and importing an SDK takes seconds on a busy machine.
_SERVER_START = 10.0
# A directory is read by listing it and entering it.
_LIST = os.R_OK | os.X_OK
# Symbolic links followed one by one to a file, as Linux does at most.
_MOST_LINKS = 40


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
    # A server may need the network to start (one fetched by npx, say), and no input is sent
    # meanwhile: its sandbox reaches it. Importing Python tools does not, unless the run gives
    # tools the network: their worker, cut off, is the one most tools are certified in.
    serves = any(
        profile is not None and "in-process" not in profile.capabilities
        for profile in map(profile_of_ref, refs)
    )
    online = serves or bool(settings.network)
    config = _worker_config(
        settings, OPEN_TOOLS, list(refs), setup_timeout=_LOAD_TIMEOUT, network=online
    )
    try:
        worker = ToolWorker(config, {}).start()
    except ValueError as exc:  # an unknown user, or one this process cannot switch to
        raise SettingsError("worker_user", str(exc)) from None
    meanwhile()
    try:
        outcome = worker.call(DESCRIBE_ALL, timeout=_LOAD_TIMEOUT)
    except PermissionError as exc:
        worker.close()
        raise SettingsError(
            "worker_user",
            _unreadable_for(settings.worker_user)
            or f"user {settings.worker_user!r} cannot run this Python ({sys.executable}): "
            f"{exc.strerror}; run the kit from an interpreter and environment that user can read",
        ) from None
    if not outcome.ok:
        worker.close()
        # A worker that cannot read what it imports dies at start, saying little of why.
        unreadable = _unreadable_for(settings.worker_user) if outcome.crash else ""
        if unreadable:
            raise SettingsError("worker_user", unreadable)
        raise LoadError(_load_failure(refs, outcome))
    subjects: list[SubjectInfo] = outcome.value
    # Kept only if its sandbox reaches the network exactly when the tool's must.
    if (
        workers is not None
        and len(subjects) == 1
        and (not contained(settings) or _network(subjects[0], settings) is online)
    ):
        workers.adopt(subjects[0], worker)
    else:
        worker.close()
    return subjects


def _unreadable_for(user: str | None) -> str:
    """Why ``user`` cannot start a worker: the first file the worker needs that it cannot read,
    and how to give it one it can; "" when there is none (by the permission bits)."""
    if user is None or sys.platform == "win32":
        return ""
    import pwd

    entry = pwd.getpwnam(user)
    uid, gid = entry.pw_uid, entry.pw_gid
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = f"/usr/bin/python{version}"
    usable = os.path.exists(system) and not _blocked(system, uid, gid, os.X_OK)
    shared = bool(sysconfig.get_config_var("Py_ENABLE_SHARED"))
    example = f" (e.g. {system} -m venv DIR)" if usable else ""
    # A shared build finds its library by an absolute path, which a copy must not keep.
    library = (
        " (and its libpython, with patchelf --set-rpath '$ORIGIN/../lib' on the copy)"
        if shared
        else ""
    )
    python = (
        f"make the virtual environment from a Python {version} that user can read{example}, "
        f"or copy this one and its standard library to a directory that user can read{library}"
    )
    environment = "make the virtual environment in a directory that user can read"
    needs = [("run the interpreter", sys.executable, os.X_OK, python)]
    if shared:
        needs.append(("read the interpreter's library", _libpython(), os.R_OK, python))
    needs.append(("read the standard library", os.path.dirname(os.__file__), _LIST, python))
    if sys.prefix != sys.base_prefix:
        config = os.path.join(sys.prefix, "pyvenv.cfg")
        needs.append(("read the virtual environment's", config, os.R_OK, environment))
    needs.append(("read site-packages", sysconfig.get_path("purelib"), _LIST, environment))
    kit = str(Path(__file__).parent)
    needs.append(("read the kit", kit, _LIST, "install the kit where that user can read it"))
    for what, path, need, advice in needs:
        why = _blocked(path, uid, gid, need)
        if why:
            real = os.path.realpath(path)
            shown = path if real == path else f"{path} (that is, {real})"
            return f"user {user!r} cannot {what} {shown}: {why}; {advice}"
    return ""


def _libpython() -> str:
    """The shared library this interpreter runs on: the one loaded, on Linux (a copy made to
    be portable loads its own, while its build settings still name the original), else where
    the build put it."""
    name = str(sysconfig.get_config_var("INSTSONAME"))
    with contextlib.suppress(OSError), open("/proc/self/maps") as maps:
        for line in maps:
            path = line.rstrip("\n").split(maxsplit=5)[-1]
            if os.path.basename(path) == name:
                return path
    return os.path.join(str(sysconfig.get_config_var("LIBDIR")), name)


def _blocked(path: str, uid: int, gid: int, need: int) -> str:
    """What keeps the user ``uid``, in the one group ``gid`` (as a worker is), from ``path``
    by the permission bits: the first directory on the way it cannot enter, as written or
    through the symlinks, or ``path`` itself when it lacks the access ``need`` (os.R_OK,
    os.X_OK or both); "" when nothing does, or when there is no such file."""
    ways = [os.path.abspath(path)]
    while os.path.islink(ways[-1]) and len(ways) <= _MOST_LINKS:
        ways.append(os.path.join(os.path.dirname(ways[-1]), os.readlink(ways[-1])))
    real = os.path.realpath(path)
    for way in dict.fromkeys([*ways, real]):
        for directory in reversed(Path(way).parents):
            try:
                status = os.stat(directory)
            except OSError:
                return ""
            if not _permits(status, uid, gid, os.X_OK):
                return f"it cannot enter {os.path.realpath(directory)} ({_mode(status)})"
    try:
        status = os.stat(real)
    except OSError:
        return ""
    if not _permits(status, uid, gid, need):
        return f"its mode is {_mode(status)}"
    return ""


def _permits(status: os.stat_result, uid: int, gid: int, need: int) -> bool:
    # Only one class of bits applies: the owner's, else the group's, else the others'.
    if uid == 0:
        return True
    shift = 6 if status.st_uid == uid else 3 if status.st_gid == gid else 0
    return (status.st_mode >> shift) & need == need


def _mode(status: os.stat_result) -> str:
    """A file's mode and owner, as ``ls -l`` shows them."""
    if sys.platform == "win32":  # asked only where a worker user is switched to
        raise NotImplementedError("no owners to name")
    import pwd

    try:
        owner = pwd.getpwuid(status.st_uid).pw_name
    except KeyError:
        owner = str(status.st_uid)
    return f"{stat.filemode(status.st_mode)}, owned by {owner}"


def _load_failure(refs: Sequence[str], outcome: Answer) -> str:
    if outcome.error is not None:
        if outcome.error.type_name.rpartition(".")[2] == "LoadError":
            return outcome.error.message
        return (
            f"loading {', '.join(refs)} raised {outcome.error.type_name}: {outcome.error.message}"
        )
    assert outcome.crash is not None
    return f"loading {', '.join(refs)} crashed the worker: {outcome.crash.detail}"


def tool_worker(
    subject: SubjectInfo,
    settings: Settings,
    forks: ForkServer | None = None,
    together: tuple[str, ...] = (),
) -> ToolWorker:
    """The worker a tool is called in, with the tools ``together`` names loaded beside it,
    started now (forked from ``forks`` when given): ready by the time the engine calls it."""
    config = _worker_config(
        settings, OPEN_TOOL, subject.ref, forks=forks, network=_network(subject, settings)
    )
    if together:
        config = dataclasses.replace(config, setup_args=(*config.setup_args, together))
    return ToolWorker(config, subject.profile.probes).start()


def _network(subject: SubjectInfo, settings: Settings) -> bool:
    """Whether the tool's worker reaches the network (always, outside a sandbox)."""
    return not contained(settings) or settings.reaches_network(subject.name, subject.needs_network)


def _worker_config(
    settings: Settings,
    setup: str,
    refs: str | list[str],
    setup_timeout: float | None = None,
    forks: ForkServer | None = None,
    network: bool = False,
) -> WorkerConfig:
    """A worker as the settings ask for, whose setup loads the tools ``refs`` names; in a
    sandbox that reaches the ``network`` or not, when the run has one.

    A worker that starts servers has no address-space limit: a server inherits it, and the
    runtimes of Node, Go and the JVM reserve more address space at start than they ever use.
    """
    serves = any(
        profile is not None and "in-process" not in profile.capabilities
        for profile in map(profile_of_ref, [refs] if isinstance(refs, str) else refs)
    )
    # A server runs in a sandbox of its own, its worker (the kit's code alone) outside it: what
    # the server does to its sandbox (a kill of -1, say) cannot end the worker that reports it.
    # The server's writes outside are traced there (see _trace).
    sandbox = None
    if contained(settings):
        sandbox = Sandbox(network=network, tracer=_trace.tracer() if serves else "")
    options = LoadOptions(
        max(settings.timeout, _SERVER_START),
        dict(settings.server_env),
        sandbox=sandbox if serves else None,
        memo=_memo() if serves else "",
        headers=server_headers(settings),
        http_path=settings.http_path,
        auth=settings.auth,
    )
    return WorkerConfig(
        timeout=settings.timeout,
        sys_path=settings.sys_path,
        memory_limit=None if serves else settings.memory_limit,
        user=settings.worker_user,
        files=settings.worker_files,
        setup=setup,
        setup_args=(refs, settings.protocol, settings.max_result_bytes, options),
        setup_timeout=setup_timeout,
        teardown=CLOSE_TOOL,
        fork_server=forks,
        stacks=not serves,
        sandbox=None if serves else sandbox,
    )


def server_headers(settings: Settings) -> tuple[tuple[str, str], ...]:
    """What every HTTP request to a server carries: the run's headers, and the bearer token
    from the environment variable it names (read here, in the kit's process, and handed to
    the worker with its setup: never on a command line)."""
    token = os.environ.get(settings.server_token_env or "", "")
    bearer = (("Authorization", f"Bearer {token}"),) if token else ()
    return (*settings.server_headers, *bearer)


@functools.cache
def _memo() -> str:
    """The directory this process's workers share to remember what a server's first start
    taught them (see LoadOptions), removed when the process exits."""
    directory = tempfile.mkdtemp(prefix="axm-conformance-memo-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


class WorkersAhead:
    """The tools' workers, each started before it is needed.

    A worker takes a good part of a second to start (the interpreter, the imports, loading the
    tool). The worker that inspected a sole tool is kept to certify it (:func:`inspect_tools`).
    Given the order in which tools will be certified, the first tool's worker starts at once
    and each next one when the worker before it is taken, so that starting it overlaps with
    certifying the tool before. When more than one tool is certified, workers after the first
    are forked from a fork server, which has done a worker's imports once for all of them (in a
    sandbox, into a sandbox of their own).

    Each tool is judged alone: the call of a tool before may kill the worker started ahead for
    the next one (without a sandbox, kill(-1) reaches every process of the workers' user), or
    the fork server. A
    worker is checked when it is taken, and one whose process has ended is replaced (a fork
    server that died too), so that its tool's first call meets a running worker.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.following: dict[str, SubjectInfo] = {}  # by ref: the tool certified next
        # By ref: the other tools of its home (see SubjectInfo.home), loaded beside it.
        self.together: dict[str, tuple[str, ...]] = {}
        self.started: dict[str, ToolWorker] = {}
        self.forks: ForkServer | None = None

    def adopt(self, subject: SubjectInfo, worker: ToolWorker) -> None:
        """Keep a running worker that has the tool loaded, to certify it, with its protocol's
        probes."""
        worker.probes = dict(subject.profile.probes)
        self.started[subject.ref] = worker

    def plan(self, order: Sequence[SubjectInfo]) -> None:
        """The order in which the tools will be certified; the first one's worker starts.

        A tool this run refuses to call (:meth:`Settings.refusal`) gets no worker, nor does a
        server as a whole (its checks make no call).
        """
        order = [
            subject
            for subject in order
            if subject.kind == "tool" and refusal(self.settings, subject.effects) is None
        ]
        self.following = {before.ref: after for before, after in itertools.pairwise(order)}
        self.together = {
            subject.ref: together
            for subject in order
            if (together := tuple(other.ref for other in order if subject.shares_home(other)))
        }
        if order:
            self._start(order[0])
        self.expect(len(order))

    def expect(self, tools: int) -> None:
        """How many tools will be certified here: for more than one, a fork server starts."""
        if tools > 1 and self.forks is None:
            self.forks = self._fork_server()

    def take(self, subject: SubjectInfo) -> ToolWorker:
        """The tool's worker (started ahead and still running, or now); the next tool's worker
        starts."""
        if self.forks is not None and self.forks.died:
            # Its workers are gone with it: one taken now is spawned again (it names the closed
            # server), the next ones are forked from a new server.
            self.forks.close()
            self.forks = self._fork_server()
        ahead = self.started.pop(subject.ref, None)
        worker = (
            tool_worker(subject, self.settings, self.forks, self.together.get(subject.ref, ()))
            if ahead is None
            else ahead.revive()
        )
        following = self.following.get(subject.ref)
        if following is not None:
            self._start(following)
        return worker

    def fresh(self, subject: SubjectInfo, settings: Settings) -> ToolWorker:
        """Another worker of the tool, as ``settings`` ask (one that reaches the network, say),
        started now."""
        return tool_worker(subject, settings)

    def close(self) -> None:
        """Stop the workers started for tools that were not certified after all."""
        for worker in self.started.values():
            worker.close()
        self.started.clear()
        if self.forks is not None:
            self.forks.close()
            self.forks = None

    def _fork_server(self) -> ForkServer:
        """In a sandbox, one cut off from the network, whose forks each enter a sandbox of their
        own: a worker that needs the network is spawned in one."""
        sandbox = Sandbox(network=False) if contained(self.settings) else None
        return fork_server(*PRELOAD, sandbox=sandbox).start()

    def _start(self, subject: SubjectInfo) -> None:
        if subject.ref not in self.started:
            together = self.together.get(subject.ref, ())
            self.started[subject.ref] = tool_worker(subject, self.settings, self.forks, together)
