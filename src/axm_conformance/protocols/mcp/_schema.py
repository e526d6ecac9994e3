"""The official JSON Schema of each MCP version (bundled under ``data/mcp``), read in its own
dialect: where a message breaks the definition it must meet.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry, Resource

__all__ = ["schema_errors"]

# The names the versions before 2025-11-25 (JSON Schema draft-07) give two definitions.
_RENAMED = {"JSONRPCResultResponse": "JSONRPCResponse", "JSONRPCErrorResponse": "JSONRPCError"}


@functools.cache
def _validator(version: str, definition: str) -> Validator:
    """A validator of one definition of a version's official schema, in the schema's own dialect
    (draft-07 before 2025-11-25, 2020-12 since)."""
    text = resources.files("axm_conformance").joinpath(f"data/mcp/{version}/schema.json")
    document = json.loads(text.read_text(encoding="utf-8"))
    uri = f"urn:mcp:{version}"
    registry: Registry[Any] = Registry().with_resource(uri, Resource.from_contents(document))
    where = "$defs" if "$defs" in document else "definitions"
    if definition not in document[where]:
        definition = _RENAMED.get(definition, definition)
    cls = validator_for(document)
    return cls({"$ref": f"{uri}#/{where}/{definition}"}, registry=registry)


def schema_errors(version: str, definition: str, value: Any) -> list[str]:
    """Where ``value`` breaks the definition of that name in the version's official schema."""
    errors = _validator(version, definition).iter_errors(value)
    return [f"{error.json_path}: {error.message}" for error in sorted(errors, key=str)]
