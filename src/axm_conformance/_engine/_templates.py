"""Refusals told by behaviour, in whatever language: one answer a tool gives as a success to many
inputs nothing made, and not to the values other tools of its home made.

The kit tells an error in disguise by the forms errors take (see :mod:`axm_conformance._disguise`)
and by the forms of the errors the tool reported as such: English, or the tool's own words. A
server that answers "未找到任务 x-17" (task x-17 not found) as a success, to every id it does not
know, is told by what it does instead. With the strings of its input taken out of each answer
(what the tool echoes) and its digits, the answers to the inputs the kit drew collapse into one
template, while the values other tools made (an id a creator returned, a name a lister listed)
are answered otherwise: the template is what the tool says when it has nothing for the input.

Where the values other tools made get the same template (an acknowledgement, "Successfully wrote
to PATH"; an answer the input does not change, the status of the one repository), or none of
them was served, no template is a refusal: one sentence for many inputs is as often an answer.
A template that is a JSON value, or has no letter once what it echoes is taken out (an empty
list, a count of 0, the input capitalised), is an answer, never a refusal; so is a long one (a
refusal is a sentence).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from axm_conformance._jsonable import canonical_json
from axm_conformance._observation import Alike, Call, ResultModel

__all__ = ["Template", "Templates"]

# Distinct inputs the kit drew that one template must answer to be a form, not an answer.
_MANY = 3
# A refusal answers at most this many calls with values other tools made for each such call
# answered otherwise (a value made is not always one the tool has: a listing's whole text).
_OUTWEIGHS = 4
# How alike two answers may be and still be told apart (difflib's ratio).
_ALIKE = 0.5
# The shortest string of an input taken out of an answer wherever it is (shorter ones are
# letters and words any answer has: taken out only where they stand alone).
_ECHO = 3
# The longest answer that can be a refusal, in characters.
_LONGEST = 300
# Digits, and the marks of echoes beside them, as one mark.
_DIGITS = re.compile(r"\d+")


@dataclass
class Template:
    """The answers of one template: the distinct inputs the kit drew that got it (by hash), and
    those among them it echoed, how many calls with values other tools made got it, and the
    first call and what it said."""

    text: str
    said: str
    first: Call
    calls: int = 0
    drawn: set[int] = field(default_factory=set)
    echoed: set[int] = field(default_factory=set)
    made: int = 0


@dataclass
class Templates:
    """A tool's served answers by template (see the module)."""

    by_text: dict[str, Template] = field(default_factory=dict)

    def add(self, call: Call, model: ResultModel, source: str) -> None:
        """Keep a served call's answer, its input drawn from ``source``."""
        assert call.observation.result is not None
        said = model.says(call.observation.result, limit=_LONGEST + 1)
        text, echoed = template(said, call.input)
        kept = self.by_text.get(text)
        if kept is None:
            kept = self.by_text[text] = Template(text, said, call)
        kept.calls += 1
        if source == "tool-output":
            kept.made += 1
            return
        drawn = hash(canonical_json(call.input))
        kept.drawn.add(drawn)
        if echoed:
            kept.echoed.add(drawn)

    def refusals(self) -> list[Template]:
        """The templates that are refusals: each answers at least _MANY distinct inputs the kit
        drew, naming them (a refusal says what it refuses: "no record 7"; "(no output)" and
        "no results" name nothing), and is words, while calls with values other tools made
        were answered otherwise (see _otherwise), at least once for every _OUTWEIGHS calls of
        them it answered."""
        return [
            kept
            for kept in self.by_text.values()
            if len(kept.echoed) >= _MANY
            and _words(kept)
            and (otherwise := sum(other.made for other in self._otherwise(kept))) > 0
            and _OUTWEIGHS * otherwise >= kept.made
        ]

    def _otherwise(self, kept: Template) -> list[Template]:
        """The answers no drawn input got, given to values other tools made, that are not the
        words of ``kept`` told a little otherwise ("1 word" beside "2 words")."""
        return [
            other
            for other in self.by_text.values()
            if other.made
            and not other.drawn
            and difflib.SequenceMatcher(None, other.text, kept.text).ratio() < _ALIKE
        ]

    def alike(self, refusal: Template) -> Call:
        """The first call a refusal answered, told how it answered the others (see Alike)."""
        otherwise = max(self._otherwise(refusal), key=lambda kept: kept.made)
        told = Alike(len(refusal.drawn), refusal.calls, otherwise.said[:100])
        return dataclasses.replace(refusal.first, alike=told)


def template(said: str, value: Any) -> tuple[str, bool]:
    """What an answer says with the strings and whole numbers of the input that gave it taken
    out (in any case), and its digits (an id, a count), each replaced by one mark, and its
    spaces left out; and whether it echoed any of them. A string shorter than _ECHO is taken out
    only where it stands alone (not the "a" of "named")."""
    # As the answer is read: on one line.
    text = " ".join(said.split())
    strings = {" ".join(string.split()) for string in _strings(value)}
    echoes = 0
    for string in sorted(strings, key=len, reverse=True):
        if len(string) >= _ECHO:
            text, found = re.subn(re.escape(string), "0", text, flags=re.IGNORECASE)
        elif string:
            alone = rf"(?<!\w){re.escape(string)}(?!\w)"
            text, found = re.subn(alone, "0", text, flags=re.IGNORECASE)
        else:
            found = 0
        echoes += found
    return "".join(_DIGITS.sub("0", text).split()), echoes > 0


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, int) and not isinstance(value, bool):
        yield str(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _words(kept: Template) -> bool:
    """Whether a template can be a refusal: words of its own beside what it echoes (an answer
    that is its input, capitalised, is none), short, and not a JSON value."""
    if len(kept.said) > _LONGEST or not any(character.isalpha() for character in kept.text):
        return False
    try:
        json.loads(kept.said)
    except ValueError:
        return True
    return False
