"""What a program installed in a private temporary directory needs to run in a sandbox.

A sandbox hides the machine's ``/tmp`` and ``/var/tmp`` behind fresh ones of its own, and shows
again only what a process is known to read. A command, a script or a PATH entry that lies in one
of them is rarely alone: CI systems, tox and throw-away checkouts put whole installations there.
A Python console script needs the virtual environment it belongs to (its ``pyvenv.cfg``, which
tells the interpreter where ``site-packages`` is); a program run from ``node_modules/.bin`` is a
link into its package, which resolves its modules from every ``node_modules`` above it; a link
anywhere on the way must stay a link, for node and Python both find their files from where the
link points. :func:`installation` names all of that, for the sandbox to show read-only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["Shown", "installation", "within"]

# A chain of links longer than this is a loop, or nothing any installation needs.
_MOST_LINKS = 40


@dataclass
class Shown:
    """What a sandbox shows of its private temporary directories: ``paths`` bound read-only
    (each existing, none inside another), ``links`` made again as links (location, target)."""

    paths: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)


def installation(paths: Iterable[str], private: Sequence[str]) -> Shown:
    """What the absolute ``paths`` that lie in one of the ``private`` directories bring with
    them: each path, the links on its way (made again where no directory shown holds them),
    the virtual environment it belongs to, and every ``node_modules`` above it with the
    ``package.json`` beside it."""
    roots = sorted({os.path.normpath(d) for d in private} | {os.path.realpath(d) for d in private})
    wanted: set[str] = set()
    links: dict[str, str] = {}
    for path in paths:
        if os.path.isabs(path) and _under(os.path.normpath(path), roots):
            _follow(os.path.normpath(path), roots, wanted, links)
    shown = Shown()
    for path in sorted(wanted):
        if os.path.exists(path) and not any(within(path, outer) for outer in shown.paths):
            shown.paths.append(path)
    shown.links = [
        (link, target)
        for link, target in sorted(links.items())
        if not any(within(link, outer) for outer in shown.paths)
    ]
    return shown


def _follow(path: str, roots: list[str], wanted: set[str], links: dict[str, str]) -> None:
    """Add what ``path`` needs: walk it one component at a time, noting each link and going on
    from its target, then the installation around where it ends."""
    for _ in range(_MOST_LINKS):
        link = _first_link(path)
        if link is None:
            break
        target = os.readlink(link)
        rest = os.path.relpath(path, link)
        if _under(link, roots):
            links[link] = target
        resolved = os.path.normpath(os.path.join(os.path.dirname(link), target))
        path = resolved if rest == os.curdir else os.path.join(resolved, rest)
    if not _under(path, roots):
        return  # the machine's own filesystem: shown as it is
    wanted.add(path)
    wanted.update(_around(path, roots))


def _first_link(path: str) -> str | None:
    """The first prefix of ``path`` (itself included) that is a symbolic link."""
    prefix = os.sep
    for part in path.strip(os.sep).split(os.sep):
        prefix = os.path.join(prefix, part)
        if os.path.islink(prefix):
            return prefix
    return None


def _around(path: str, roots: list[str]) -> list[str]:
    """The installation ``path`` lies in, read from its folders up to its private directory:
    the nearest one holding ``pyvenv.cfg`` (a virtual environment), and every ``node_modules``
    with its ``package.json`` (where node looks for modules, from the innermost up)."""
    found: list[str] = []
    venv_found = False
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    while _under(directory, roots) and directory not in roots:
        if not venv_found and os.path.isfile(os.path.join(directory, "pyvenv.cfg")):
            found.append(directory)
            venv_found = True
        modules = os.path.join(directory, "node_modules")
        if os.path.basename(directory) != "node_modules" and os.path.isdir(modules):
            found += [modules, os.path.join(directory, "package.json")]
        directory = os.path.dirname(directory)
    return found


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(within(path, root) for root in roots)


def within(path: str, outer: str) -> bool:
    """Whether ``path`` is ``outer`` or lies inside it."""
    return path == outer or path.startswith(outer.rstrip(os.sep) + os.sep)
