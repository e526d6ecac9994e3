"""Run a validator in a worker process, with the per-call timeout and the crash, hang and memory
handling tools get (`axm_conformance._process.parent._worker`).

`IsolatedValidator` judges each pair in its worker: a validator that hangs on one schema is
killed after the timeout, the pair is reported `Crashed`, and the next call gets a fresh worker.
"""

from __future__ import annotations

from typing import Any

from axm_conformance._process.parent._worker import Worker, WorkerConfig
from axm_conformance._settings import Settings
from axm_conformance._validation._load import Crashed, ValidatorFn, judge, load_validator

__all__ = ["IsolatedValidator", "judge_loaded", "load"]

_JUDGE = "axm_conformance._validation._isolation:judge_loaded"


def load(ref: str) -> ValidatorFn:
    """The worker's setup: the validator a reference names, the state every call gets."""
    return load_validator(ref)


def judge_loaded(function: ValidatorFn, data: Any, schema: Any) -> bool | str:
    """The worker's target: the verdict, or the one-line error, as `judge` gives them."""
    return judge(function, data, schema)


class IsolatedValidator:
    """A validator named by reference, judged in a worker process of its own.

    Its worker starts on the first call and is closed by `close` (or with the object).
    """

    def __init__(self, ref: str, settings: Settings) -> None:
        self.ref = ref
        self.timeout = settings.timeout
        self._worker = Worker(
            WorkerConfig(
                timeout=settings.timeout,
                sys_path=settings.sys_path,
                memory_limit=settings.memory_limit,
                user=settings.worker_user,
                setup="axm_conformance._validation._isolation:load",
                setup_args=(ref,),
            )
        )

    def judge(self, data: Any, schema: Any) -> bool | str:
        """`judge` in the worker; raises `Crashed` when the worker timed out or died."""
        outcome = self._worker.call(_JUDGE, data, schema)
        if outcome.crash is not None:
            raise Crashed(f"{outcome.crash.kind}: {outcome.crash.detail}")
        if outcome.error is not None:  # the setup failed: the validator cannot be loaded
            raise Crashed(f"{outcome.error.type_name}: {outcome.error.message}")
        answer: bool | str = outcome.value
        return answer

    def close(self) -> None:
        self._worker.close()
