"""The errors the kit raises on purpose, under one base class.

Catch :class:`AxmConformanceError` to handle any of them: a setting or option the kit cannot
take (``SettingsError``), a tool reference it cannot load (``LoadError``), a schema the
strategies cannot draw from, a certificate, record or baseline it cannot read, a server that
breaks the wire. Each names what was wrong and how to fix it. What a tool raises is never one:
the kit reports a tool's exceptions as findings.
"""

from __future__ import annotations

__all__ = ["AxmConformanceError"]


class AxmConformanceError(Exception):
    """The base of every error the kit raises on purpose."""
