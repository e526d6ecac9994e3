"""Certify a JSON Schema validator: the official test suite, then differential fuzzing.

A validator is any function called as ``validator(data, schema)`` that returns a verdict (a
`bool`, an object with a boolean ``.valid``, or a list of errors). It is named by a reference
``module:function`` (`load_validator`), certified for one draft (`DRAFTS`: 4, 6, 7, 2019-09,
2020-12; a schema of a draft before 2020-12 declares it in ``$schema``) and for the keywords it
claims, a list such as ``["type", "required", "maxLength"]`` (``None``: every keyword). Two
engines, neither of which needs pytest:

- `run_suite`: the draft's JSON-Schema-Test-Suite, one table row per suite file.
- `differential`: Hypothesis draws small schemas that use one keyword (`schemas_using`) and
  instances, which the `Oracle` judges: jsonschema of the same draft, following the
  specification where jsonschema does not (ECMA-262 regular expressions, numbers as the JSON
  text's exact value). Each kind of disagreement is shrunk to a minimal ``(schema, instance)``
  pair; one the specification leaves room for is ``ambiguous``, and one where a third validator
  (jsonschema-rs) agrees with the validator against the oracle is the oracle's.

Either engine takes the validator as a function, a reference, or an `IsolatedValidator`, which
judges in a worker process with a per-call timeout. `format_table` prints both as one table;
`format_failures` and `format_disagreement` explain a failure. The adapters
`jsonschema_validate`, `jsonschema_rs_validate` and `fastjsonschema_validate` make other
implementations certifiable by reference, e.g.
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
    judge_pair,
)
from axm_conformance._validation._format import (
    format_disagreement,
    format_failures,
    format_table,
)
from axm_conformance._validation._isolation import IsolatedValidator
from axm_conformance._validation._load import (
    ValidatorLike,
    load_keywords,
    load_validator,
    verdict,
)
from axm_conformance._validation._oracle import DRAFTS, Oracle
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
    "DRAFTS",
    "FUZZED_KEYWORDS",
    "Case",
    "CaseResult",
    "DifferentialReport",
    "Disagreement",
    "IsolatedValidator",
    "KeywordRow",
    "LeftOut",
    "LoadError",
    "Oracle",
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
    "judge_pair",
    "load_keywords",
    "load_validator",
    "run_suite",
    "schemas_using",
    "suite_cases",
    "verdict",
]
