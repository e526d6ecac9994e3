"""Where an exception that escaped a tool came from, read from its traceback in the worker.

Three origins, in this order:

- ``"os"``: the operating system interface said no. The exception is an ``OSError`` (wherever
  it was raised), or it was raised inside the modules that reach the operating system (``os`` and
  ``os.path``, ``pathlib``, ``io``, ``shutil``, ``subprocess``, ``socket``, the C modules behind
  them, and ``select`` and ``selectors``, which subprocess and socket wait with: a
  ``subprocess.run`` timeout too large for ``epoll`` is refused there), or by a function of
  those modules written in C that the innermost Python frame was calling (``open("a\\0b")``
  raising ``ValueError`` from the tool's own line). A ``TypeError`` or ``AttributeError`` from
  inside those modules is not their refusal: the tool handed them the wrong kind of object.
- ``"raise"``: a ``raise`` statement in the tool's own code raised it (``raise
  ValueError("n must be positive")``, ``raise LookupError(...) from exc``). The tool's own code is
  the files of the package (or the module, when it is not in a package) that defines the tool's
  callable. A bare ``raise``, or ``raise exc`` of a caught exception, keeps the exception's
  traceback, so the exception is judged where it was first raised. An ``assert`` is not a
  deliberate raise: it states what the code assumes.
- ``"other"``: anything else: a programming error in the tool (``KeyError`` from a subscript,
  ``ZeroDivisionError``), or an error of a library it called and did not handle (``ValueError``
  escaping ``math.isqrt``, ``StatisticsError`` from ``statistics.median``).

A function written in C is recognised only when the innermost frame calls it by a plain or
dotted name of a module-level object (``open(...)``, ``os.stat(...)``), not through a local
variable or an expression: such a call is counted as ``"other"``.
"""

from __future__ import annotations

import dis
import functools
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from types import (
    BuiltinFunctionType,
    CodeType,
    MethodDescriptorType,
    ModuleType,
    TracebackType,
)
from typing import Any

from axm_conformance._observation import Origin

__all__ = ["OS_INTERFACE", "OwnCode", "origin", "own_code"]

# The modules that reach the operating system, the C modules they are built on, and the I/O
# multiplexing that subprocess and socket wait with.
OS_INTERFACE = frozenset(
    {
        *("os", "posix", "nt", "posixpath", "ntpath", "genericpath"),
        *("pathlib", "io", "_io", "shutil", "subprocess", "_posixsubprocess", "socket", "_socket"),
        *("select", "selectors"),
    }
)
# Raised inside the operating system interface, these say the tool handed it the wrong kind of
# object (``Path(None)``), not that the world refused.
_WRONG_KIND = (TypeError, AttributeError)
_RAISE = frozenset({dis.opmap["RAISE_VARARGS"]})
_CALLS = frozenset(
    dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "PRECALL") if name in dis.opmap
)
_ATTRIBUTES = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_NAMES = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})


@dataclass(frozen=True)
class OwnCode:
    """The files of a tool's own code: whole package directories, or single module files."""

    directories: tuple[str, ...] = ()
    files: frozenset[str] = frozenset()

    def __contains__(self, filename: object) -> bool:
        if not isinstance(filename, str):
            return False
        path = _normal(filename)
        return path in self.files or any(
            path.startswith(directory + os.sep) for directory in self.directories
        )


def own_code(objects: Iterable[Any]) -> OwnCode:
    """The tool's own code: for the module each object was defined in, its top-level package
    (the first regular package or module of its dotted name, namespace packages skipped)."""
    directories: list[str] = []
    files: set[str] = set()
    for obj in objects:
        module = _module_name(obj)
        root = _root(module) if module else None
        if root is None:
            continue
        path = getattr(root, "__path__", None)
        if path is not None:
            directories.extend(_normal(entry) for entry in list(path) if isinstance(entry, str))
        elif isinstance(getattr(root, "__file__", None), str):
            files.add(_normal(root.__file__))  # type: ignore[arg-type]
    return OwnCode(tuple(dict.fromkeys(directories)), frozenset(files))


def _module_name(obj: Any) -> str:
    try:
        function = getattr(obj, "__func__", obj)  # a bound method: the function it binds
        module = getattr(function, "__module__", None)
    except Exception:  # a stranger's object: a failed read names no module
        return ""
    return module if isinstance(module, str) else ""


def _root(module: str) -> ModuleType | None:
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        found = sys.modules.get(".".join(parts[:end]))
        if found is not None and isinstance(getattr(found, "__file__", None), str):
            return found
    return None


def _normal(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def origin(exc: BaseException, own: OwnCode, hidden: str = "") -> tuple[Origin, str]:
    """The exception's origin, and where it was raised: the dotted name of the function (for a
    function written in C, the one that was called), "" when that is not known or the innermost
    frame is in the directory ``hidden`` (the caller's own code, which a report does not name)."""
    tb = _innermost(exc.__traceback__)
    if tb is None or (hidden and tb.tb_frame.f_code.co_filename.startswith(hidden + os.sep)):
        return ("os" if isinstance(exc, OSError) else "other"), ""
    code = tb.tb_frame.f_code
    modules = [_frame_module(tb)]
    where = f"{modules[0]}.{getattr(code, 'co_qualname', code.co_name)}" if modules[0] else ""
    called = _called(tb)
    if called is not None:
        where = called[0]
        modules.append(called[1])
    refused = any(_in_os_interface(module) for module in modules)
    if isinstance(exc, OSError) or (refused and not isinstance(exc, _WRONG_KIND)):
        return "os", where
    if (
        called is None
        and code.co_filename in own
        and _opcode(code, tb.tb_lasti) in _RAISE
        and not isinstance(exc, AssertionError)
    ):
        return "raise", where
    return "other", where


def _innermost(tb: TracebackType | None) -> TracebackType | None:
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _frame_module(tb: TracebackType) -> str:
    try:
        name = tb.tb_frame.f_globals.get("__name__")
    except Exception:
        return ""
    return name if isinstance(name, str) else ""


def _in_os_interface(module: str) -> bool:
    return module.partition(".")[0] in OS_INTERFACE


def _opcode(code: CodeType, offset: int) -> int | None:
    raw = code.co_code
    return raw[offset] if 0 <= offset < len(raw) else None


def _called(tb: TracebackType) -> tuple[str, str] | None:
    """The function written in C that the innermost frame was calling when it raised, as its
    dotted name and its module: the call's callee must be a plain or dotted module-level name."""
    code = tb.tb_frame.f_code
    if _opcode(code, tb.tb_lasti) not in _CALLS:
        return None
    chain = _callee_chain(code, tb.tb_lasti)
    if not chain:
        return None
    frame = tb.tb_frame
    obj = _lookup(frame.f_globals, chain[0])
    if obj is None:
        obj = _lookup(frame.f_builtins, chain[0])
    for attribute in chain[1:]:
        if not issubclass(type(obj), ModuleType):
            return None
        obj = _lookup(vars(obj), attribute)
    if obj is None or not _written_in_c(obj):
        return None
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str):
        owner = getattr(obj, "__objclass__", None)
        module = getattr(owner, "__module__", None)
    if not isinstance(module, str):
        return None
    return ".".join(chain), module


def _lookup(namespace: Any, name: str) -> Any:
    # Plain dict reads: resolving the callee runs none of the tool's code.
    return dict.get(namespace, name) if isinstance(namespace, dict) else None


def _written_in_c(obj: Any) -> bool:
    # Exact types: reading the module of these runs no code of the tool's.
    return type(obj) in (BuiltinFunctionType, MethodDescriptorType, type)


def _callee_chain(code: CodeType, offset: int) -> tuple[str, ...]:
    """The dotted name the call at ``offset`` calls (``("os", "stat")``), () when it calls
    anything but a module-level name and its attributes.

    The instructions that load the callee start where the call expression starts; each covers
    one more attribute (``os``, ``os.stat``), and the last of them ends before the call does.
    """
    instructions = _instructions(code)
    call = next((i for i in instructions if i.offset == offset), None)
    if call is None or call.positions is None or call.positions.lineno is None:
        return ()
    start = (call.positions.lineno, call.positions.col_offset)
    end = (call.positions.end_lineno, call.positions.end_col_offset)
    parts: list[tuple[tuple[Any, Any], dis.Instruction]] = []
    for instruction in instructions:
        if instruction.offset >= offset:
            break
        positions = instruction.positions
        if positions is None or (positions.lineno, positions.col_offset) != start:
            continue
        stop = (positions.end_lineno, positions.end_col_offset)
        if stop < end:
            parts.append((stop, instruction))
    # Per span, the instruction that loads it (a PUSH_NULL or KW_NAMES may share it).
    loads: dict[tuple[Any, Any], dis.Instruction] = {}
    for stop, instruction in parts:
        if stop not in loads or instruction.opname in _ATTRIBUTES | _NAMES:
            loads[stop] = instruction
    names: list[str] = []
    for stop in sorted(loads, reverse=True):
        instruction = loads[stop]
        if instruction.opname in _ATTRIBUTES:
            names.append(str(instruction.argval))
        elif instruction.opname in _NAMES:
            names.append(str(instruction.argval))
            return tuple(reversed(names))
        else:
            return ()
    return ()


@functools.lru_cache(maxsize=256)
def _instructions(code: CodeType) -> tuple[dis.Instruction, ...]:
    return tuple(dis.get_instructions(code))
