"""Reading what a worker sent back: only plain builtin types and the trusted modules' classes
are unpickled, so a value cannot make the kit's process import, let alone run, a tool's code.
"""

from __future__ import annotations

import io
import pickle
import traceback
from typing import IO, Any

from axm_conformance._process._channel import error_type
from axm_conformance._process._records import Answer, RemoteError

__all__ = ["loads", "unpickle_value"]

# Globals a reply may name besides those of the trusted modules: plain types only.
_SAFE_BUILTINS = frozenset(
    {"bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list"}
    | {"range", "set", "slice", "str", "tuple"}
)


class _Unpickler(pickle.Unpickler):
    """Unpickles only plain builtin types and the trusted modules' classes and functions."""

    def __init__(self, file: IO[bytes], trusted: tuple[str, ...]) -> None:
        super().__init__(file)
        self.trusted = trusted

    def find_class(self, module: str, name: str) -> Any:
        if (module == "builtins" and name in _SAFE_BUILTINS) or any(
            module == prefix or module.startswith(prefix + ".") for prefix in self.trusted
        ):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refused to load {module}.{name}: only plain builtin types and the trusted modules "
            f"({', '.join(self.trusted) or 'none'}) may be sent by the worker"
        )


def loads(body: bytes | bytearray, trusted: tuple[str, ...]) -> Any:
    return _Unpickler(io.BytesIO(body), trusted).load()


def unpickle_value(target: str, body: bytearray, trusted: tuple[str, ...]) -> Answer:
    try:
        return Answer(value=loads(body, trusted))
    except Exception as exc:
        message = f"the return value of {target} could not be unpickled by the parent: {exc}"
        return Answer(error=RemoteError(error_type(exc), message, traceback.format_exc()))
