"""Draws that take no constants from the modules the kit happens to have imported.

Hypothesis (since 6.131) mixes into its draws the literals of every imported module it deems
local: not in ``site-packages``, not the standard library, not named as a test. With the kit
installed editable, every module of the kit is local, and its own strings ("file:///etc/passwd"
of a guard probe, "--axm-tool") were sent to tools as inputs; so would a project's plugins and
helpers be. The inputs, and so the verdict, would then depend on how the kit was installed and
on what else the process imported. The tool's own literals are given to the kit's strategies
explicitly, as hints (see :mod:`axm_conformance._process.child._literals`), so nothing is lost by
leaving Hypothesis' local constants out.

Hypothesis has no setting for this: while the kit draws, its provider's look-up of local
constants (``providers._get_local_constants``, read when a provider first wants one) is replaced
by one that finds none, and the cache of permitted constants is emptied on the way in and out.
Its global constants (the edge cases it keeps for every test) are untouched. On a Hypothesis
without local constants this does nothing.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any

__all__ = ["without_local_constants"]


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Within the block, Hypothesis draws no constant of a module of this process."""
    try:
        # Private modules of Hypothesis, only where it has local constants (6.131 on).
        providers = importlib.import_module("hypothesis.internal.conjecture.providers")
        constants = importlib.import_module("hypothesis.internal.constants_ast")
    except ImportError:
        yield
        return
    found = getattr(providers, "_get_local_constants", None)
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if found is None or cache is None:
        yield
        return
    empty = constants.Constants()

    def none_local() -> Any:
        return empty

    setattr(providers, "_get_local_constants", none_local)  # noqa: B010 - a module's private name
    cache.cache.clear()
    try:
        yield
    finally:
        setattr(providers, "_get_local_constants", found)  # noqa: B010
        cache.cache.clear()
