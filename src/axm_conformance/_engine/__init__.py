"""The engine: certify one tool by running every selected check, sharing calls between them.

Its phases each own a module: the session that calls the tool and lets every check judge each
call (valid and invalid inputs, variations of refused ones, probes, shrinking and confirmation,
the verdict), and the exploration of the tool among the other tools of its server or package.
"""

from axm_conformance._engine._session import CALL_KINDS, Progress, certify, hints_for

__all__ = ["CALL_KINDS", "Progress", "certify", "hints_for"]
