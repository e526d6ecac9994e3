"""``tox -e floors`` runs the fast tests on the lowest versions ``pyproject.toml`` allows of
the libraries whose APIs the kit reads most: the versions it pins are the declared floors."""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
FLOORS = ROOT / "tests" / "floors.txt"


def declared_floors() -> dict[str, Version]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    found = (re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", dep) for dep in project["dependencies"])
    return {match[1]: Version(match[2]) for match in found if match}


def pinned() -> dict[str, Version]:
    lines = FLOORS.read_text(encoding="utf-8").splitlines()
    pins = (line.split("==") for line in lines if line and not line.startswith("#"))
    return {name: Version(version) for name, version in pins}


def test_the_floors_environment_pins_the_declared_floors() -> None:
    floors, pins = declared_floors(), pinned()
    assert {"hypothesis", "pytest", "jsonschema", "hypothesis-jsonschema"} <= set(pins)
    assert pins == {name: floors[name] for name in pins}


def test_the_floors_environment_installs_them_as_constraints() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    assert "tests{/}floors.txt" in tox["testenv:floors"]["set_env"]
    assert "floors" in tox["tox"]["env_list"]
