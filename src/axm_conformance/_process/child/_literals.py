"""The literals in a tool's own source: the strings, bytes and numbers its code compares with.

A defect that only a value written in the tool's code triggers (a magic word compared for
equality, a key of a dict literal with a missing branch, a threshold, a token looked for in the
text) is rarely hit by values drawn from the schema alone. Hypothesis mines such literals from
the local code it runs next to (its local-constants provider, ``hypothesis.internal.
constants_ast``); the kit draws inputs in the pytest process, which never imports the tool, so
the worker, where the tool's modules are loaded, reads them and hands them over with the tool's
description.

The rules are Hypothesis': every ``str``, ``bytes``, ``int`` and ``float`` literal, a negative
number as written (``-1``, not ``1``), the parts of a complex one; no docstrings, no f-strings,
no empty or blank strings, no strings over 20 characters (messages, mostly) or bytes over 50,
no booleans, infinities or zero floats. Unlike Hypothesis, small integers are kept (the schema's
integers are not always drawn near zero), and bytes are given as the text they decode to, since
a tool receives text and encodes it. The modules read are those of the tool's own objects, the
one that defines its function first (the top-level definition that holds the function first,
then those defining the names it reads, and so on), then the other loaded modules of their
top-level packages, until 512 KiB of
source (Hypothesis' limit for one module) has been read or 1024 literals found (its limit for one
module). The kit's own modules are never read. Parsing is Python's own ``ast``, which
``inspect`` has already imported: nothing new is imported into the worker.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["LiteralValue", "literals_of"]

LiteralValue = str | int | float

_MAX_LITERALS = 1024
_MAX_SOURCE_BYTES = 512 * 1024
_MAX_TEXT = 20
_MAX_BYTES = 50
# Packages whose literals are the kit's, not the tool's.
_KIT_PACKAGES = frozenset({"axm_conformance", "axm_runtime"})


def literals_of(objects: Iterable[Any]) -> tuple[LiteralValue, ...]:
    """The literals of the modules behind a tool's own objects (``ToolProtocol.own_objects``:
    what its author wrote, never a framework's wrapper around it): first those of the
    module-level definition that holds its function (the first of them with code, or its class
    with the helper methods) and of the module-level names it reads, then the rest of that
    module, then the other objects' modules, then the packages'."""
    targets = [target for target in map(_unwrapped, objects) if target is not None]
    lead = next((target for target in targets if _first_line(target)), None)
    if lead is not None:
        targets.insert(0, lead)
    modules = [
        module
        for module in dict.fromkeys(getattr(target, "__module__", None) for target in targets)
        if isinstance(module, str)
        and module in sys.modules
        and module.partition(".")[0] not in _KIT_PACKAGES
    ]
    if not modules:
        return ()
    tops = dict.fromkeys(module.partition(".")[0] for module in modules)
    package = [
        name
        for name in list(sys.modules)
        if name not in modules and any(name == top or name.startswith(top + ".") for top in tops)
    ]
    line = _first_line(targets[0])
    found: dict[tuple[type, LiteralValue], LiteralValue] = {}
    budget = _MAX_SOURCE_BYTES
    for name in (*modules, *package):
        read = _module_literals(getattr(sys.modules.get(name), "__file__", None))
        budget -= read.size
        for value in read.ordered(line if name == modules[0] else 0):
            found.setdefault((type(value), value), value)
            if len(found) >= _MAX_LITERALS:
                return tuple(found.values())
        if budget <= 0:
            break
    return tuple(found.values())


def _unwrapped(obj: Any) -> Any:
    """The function (or class) whose code runs for ``obj``; None if unreadable."""
    try:
        target = getattr(obj, "__func__", obj)  # a bound method
        target = getattr(target, "func", target)  # a functools.partial
        return inspect.unwrap(target)
    except Exception:  # a stranger's object: any read may raise
        return None


def _first_line(target: Any) -> int:
    """The line the callable's code starts on (0 when it has no Python code)."""
    code = getattr(target, "__code__", None)
    if code is None and isinstance(target, type):  # a handler class: its __call__
        code = getattr(vars(target).get("__call__"), "__code__", None)
    line = getattr(code, "co_firstlineno", 0)
    return line if isinstance(line, int) else 0


@dataclass(frozen=True)
class _Statement:
    """A top-level statement: its lines, its literals, the names it defines and reads."""

    first: int
    last: int
    literals: tuple[LiteralValue, ...]
    defines: frozenset[str]
    reads: frozenset[str]


@dataclass(frozen=True)
class _Module:
    """A module's top-level statements and the size of its source (0 when it was not read)."""

    statements: tuple[_Statement, ...] = ()
    size: int = 0

    def ordered(self, line: int) -> list[LiteralValue]:
        """Its literals: first those of the statement holding ``line`` and of the statements
        defining the names it reads, and so on (what runs when the callable does, as far as
        names tell), then the others, each statement's in source order."""
        statements = self.statements
        reached = [i for i, s in enumerate(statements) if s.first <= line <= s.last]
        seen = set(reached)
        for index in reached:  # grows while it is walked: breadth first
            reads = statements[index].reads
            found = [i for i, s in enumerate(statements) if i not in seen and s.defines & reads]
            reached += found
            seen.update(found)
        order = reached + [i for i in range(len(statements)) if i not in seen]
        return [value for index in order for value in statements[index].literals]


@functools.lru_cache(maxsize=256)
def _module_literals(path: str | None) -> _Module:
    if not path or not path.endswith(".py"):
        return _Module()
    try:
        with open(path, "rb") as file:
            source = file.read(_MAX_SOURCE_BYTES + 1)
        if len(source) > _MAX_SOURCE_BYTES:
            return _Module()
        statements = tuple(_statement(node) for node in ast.parse(source).body)
    except Exception:  # unreadable, not Python, too deep for the parser
        return _Module()
    return _Module(statements, len(source))


def _statement(node: ast.stmt) -> _Statement:
    visitor = _Literals()
    visitor.visit(node)
    decorators = getattr(node, "decorator_list", ())
    first = min([node.lineno, *(d.lineno for d in decorators)])
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        defines = {node.name}
    else:
        targets = [n for n in ast.walk(node) if isinstance(n, ast.Name)]
        defines = {n.id for n in targets if isinstance(n.ctx, ast.Store)}
    reads = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return _Statement(
        first,
        node.end_lineno or node.lineno,
        tuple(visitor.found),
        frozenset(defines),
        frozenset(reads),
    )


class _Literals(ast.NodeVisitor):
    """Collects literals in source order, as Hypothesis' ``ConstantVisitor`` does."""

    def __init__(self) -> None:
        self.found: list[LiteralValue] = []

    def add(self, value: object) -> None:
        if isinstance(value, bool) or value is None or value is Ellipsis:
            return
        if isinstance(value, bytes):
            text = _text(value)
            if 0 < len(value) <= _MAX_BYTES and not text.isspace():
                self.found.append(text)
        elif isinstance(value, str):
            if value and not value.isspace() and len(value) <= _MAX_TEXT:
                self.found.append(value)
        elif isinstance(value, complex):
            self.add(value.imag)
            self.add(value.real)
        elif isinstance(value, float):
            if math.isfinite(value) and value != 0.0:
                self.found.append(value)
        elif isinstance(value, int):
            self.found.append(value)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        operand = node.operand
        if (
            isinstance(node.op, ast.USub)
            and isinstance(operand, ast.Constant)
            and isinstance(operand.value, int | float | complex)
            and not isinstance(operand.value, bool)
        ):
            self.add(-operand.value)
            return
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        return  # an f-string: its parts are rarely values the code compares with

    def visit_Constant(self, node: ast.Constant) -> None:
        self.add(node.value)


def _text(value: bytes) -> str:
    """Bytes as the text a tool would have encoded to them."""
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("latin-1")
