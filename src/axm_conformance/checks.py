"""What a check is written with: the interface the kit's own checks use, its MCP protocol's
included, and any third party's (``conformance/custom-checks.md``).

- `check` registers a function as a check (its id, group, what it considers, where it applies);
- a check yields its findings: a string is a failure, and `failure`, `warning`, `note` and
  `not_run` say the severity outright; `Found` is the type of what a check yields;
- `SubjectInfo` is the tool as the kit described it, `Call` one call with its `observation`,
  `CheckContext` the run's settings and the calls made so far;
- `first_few` yields the first findings of many and how many more there are, `listed` joins
  names for a sentence, and `input_unusable` is the `applies` of a check that needs a valid
  input (why none can be made, when a schema check explains it).
"""

from __future__ import annotations

from axm_conformance._checks._registry import CheckContext, Found, check, first_few
from axm_conformance._checks.schema import input_unusable
from axm_conformance._observation import Call, Observation, SubjectInfo
from axm_conformance._outcomes import Finding, failure, listed, not_run, note, warning

__all__ = [
    "Call",
    "CheckContext",
    "Finding",
    "Found",
    "Observation",
    "SubjectInfo",
    "check",
    "failure",
    "first_few",
    "input_unusable",
    "listed",
    "not_run",
    "note",
    "warning",
]
