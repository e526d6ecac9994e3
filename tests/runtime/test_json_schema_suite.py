"""The official JSON-Schema-Test-Suite (draft 2020-12) against the tool_use validator (jsonschema,
its regular expressions ECMA-262).

Cases are selected from the suite files, not by hand, as the kit's validator certifier selects
them for a validator claiming ``SUPPORTED_KEYWORDS``: a test group runs when every keyword its
schema uses is claimed or never constrains (annotations and ``$defs`` containers). The only groups
left out are those that need something the validator does not claim: another keyword, a ``$ref``
that leaves the schema document, or another dialect.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from axm_conformance._validation._suite import Case, _select
from axm_runtime.tool_use import SUPPORTED_KEYWORDS, validate_input

SEED_KEYWORDS = [
    "type",
    "required",
    "properties",
    "items",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "additionalProperties",
]

# The selection the kit's validator certifier makes for a validator claiming these keywords.
CASES, LEFT_OUT = _select(SUPPORTED_KEYWORDS, "2020-12")
# 1,246 cases are selected from the suite as stored; the floor (90%) catches a selection that
# silently shrinks.
MINIMUM_SELECTED = 1121


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_suite_case(case: Case) -> None:
    result = validate_input(case.data, case.schema)
    assert result.valid is case.valid, (
        f"expected {'valid' if case.valid else 'invalid'}; errors: {result.errors}\n"
        f"schema: {json.dumps(case.schema)}\ndata: {json.dumps(case.data)}"
    )
    assert bool(result.errors) is not case.valid


def test_every_seed_keyword_is_covered() -> None:
    per_file = Counter(case.file for case in CASES)
    for name, count in sorted(per_file.items()):
        print(f"{name}: {count} cases")
    print(f"total: {len(CASES)} cases selected")
    for left in LEFT_OUT:
        print(f"left out {left.file}: {left.group!r}: needs {', '.join(left.needs)}")
    assert {keyword: per_file[keyword] for keyword in SEED_KEYWORDS if not per_file[keyword]} == {}
    assert len(CASES) >= MINIMUM_SELECTED
