"""What a tool's sequences draw on: the tools of its home, the values their calls carried, and
the places in its input those values go."""

from __future__ import annotations

import dataclasses
import json

from axm_conformance._engine._home import weight
from axm_conformance._engine._stateful import _named_input, carried
from axm_conformance._observation import Observation
from axm_conformance.protocols import capabilities
from tests.unit.factories import result, returned, subject

SERVER = frozenset(capabilities()) - {"in-process"}


def test_a_servers_tools_share_a_home_a_modules_tools_theirs_and_a_package_its_own() -> None:
    reader = subject(ref="mcp:node server.js[read]", capabilities=SERVER)
    writer = subject(ref="mcp:node server.js[write]", capabilities=SERVER)
    other = subject(ref="mcp:node other.js[write]", capabilities=SERVER)
    assert reader.home == "mcp:node server.js"
    assert reader.shares_home(writer) and not reader.shares_home(other)
    assert not reader.shares_home(reader)
    assert subject(ref="tools:A").shares_home(subject(ref="tools:B"))
    assert not subject(ref="tools:A").shares_home(subject(ref="other:B"))
    published = subject(ref="entry-point:axm.tools:a", distribution=("pkg", "1.0"))
    assert published.shares_home(
        subject(ref="entry-point:axm.tools:b", distribution=("pkg", "1.0"))
    )
    assert subject(ref="pickle:AAAA").home == ""


def test_a_served_call_carries_its_inputs_values_and_its_results_json_and_lines() -> None:
    text = {"type": "text", "text": json.dumps({"id": 1001, "tags": ["a", "b"]})}
    lines = {"type": "text", "text": "alpha\nbeta"}
    observation: Observation = returned(
        result(
            "CallToolResult",
            content=[text, lines],
            structuredContent={"id": 1001},
            isError=False,
        )
    )
    found = carried({"path": "notes/a.txt", "overwrite": True}, observation)
    assert ("path", "notes/a.txt") in found
    assert ("id", 1001) in found and ("tags", "a") in found
    assert ("text", "alpha") in found and ("text", "beta") in found
    # Booleans and the protocol's own words (a block's type) are no values of the world; each
    # value is kept once.
    assert all(not isinstance(value, bool) for _, value in found)
    assert "text" not in [value for _, value in found]
    assert len([value for _, value in found if value == 1001]) == 1


GETTER = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1}, "verbose": {"type": "boolean"}},
    "required": ["id"],
    "additionalProperties": False,
}


def test_a_value_made_under_a_property_name_goes_to_that_property() -> None:
    example = _named_input(GETTER, [("title", ""), ("ID", 1001)])
    assert example is not None and example.value == {"id": 1001}
    assert example.source == "tool-output"
    # A value the schema does not allow there makes no input.
    assert _named_input(GETTER, [("id", 0)]) is None
    assert _named_input(GETTER, [("title", "x")]) is None


def test_a_tool_that_may_change_the_world_and_shares_names_prepares_more_often() -> None:
    getter = subject(input_schema=GETTER)
    creator = subject(
        input_schema={"type": "object", "properties": {"title": {"type": "string"}}},
        output_schema={"type": "object", "properties": {"id": {"type": "integer"}}},
    )
    lister = subject(
        input_schema={"type": "object", "properties": {}},
        annotations={"readOnlyHint": True},
    )
    assert weight(creator, getter) > weight(subject(), getter) > weight(lister, getter)


def test_a_lister_named_after_a_property_prepares_a_lookup_of_it() -> None:
    lookup = subject(
        input_schema={"type": "object", "properties": {"term": {"type": "string"}}},
        annotations={"readOnlyHint": True},
    )
    lister = subject(
        name="list_terms",
        input_schema={"type": "object", "properties": {}},
        annotations={"readOnlyHint": True},
    )
    unrelated = dataclasses.replace(lister, name="list_users")
    assert weight(lister, lookup) > weight(unrelated, lookup)
    assert weight(dataclasses.replace(lister, name="ListTerms"), lookup) == weight(lister, lookup)
