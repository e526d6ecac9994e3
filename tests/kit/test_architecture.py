"""The shape of the code: no import cycles, and the worker side free of the test tools.

Imports are read from the source (every ``import``, function-level ones included; those under
``if TYPE_CHECKING:`` are never executed and do not count), so that a cycle closed by a
function-level import is found too.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = ("axm_conformance", "axm_runtime")
PLUGIN = "_axm_conformance_pytestplugin"


def module_names() -> dict[str, Path]:
    modules = {PLUGIN: SRC / f"{PLUGIN}.py"}
    for package in PACKAGES:
        for path in sorted((SRC / package).rglob("*.py")):
            parts = path.relative_to(SRC).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


MODULES = module_names()


def _executed(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``tree`` outside ``if TYPE_CHECKING:`` blocks."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (child for stmt in node.orelse for child in [stmt, *_executed(stmt)])
            continue
        yield node
        yield from _executed(node)


def imported(name: str) -> set[str]:
    """The kit's modules that importing ``name`` imports directly, with the packages Python
    initialises on the way (except those ``name`` itself is inside of)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _executed(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    found: set[str] = set()
    for target in targets:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            own_package = name == candidate or name.startswith(candidate + ".")
            if candidate in MODULES and not own_package:
                found.add(candidate)
    return found


GRAPH = {name: imported(name) for name in MODULES}


def cycles() -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for neighbour in sorted(GRAPH[node]):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return groups


def test_the_import_graph_is_read() -> None:
    """The graph sees function-level imports and leaves out those only a type checker runs."""
    assert "axm_conformance._engine" in GRAPH["axm_conformance._api"]  # inside check_tool
    assert "axm_conformance._report" not in GRAPH["axm_conformance._certificate"]


def test_there_are_no_import_cycles() -> None:
    assert cycles() == []


def reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(GRAPH[node])
    return seen


def third_party(name: str) -> set[str]:
    """The top-level packages outside the kit that ``name`` imports."""
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    roots = set()
    for node in _executed(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            roots.add(node.module.split(".")[0])
    return roots - {*PACKAGES, PLUGIN}


@pytest.mark.parametrize(
    "entry",
    [
        "axm_conformance._process.child._agent",
        "axm_conformance._process.parent._worker",
        "axm_conformance.protocols",
        *(name for name in MODULES if name.startswith("axm_runtime")),
    ],
)
def test_the_worker_side_and_the_runtime_import_no_test_tool(entry: str) -> None:
    """Tools run in a worker beside the kit's worker side and the reference runtime: neither
    may drag in pytest or Hypothesis, whose import hooks and state would be the tool's too."""
    leaked = {
        (name, package)
        for name in reachable(entry)
        for package in third_party(name) & {"pytest", "hypothesis", "_pytest"}
    }
    assert leaked == set()


def test_the_capabilities_table_is_the_registry() -> None:
    """conformance/protocols.md lists each capability with the protocols that offer it and the
    checks that require it, as registered."""
    from axm_conformance._checks import CHECKS
    from axm_conformance.protocols import capabilities, registered

    page = (SRC.parent / "conformance" / "protocols.md").read_text(encoding="utf-8")
    rows = {
        cells[0].strip("` "): [cell.strip() for cell in cells[1:]]
        for line in page.splitlines()
        if line.startswith("| `") and len(cells := line.strip("|").split("|")) == 4
    }
    assert set(rows) == set(capabilities())
    for capability, (meaning, offered, required) in rows.items():
        assert meaning == capabilities()[capability]
        protocols = [p.title for p in registered().values() if capability in p.capabilities]
        assert offered == (", ".join(protocols) or "none"), capability
        checks = [f"`{c.id}`" for c in CHECKS.values() if capability in c.requires]
        assert (required.split(":")[0] if not checks else required) == (
            ", ".join(checks) or "none"
        ), capability


PROCESS = "axm_conformance._process"


@pytest.mark.parametrize(
    "entry", sorted(name for name in MODULES if name.startswith(f"{PROCESS}.child"))
)
def test_the_child_side_never_reaches_the_engine_the_checks_or_pytest(entry: str) -> None:
    """What runs in a worker judges nothing: the engine, the checks and the pytest plugin stay
    in the kit's process, whatever the child side imports on the way."""
    reached = reachable(entry)
    assert judging(reached) == set()
    assert not any(third_party(name) & {"pytest", "_pytest"} for name in reached)


def judging(modules: set[str]) -> set[str]:
    """The modules among these that judge: the engine, the checks (the kit's and a protocol's
    own ``_checks``) and the pytest plugin, which stay in the kit's process."""
    return {
        name
        for name in modules
        if name in ("axm_conformance._pytest", PLUGIN)
        or name.startswith(("axm_conformance._checks", "axm_conformance._engine"))
        or name.endswith("._checks")
    }


PYPROJECT = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
ENTRY_POINTS = PYPROJECT["project"]["entry-points"]
MCP = "axm_conformance.protocols.mcp"


@pytest.mark.parametrize(
    "entry",
    sorted(
        {target.partition(":")[0] for target in ENTRY_POINTS["axm_conformance.protocols"].values()}
    ),
)
def test_a_protocol_loaded_in_a_worker_brings_no_check_engine_or_pytest(entry: str) -> None:
    """A worker loads the protocols by their entry points: what one imports stays free of the
    checks (registered apart, under ``axm_conformance.checks``), the engine and pytest."""
    assert judging(reachable(entry)) == set()


def test_mcp_is_a_plugin_no_module_outside_its_package_imports() -> None:
    """The MCP protocol and its checks are reached only through their entry points: no module
    of the core (the checks, the engine, the observation, the settings) imports the wire."""
    importers = {
        name
        for name in MODULES
        if not name.startswith(MCP) and any(other.startswith(MCP) for other in GRAPH[name])
    }
    assert importers == set()
    assert ENTRY_POINTS["axm_conformance.protocols"]["mcp"] == f"{MCP}:McpProtocol"
    assert ENTRY_POINTS["axm_conformance.checks"]["mcp"] == f"{MCP}._checks"


def test_mcps_checks_are_written_with_the_public_check_interface_alone() -> None:
    """MCP's checks import nothing of the kit but ``axm_conformance.checks`` and their own
    package, as a third party's checks can."""
    kit = {
        other
        for other in GRAPH[f"{MCP}._checks"]
        if other.startswith("axm_conformance") and not other.startswith(MCP)
    }
    assert kit <= {"axm_conformance", "axm_conformance.checks"}


def test_the_engine_reaches_a_tool_through_its_caller_and_the_doors_records_alone() -> None:
    """The engine imports nothing of the process boundary's kit side: it asks its Callers for
    a caller and speaks to it in the records both sides share (Invocation, Probe, Answer);
    whether a tool is called at all in this run is the shared containment's word."""
    engine = "axm_conformance._engine"
    crossing = {
        (name, other)
        for name in MODULES
        if name.startswith(engine)
        for other in GRAPH[name]
        if other.startswith(PROCESS)
        and other not in (PROCESS, f"{PROCESS}._records", f"{PROCESS}._containment")
    }
    assert crossing == set()


PROTOCOLS = "axm_conformance.protocols"
# What a protocol package may import of the kit, as a third party's can: the public modules for
# protocols, checks and strategies, the errors, and the operating system part of the process
# boundary (a server's sandbox, its processes).
PROTOCOL_DOORS = (
    f"{PROTOCOLS}.base",
    "axm_conformance.checks",
    "axm_conformance.strategies",
    "axm_conformance.errors",
    f"{PROCESS}.system",
)


def protocol_packages() -> list[str]:
    return sorted(
        name
        for name, path in MODULES.items()
        if name.startswith(f"{PROTOCOLS}.") and path.name == "__init__.py"
    )


def test_every_built_in_protocol_is_a_package_registered_by_its_entry_point() -> None:
    """A protocol is one package under ``protocols/``, registered by its entry point as a third
    party's is; the kit's own nine are."""
    registered = {
        target.partition(":")[0] for target in ENTRY_POINTS["axm_conformance.protocols"].values()
    }
    assert set(protocol_packages()) == registered
    assert len(registered) == 9


@pytest.mark.parametrize("package", protocol_packages())
def test_a_protocol_package_imports_only_the_doors_a_third_party_has(package: str) -> None:
    """Every module of a protocol package imports of the kit only its own package and the
    public doors (PROTOCOL_DOORS): a protocol can be written outside the kit, as MCP is inside
    it."""
    reached = {
        (name, other)
        for name in MODULES
        if name == package or name.startswith(f"{package}.")
        for other in GRAPH[name]
        if other.startswith("axm_conformance")
        and other not in ("axm_conformance", PROTOCOLS, f"{PROCESS}")
        and not other.startswith((package, *PROTOCOL_DOORS))
    }
    assert reached == set()


def test_the_process_boundary_has_its_three_parts_and_what_both_sides_share() -> None:
    """Three parts (the kit's side, the worker's side, the operating system both rest on) and,
    beside them, what the two sides share: the channel's frames, the records of an answer, and
    what the machine makes of a run's settings. The system part and the shared modules import
    neither side; the child side never imports the parent's."""
    shared = {f"{PROCESS}._channel", f"{PROCESS}._records", f"{PROCESS}._containment"}
    parts = {name.split(".")[2] for name in MODULES if name.startswith(f"{PROCESS}.")}
    assert parts == {"parent", "child", "system", "_channel", "_records", "_containment"}
    for name in MODULES:
        if name.startswith(f"{PROCESS}.system") or name in shared:
            sides: tuple[str, ...] = (f"{PROCESS}.parent", f"{PROCESS}.child")
        elif name.startswith(f"{PROCESS}.child"):
            sides = (f"{PROCESS}.parent",)
        else:
            continue
        assert {other for other in GRAPH[name] if other.startswith(sides)} == set(), name


# The modules that run in the kit's process alone, and what of the protocols they may not take:
# a protocol's adapter, the worker's face. They read protocols as profiles.
KIT_SIDE = (
    "axm_conformance._engine",
    "axm_conformance._checks",
    f"{PROCESS}.parent",
    "axm_conformance._pytest",
    "axm_conformance._pytest_config",
    "axm_conformance._certificate",
    "axm_conformance._failure",
    "axm_conformance._report",
)
ADAPTER_NAMES = {
    "ToolProtocol",
    "registered",
    "protocol_named",
    "protocol_of_ref",
    "protocol_for",
    "detect",
    "tool_from",
}


def test_the_kits_process_reads_a_protocol_as_its_profile_never_its_adapter() -> None:
    """Two faces per protocol: the worker calls tools through the adapter; the kit's process
    knows the protocol by its profile (the registry's, or the one a tool carries)."""
    taken = set()
    for name, path in MODULES.items():
        if not name.startswith(KIT_SIDE):
            continue
        for node in _executed(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PROTOCOLS):
                taken |= {(name, a.name) for a in node.names if a.name in ADAPTER_NAMES}
            elif isinstance(node, ast.Import):
                # A module imported whole hands on every name: the kit side takes names.
                taken |= {(name, a.name) for a in node.names if a.name.startswith(PROTOCOLS)}
    assert taken == set()


# Exceptions that never leave the kit: each is caught where its package raises it.
CONTROL_FLOW = {
    "axm_conformance._engine._runs.NotRunnable",  # by certify: the tool's checks are not run
    "axm_conformance._engine._runs.Stop",  # by the phases: no more calls through a feed
    "axm_conformance._process.parent._ends.Lost",  # by Worker: the call's Crash
}


def test_every_error_the_kit_raises_on_purpose_has_one_base() -> None:
    """An exception class of the kit is an AxmConformanceError unless it is a warning or
    control flow the kit catches itself (private, or one of CONTROL_FLOW); the base is the
    kit's public door's."""
    import axm_conformance
    from axm_conformance.errors import AxmConformanceError

    without_base = []
    for name, path in MODULES.items():
        if not name.startswith("axm_conformance"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                not isinstance(node, ast.ClassDef)
                or node.name.startswith("_")
                or f"{name}.{node.name}" in CONTROL_FLOW
            ):
                continue
            bases = {ast.unparse(base) for base in node.bases}
            raised = any(
                base.endswith(("Error", "Exception", "Crashed", "Failed", "Gone")) for base in bases
            )
            if raised and not any(base.endswith("Warning") for base in bases):
                cls = getattr(importlib.import_module(name), node.name)
                if not issubclass(cls, AxmConformanceError):
                    without_base.append(f"{name}.{node.name}")
    assert without_base == []
    assert axm_conformance.AxmConformanceError is AxmConformanceError
