"""Successes that are refusals by how the tool answers, in whatever language: one text given
to many distinct inputs.

The kit tells an error in disguise by the forms errors take (an error label, a JSON status
field, an exception's repr: see :mod:`axm_conformance._disguise`) and by the forms of the
errors the tool reported as such; all of them written in English, or in the tool's own words.
A tool that answers "任务未找到" (task not found) as a success, to every id it does not know, is
told by its behaviour instead: the same text, word for word, answers many distinct inputs
(the input is not in it), while the tool answers other inputs otherwise, with texts of their
own (the tasks it finds, two at least): the text is what it says when it has nothing for the
input.

A tool that answers every input with one text is not told apart so: its answer may not depend
on the input at all (mcp-server-git's ``git_status`` reports the one repository it serves,
whatever path it is given; a listing of allowed directories ignores what it is passed), or
acknowledge each call ("saved"). Its calls stay served. A text that is a JSON value
(``{"count": 0}``, ``[]``, ``0``) is an answer, never a refusal by form; so is one with no letter
in it. Refusals by form are counted as refused, not served; no check fails on them, as on any
error in disguise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

__all__ = ["refusal_forms"]

# How many distinct inputs one text must answer to be a form rather than an answer.
_MANY = 8
# How many other texts the tool must answer with (each to fewer inputs) for the form to stand
# out: its answers to the inputs it has something for.
_OWN_WAY = 2


def refusal_forms(answered: Mapping[str, set[str]]) -> set[str]:
    """The texts among a tool's successes that are its refusals by form; ``answered`` gives,
    for each text it answered as a success, the distinct inputs it answered with it."""
    many = {text for text, inputs in answered.items() if len(inputs) >= _MANY and _prose(text)}
    own_way = sum(len(inputs) < _MANY for inputs in answered.values())
    return many if own_way >= _OWN_WAY else set()


def _prose(text: str) -> bool:
    """Whether a text is words, not a JSON value."""
    if not any(character.isalpha() for character in text):
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False
