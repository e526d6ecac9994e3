"""Which keywords a schema uses, and which of them an input reaches."""

from __future__ import annotations

import re
from typing import Any, Final

from axm_conformance._schema_keywords import subschemas

__all__ = ["keywords_exercised", "keywords_of"]

_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "$comment", "$defs", "definitions", "$schema",
     "$id", "deprecated", "readOnly", "writeOnly"}
)  # fmt: skip


def keywords_of(schema: Any) -> frozenset[str]:
    """The keywords used anywhere in `schema`; property names and $defs names are not keywords."""
    return frozenset(
        keyword for _, sub in subschemas(schema) if isinstance(sub, dict) for keyword in sub
    )


def keywords_exercised(schema: Any, value: Any) -> frozenset[str]:
    """The keywords of the subschemas that `value` reaches: the root's, then those of each
    property, pattern, item or branch the value has. Local `$ref`s are followed once each."""
    found: set[str] = set()
    seen: set[int] = set()

    def visit(node: Any, item: Any) -> None:
        if not isinstance(node, dict) or id(node) in seen:
            return
        seen.add(id(node))
        found.update(key for key in node if key not in _ANNOTATIONS)
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#"):
            target: Any = schema
            for token in filter(None, reference[1:].split("/")):
                token = token.replace("~1", "/").replace("~0", "~")
                target = target.get(token) if isinstance(target, dict) else None
            visit(target, item)
        for key in ("allOf", "anyOf", "oneOf"):
            for branch in node.get(key) or ():
                visit(branch, item)
        if isinstance(item, dict):
            properties = node.get("properties") or {}
            patterns = node.get("patternProperties") or {}
            for name, member in item.items():
                matched = [sub for pattern, sub in patterns.items() if re.search(pattern, name)]
                if name in properties:
                    visit(properties[name], member)
                for sub in matched:
                    visit(sub, member)
                if name not in properties and not matched:
                    visit(node.get("additionalProperties"), member)
        elif isinstance(item, list):
            prefix = node.get("prefixItems") or []
            for index, member in enumerate(item):
                visit(prefix[index] if index < len(prefix) else node.get("items"), member)

    visit(schema, value)
    return frozenset(found)
