"""The security checks' parts: the description rules stay silent on the descriptions published
servers give, and the payloads go where the schema lets them, each place with a token of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from axm_conformance._checks import CHECKS, CheckContext
from axm_conformance._engine import _payloads
from axm_conformance._jsonable import strings_in
from axm_conformance._process.system import _canary
from axm_conformance._settings import Settings
from tests.unit.factories import subject

# tools/list of the real servers tox -e mcp certifies, at their pinned versions.
CORPUS = json.loads((Path(__file__).parents[1] / "data" / "real_descriptions.json").read_text())
DESCRIBED = [
    (server, tool, facts)
    for server, listed in sorted(CORPUS["servers"].items())
    for tool, facts in sorted(listed["tools"].items())
]


def test_the_corpus_holds_every_published_servers_tools() -> None:
    assert len(CORPUS["servers"]) >= 15
    assert len(DESCRIBED) >= 150


@pytest.mark.parametrize(
    ("server", "tool", "facts"), DESCRIBED, ids=[f"{s}:{t}" for s, t, _ in DESCRIBED]
)
def test_the_description_rules_are_silent_on_a_published_servers_description(
    server: str, tool: str, facts: dict[str, Any]
) -> None:
    schema = {
        "type": "object",
        "properties": {
            name: {"type": "string", "description": said}
            for name, said in facts["properties"].items()
        },
    }
    described = subject(name=tool, description=facts["description"], input_schema=schema)
    check = CHECKS["no-hidden-instructions"]
    assert check.violations(described, None, CheckContext(settings=Settings())) == ()


class _Session:
    """What _payloads reads of a session: the tool's schema, and its validators."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.subject = subject(input_schema=schema)
        self.context = CheckContext(settings=Settings())


def test_payloads_go_only_where_the_schema_lets_them() -> None:
    schema = {
        "type": "object",
        "properties": {
            "host": {"type": "string"},
            "port": {"type": "string", "pattern": "^[0-9]+$"},
            "mode": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 100}},
            "note": {"type": "string", "description": "left out of the input"},
        },
    }
    base = {"host": "h", "port": "80", "mode": "a", "tags": ["x"]}
    places = _payloads._places(_Session(schema), base)  # type: ignore[arg-type]
    assert [str(place) for place in places] == ["['host']", "['tags'][0]", "['note']"]


def test_each_place_names_the_canary_with_a_token_of_its_own() -> None:
    base = {"host": "h", "tags": ["x", "y"]}
    places = [_payloads._Place(path, value) for path, value in strings_in(base)]
    named = _payloads._named("axm-0", places)
    filled = _payloads._filled(base, named, "{value}$({canary})")
    assert filled == {
        "host": f"h$({_canary.invocation('axm-0-0')})",
        "tags": [f"x$({_canary.invocation('axm-0-1')})", f"y$({_canary.invocation('axm-0-2')})"],
    }
    assert base == {"host": "h", "tags": ["x", "y"]}  # the input it came from is left alone


def test_the_canary_is_named_by_a_path_a_shell_reads_as_one_word() -> None:
    assert _canary.unusable() == ""
    assert _canary.invocation("t").split() == ["sh", _canary.SCRIPT, "t"]
