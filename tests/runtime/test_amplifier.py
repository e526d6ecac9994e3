"""The Amplifier runtime: the seed's examples, results in both error forms, coordinator, events."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pydantic
import pytest

from axm_runtime.amplifier import Coordinator, Tool, ToolResult, call_tool, load_modules


class ReadFileTool:
    name = "read_file"
    description = "Read the contents of a file"
    input_schema = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "File path"}},
        "required": ["path"],
    }

    def __init__(self, config: dict[str, Any]) -> None:
        self.allowed_paths = config.get("allowed_paths", [])

    async def execute(self, input: dict[str, Any]) -> Any:
        path = input.get("path")

        # Validate path
        if not self._is_allowed(path):
            return {"success": False, "error": "Path not allowed"}

        try:
            content = Path(path).read_text()  # type: ignore[arg-type]
            return {"success": True, "output": content}
        except Exception as e:
            return {"success": False, "error": str(e)}

    def _is_allowed(self, path: Any) -> bool:
        return any(str(path).startswith(allowed) for allowed in self.allowed_paths)


async def mount(coordinator: Coordinator, config: dict[str, Any] | None = None) -> None:
    config = config or {}
    tool = ReadFileTool(config)
    await coordinator.mount("tools", tool, name=tool.name)
    return None


def recording(coordinator: Coordinator) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for event in ("tool:pre", "tool:post", "tool:error"):
        coordinator.hooks.register(event, lambda name, data: events.append((name, data)))
    return events


def test_seed_example_mounts_and_runs(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")

    async def main() -> tuple[ToolResult, ToolResult, list[tuple[str, dict[str, Any]]]]:
        coordinator = Coordinator()
        events = recording(coordinator)
        await mount(coordinator, {"allowed_paths": [str(tmp_path)]})
        tool = coordinator.get("tools", "read_file")
        assert isinstance(tool, Tool)
        allowed = await call_tool(coordinator, "read_file", {"path": str(tmp_path / "notes.txt")})
        denied = await call_tool(coordinator, "read_file", {"path": "/etc/passwd"})
        return allowed, denied, events

    allowed, denied, events = asyncio.run(main())
    assert allowed == ToolResult(success=True, output="hello")
    assert denied.success is False and denied.error_message == "Path not allowed"
    assert [name for name, _ in events] == ["tool:pre", "tool:post", "tool:pre", "tool:post"]
    pre, post = events[0][1], events[1][1]
    assert pre == {"tool_name": "read_file", "tool_input": {"path": str(tmp_path / "notes.txt")}}
    assert post["result"] == allowed and post["tool_input"] == pre["tool_input"]


def test_error_event_names_the_exception() -> None:
    class Exploding:
        name = "exploding"
        description = "Always raises."

        async def execute(self, input: dict[str, Any]) -> ToolResult:
            raise PermissionError("not allowed here")

    async def main() -> tuple[ToolResult, list[tuple[str, dict[str, Any]]]]:
        coordinator = Coordinator()
        events = recording(coordinator)
        await coordinator.mount("tools", Exploding())
        return await call_tool(coordinator, "exploding", {}), events

    result, events = asyncio.run(main())
    assert result.success is False and "PermissionError" in (result.error_message or "")
    assert events[-1] == (
        "tool:error",
        {"tool_name": "exploding", "error": {"type": "PermissionError", "msg": "not allowed here"}},
    )


def test_missing_tool_is_a_failed_result() -> None:
    result = asyncio.run(call_tool(Coordinator(), "absent", {}))
    assert result.success is False and "absent" in (result.error_message or "")


def test_result_accepts_both_error_forms() -> None:
    assert ToolResult(success=False, error="plain").error_message == "plain"
    assert ToolResult(success=False, error={"message": "dict", "code": 3}).error_message == "dict"
    with pytest.raises(pydantic.ValidationError):
        ToolResult(success=False, error={"code": 3})


def test_coordinator_mount_get_unmount() -> None:
    async def main() -> None:
        coordinator = Coordinator()
        tool = ReadFileTool({})
        await coordinator.mount("tools", tool)
        assert coordinator.get("tools") == {"read_file": tool}
        await coordinator.unmount("tools", "read_file")
        assert coordinator.get("tools", "read_file") is None
        with pytest.raises(ValueError, match="no name"):
            await coordinator.mount("tools", object())

    asyncio.run(main())


def test_coordinator_carries_what_modules_use_besides_mount() -> None:
    coordinator = Coordinator(session_id="s-1", config={"tools": {"limit": 3}})
    assert (coordinator.session_id, coordinator.config) == ("s-1", {"tools": {"limit": 3}})
    coordinator.register_capability("cache", {"size": 1})
    assert coordinator.get_capability("cache") == {"size": 1}
    assert coordinator.get_capability("absent") is None
    ran: list[str] = []

    async def closes() -> None:
        ran.append("async")

    def fails() -> None:
        ran.append("fails")
        raise OSError("gone")

    for cleanup in (lambda: ran.append("first"), fails, closes):
        coordinator.register_cleanup(cleanup)
    with pytest.raises(OSError, match="gone"):
        asyncio.run(coordinator.cleanup())
    assert ran == ["async", "fails", "first"]
    asyncio.run(coordinator.cleanup())
    assert len(ran) == 3


def test_hooks_run_in_priority_order_and_unregister() -> None:
    seen: list[str] = []
    coordinator = Coordinator()
    coordinator.hooks.register("e", lambda n, d: seen.append("late"), priority=10)
    remove = coordinator.hooks.register("e", lambda n, d: seen.append("early"), priority=-1)

    async def async_handler(name: str, data: dict[str, Any]) -> None:
        seen.append("async")

    coordinator.hooks.register("e", async_handler)
    asyncio.run(coordinator.hooks.emit("e", {}))
    remove()
    asyncio.run(coordinator.hooks.emit("e", {}))
    assert seen == ["early", "async", "late", "async", "late"]


def test_load_modules_mounts_entry_points(make_distribution: Any) -> None:
    make_distribution(
        "amp-demo",
        {"amplifier.modules": {"calc": "axm_runtime.examples.amplifier_tools:mount"}},
        {},
    )

    async def main() -> dict[str, Any]:
        coordinator = Coordinator()
        await load_modules(coordinator, config={"calc": {"max_words": 2}})
        return coordinator.get("tools")  # type: ignore[no-any-return]

    tools = asyncio.run(main())
    assert {"calculator", "text_stats"} <= set(tools)
    assert tools["text_stats"].max_words == 2


def test_load_modules_names_a_failing_module(make_distribution: Any) -> None:
    make_distribution(
        "amp-broken",
        {"amplifier.modules": {"broken": "amp_broken_module:mount"}},
        {"amp_broken_module.py": "async def mount(coordinator, config):\n    raise OSError('x')\n"},
    )
    with pytest.raises(RuntimeError, match="broken"):
        asyncio.run(load_modules(Coordinator()))
