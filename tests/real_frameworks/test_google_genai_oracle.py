"""The Google GenAI SDK as an oracle of the ``gemini-parameters`` profile, on every fixture
declaration of ``fixtures/client_rules.py``.

The SDK converts a JSON Schema into Gemini's OpenAPI ``Schema`` (what ``parameters`` carries),
rewriting what ``parameters`` cannot say (it drops ``additionalProperties``, inlines ``$ref``,
folds a list of types into ``nullable``) and refusing what it cannot convert. So it agrees with
the profile one way: what it refuses, the profile finds too (but for an OpenAPI keyword, which
is no JSON Schema to begin with), and what the profile passes, it converts. Run by
``tox -e frameworks``, which installs google-genai.
"""

from __future__ import annotations

from typing import Any

import pytest

from axm_conformance._clients import PROFILES, breaches
from client_rules import CASES

genai_types = pytest.importorskip("google.genai.types", reason="tox -e frameworks installs it")

# Gemini's own keywords, which a JSON Schema converter rightly does not know.
OPENAPI_ONLY = ("nullable", "example", "propertyOrdering")


def refusal(schema: Any) -> str:
    """Why the SDK cannot convert the schema into Gemini's Schema ("" when it can)."""
    try:
        given = genai_types.JSONSchema.model_validate(schema)
        genai_types.Schema.from_json_schema(
            json_schema=given, api_option="GEMINI_API", raise_error_on_unsupported_field=True
        )
    except (ValueError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
        return f"{type(exc).__name__}: {exc}"
    return ""


@pytest.mark.parametrize(("rule", "name", "schema", "broken"), CASES, ids=range(len(CASES)))
def test_what_the_sdk_refuses_the_profile_finds(
    rule: str, name: str, schema: Any, broken: bool
) -> None:
    refused = refusal(schema)
    found = list(breaches(PROFILES["gemini-parameters"], name, schema))
    if refused and not any(keyword in str(schema) for keyword in OPENAPI_ONLY):
        assert found, f"google-genai refuses it ({refused[:200]}); the profile passes it"
    if not found:
        assert not refused or any(keyword in str(schema) for keyword in OPENAPI_ONLY), refused
