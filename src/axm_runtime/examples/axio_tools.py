"""Example axio tools: an ``async def`` handler and a :class:`ToolHandler`, with guards."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any

import pydantic

from axm_runtime.axio import CONTEXT, Field, GuardError, Tool, ToolHandler

__all__ = ["paginate", "search_notes", "slugify"]

NOTES = (
    "Axio tools are plain async functions",
    "Guards run before the handler",
    "A concurrency limit caps parallel calls",
    "Zürich office notes: café hours",
)


async def _search_notes(
    query: Annotated[str, Field(description="Text to look for, case-insensitively")],
    limit: Annotated[int, Field(default=3, ge=1, le=20, description="Most results to return")] = 3,
) -> str:
    """Search the team's notes and return the matching lines."""
    notes: tuple[str, ...] = CONTEXT.get()
    needle = query.casefold()
    matches = [note for note in notes if needle in note.casefold()]
    return "\n".join(matches[:limit]) or "no matching notes"


search_notes: Tool[tuple[str, ...]] = Tool(
    name="search_notes", handler=_search_notes, context=NOTES, concurrency=4
)


class _TrimText:
    """Guard that trims surrounding white space before the handler sees the text."""

    async def __call__(self, tool: Any, **kwargs: Any) -> dict[str, Any]:
        return {**kwargs, "text": kwargs["text"].strip()}


class _RefuseControlCharacters:
    """Guard that refuses text with control characters (they have no place in a URL slug)."""

    async def __call__(self, tool: Any, **kwargs: Any) -> dict[str, Any]:
        if any(unicodedata.category(char) == "Cc" for char in kwargs["text"]):
            raise GuardError("text contains control characters")
        return kwargs


async def _slugify(
    text: Annotated[str, Field(description="Title to turn into a URL slug", max_length=200)],
    separator: Annotated[str, Field(default="-", min_length=1, max_length=1)] = "-",
) -> str:
    """Turn a title into a lowercase ASCII URL slug."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return separator.join(words)


slugify: Tool[dict[str, Any]] = Tool(
    name="slugify",
    handler=_slugify,
    guards=(_RefuseControlCharacters(), _TrimText()),
    concurrency=2,
)


class _Paginate(ToolHandler):
    """Return one page of a numbered list of items."""

    total: int = pydantic.Field(default=0, ge=0, description="Number of items in the list")
    page: int = pydantic.Field(default=1, ge=1, description="Page number, from 1")
    page_size: int = pydantic.Field(default=10, ge=1, le=100, description="Items per page")

    async def __call__(self) -> str:
        first = (self.page - 1) * self.page_size
        items = range(first, min(first + self.page_size, self.total))
        return ", ".join(f"item {index + 1}" for index in items) or "no items on this page"


paginate: Tool[dict[str, Any]] = Tool(name="paginate", handler=_Paginate)
