"""The engine: certify one tool by running every selected check, sharing calls between them.

Its phases each own a module, behind :func:`certify` (``_certify``), around the session that calls
the tool through a caller (``_caller``: the worker, or a fake in the kit's tests) and lets every
check judge each call (``_session``; each check's tally in ``_runs``): the valid and the invalid
inputs (``_inputs``, with the hints of ``_hints``); the variations of refused valid inputs, and
the bounds they hide (``_varying``); the calls after other tools of its home (``_stateful``); the
probes (``_probes``); shrinking and confirmation (``_shrinking``); the verdict (``_verdict``).
"""

from axm_conformance._engine._certify import certify
from axm_conformance._engine._hints import hints_for
from axm_conformance._engine._state import CALL_KINDS, Progress

__all__ = ["CALL_KINDS", "Progress", "certify", "hints_for"]
