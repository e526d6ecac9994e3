"""Certify a JSON Schema validator: the official test suite, then differential fuzzing.

A validator is any function called as ``validator(data, schema)`` that returns a verdict (a
`bool`, an object with a boolean ``.valid``, or a list of errors). It is named by a reference
``module:function`` (`load_validator`), and certified for the keywords it claims, a list such as
``["type", "required", "maxLength"]`` (``None``: every keyword). Two engines, neither of which
needs pytest:

- `run_suite`: the JSON-Schema-Test-Suite for draft 2020-12, one table row per suite file.
- `differential`: Hypothesis draws small schemas that use one keyword (`schemas_using`) and
  instances jsonschema calls valid or invalid; each kind of disagreement is shrunk to a minimal
  ``(schema, instance)`` pair.

`format_table` prints both as one table; `format_failures` and `format_disagreement` explain a
failure. The adapters `jsonschema_validate`, `jsonschema_rs_validate` and
`fastjsonschema_validate` make other implementations certifiable by reference, e.g.
``axm_conformance._validation:jsonschema_rs_validate``. The pytest plugin
(``_validation._pytest.ValidatorPlugin``, which alone imports pytest) runs it all, one item per
(validator, keyword, engine).
"""

from axm_conformance._refs import LoadError
from axm_conformance._validation._adapters import (
    fastjsonschema_validate,
    jsonschema_rs_validate,
    jsonschema_validate,
)
from axm_conformance._validation._differential import (
    DifferentialReport,
    Disagreement,
    differential,
)
from axm_conformance._validation._format import (
    format_disagreement,
    format_failures,
    format_table,
)
from axm_conformance._validation._load import (
    ValidatorLike,
    load_keywords,
    load_validator,
    verdict,
)
from axm_conformance._validation._schemas import (
    FUZZED_KEYWORDS,
    differential_keywords,
    schemas_using,
)
from axm_conformance._validation._suite import (
    Case,
    CaseResult,
    KeywordRow,
    LeftOut,
    SuiteReport,
    run_suite,
    suite_cases,
)

__all__ = [
    "FUZZED_KEYWORDS",
    "Case",
    "CaseResult",
    "DifferentialReport",
    "Disagreement",
    "KeywordRow",
    "LeftOut",
    "LoadError",
    "SuiteReport",
    "ValidatorLike",
    "differential",
    "differential_keywords",
    "fastjsonschema_validate",
    "format_disagreement",
    "format_failures",
    "format_table",
    "jsonschema_rs_validate",
    "jsonschema_validate",
    "load_keywords",
    "load_validator",
    "run_suite",
    "schemas_using",
    "suite_cases",
    "verdict",
]
