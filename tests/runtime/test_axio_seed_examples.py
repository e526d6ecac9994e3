"""Seeds 001 and 002: every code example, with only its import lines changed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import pytest

from axm_runtime.axio import CONTEXT, Field, Tool, ToolHandler, ToolSelector


def test_plain_async_function(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    async def write_file(path: str, content: str) -> str:
        """Write content to a file at the given path."""
        Path(path).write_text(content)
        return f"Wrote {len(content)} bytes to {path}"

    tool = Tool(name="write_file", handler=write_file)
    assert tool.description == "Write content to a file at the given path."
    assert tool.input_schema["required"] == ["path", "content"]
    assert asyncio.run(tool(path="a.txt", content="hello")) == "Wrote 5 bytes to a.txt"
    assert (tmp_path / "a.txt").read_text() == "hello"


def test_annotated_field_bounds() -> None:
    async def search(
        query: Annotated[str, Field(description="Search query")],
        limit: Annotated[int, Field(default=10, ge=1, le=100)] = 10,
    ) -> str:
        """Search the knowledge base."""
        return f"results for {query!r} (limit={limit})"

    tool = Tool(name="search", handler=search)
    result_default = search.__defaults__
    assert result_default == (10,)
    limit = tool.input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 100, 10)
    assert tool.input_schema["properties"]["query"]["description"] == "Search query"
    assert asyncio.run(tool(query="x")) == "results for 'x' (limit=10)"


def test_context_injection() -> None:
    async def search(
        query: Annotated[str, Field(description="Search query")],
        limit: Annotated[int, Field(default=10, ge=1, le=100)] = 10,
    ) -> str:
        """Search a list of documents."""
        documents: list[str] = CONTEXT.get()
        results = [s for s in documents if query.lower() in s.lower()]
        return "\n".join(results[:limit]) or "no results"

    documents = ["Axio is async", "Pydantic is great", "Axio uses protocols"]
    t = Tool(name="search", handler=search, context=documents)

    result = asyncio.run(t(query="axio"))
    assert "Axio" in result


def test_context_from_nested_helper() -> None:
    def helper() -> str:
        return str(CONTEXT.get())  # works even without an explicit argument

    async def ping(msg: str) -> str:
        """Echo msg with context from ContextVar."""
        return f"{msg}:{helper()}"

    t = Tool(name="ping", handler=ping, context="ctx-42")
    assert asyncio.run(t(msg="hello")) == "hello:ctx-42"


def test_tool_selector_protocol() -> None:
    class FirstTwo:
        async def select(
            self, messages: Iterable[Any], tools: Iterable[Tool[Any]]
        ) -> Iterable[Tool[Any]]:
            return list(tools)[:2]

    assert isinstance(FirstTwo(), ToolSelector)


def test_tool_handler_variant(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    class WriteFile(ToolHandler):
        """Write content to a file at the given path."""

        path: str
        content: str

        async def __call__(self) -> str:
            Path(self.path).write_text(self.content)
            return f"Wrote {len(self.content)} bytes to {self.path}"

    tool = Tool(name="write_file", description="Write a file", handler=WriteFile)
    assert tool.input_schema == WriteFile.model_json_schema()
    assert asyncio.run(tool(path="b.txt", content="hey")) == "Wrote 3 bytes to b.txt"
    assert (tmp_path / "b.txt").read_text() == "hey"
    assert Tool(name="w", handler=WriteFile).description == (
        "Write content to a file at the given path."
    )
