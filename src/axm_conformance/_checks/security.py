"""Security checks: whether a tool can be turned against the machine it runs on, judged by what
its calls do in the sandbox, and whether its descriptions hide instructions from the person.

Effects are judged, not words: a payload that runs the kit's canary program is a command the
input ran, whatever the tool answered (see the engine's _payloads and the process side's
_canary). What a description says is judged by local, deterministic rules alone: text a person
reading the description cannot see, and instructions that address the model against the
person (to keep something from them, to put other instructions aside).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from axm_conformance._checks._registry import CheckContext, Found, check
from axm_conformance._checks.behaviour import effects_unseen
from axm_conformance._feeds import OPTION_TOKEN, PAYLOADS, SHELL_TOKEN
from axm_conformance._jsonable import JsonPath, shown_path, strings_in
from axm_conformance._observation import Call, SubjectInfo
from axm_conformance._outcomes import warning

__all__: list[str] = []


@check(
    "no-injected-exec",
    "security",
    applies=effects_unseen,
    considers=("returned", "raised"),
    feed=PAYLOADS,
)
def no_injected_exec(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """No string of an input is run as a command past the words the tool put it in."""
    for path, value, token in _took_effect(call, SHELL_TOKEN):
        yield (
            f"the input{shown_path(path)} ran as a command past the words the tool put it in: "
            f"{value!r} ran the kit's canary program ({token})"
        )


@check(
    "no-option-injection",
    "security",
    applies=effects_unseen,
    considers=("returned", "raised"),
    feed=PAYLOADS,
)
def no_option_injection(subject: SubjectInfo, call: Call, context: CheckContext) -> Found:
    """No string of an input is read as an option by a program the tool runs."""
    # A read-only tool that an option makes write breaks its word too.
    declared = " (it declares readOnlyHint)" if subject.annotations.get("readOnlyHint") else ""
    for path, value, token in _took_effect(call, OPTION_TOKEN):
        ran = token in _ran(call)
        effect = "ran the kit's canary program" if ran else f"wrote a file named {token}{declared}"
        yield (
            f"the input{shown_path(path)} was read as an option by a program the tool runs: "
            f"{value!r} {effect}"
        )


def _took_effect(call: Call, kind: str) -> Iterator[tuple[JsonPath, str, str]]:
    """The strings of the call's input whose payload of ``kind`` took effect: each with its
    path and the token its effect named."""
    named = call.observation.named_by_effects()
    for path, value in strings_in(call.input):
        for token in sorted(named):
            # A token ends where no digit follows: axm-shell-0-1 is not in axm-shell-0-10.
            if token.startswith(f"{kind}-") and re.search(rf"{re.escape(token)}(?!\d)", value):
                yield path, value, token


def _ran(call: Call) -> set[str]:
    """The tokens the kit's canary program ran with during the call."""
    return {token for effect in call.observation.side_effects for token in effect.tokens}


# Characters a person does not see: Unicode's tag characters (which spell ASCII invisibly), and
# the controls of text direction, which show text in another order than the model reads it.
_TAGS = range(0xE0000, 0xE0080)
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Joiners and zero-width characters, which scripts and emoji sequences use between the
# characters they join: hidden only between ASCII characters, or alone.
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\u180e\ufeff")
# A black flag, the one base tag characters follow in an emoji (a subdivision's flag).
_FLAG = "\U0001f3f4"

# Instructions addressed to the model against the person: to keep something from them, to put
# every other instruction aside, and the pseudo-markup tool poisoning wraps them in.
_ADDRESSED = (
    (
        "tells the model to keep something from the user",
        re.compile(
            r"\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|disclose|notify|"
            r"alert|show)\b[^.\n]{0,80}\buser|\bwithout\s+(?:telling|informing|notifying|"
            r"alerting)\s+the\s+user",
            re.IGNORECASE,
        ),
    ),
    (
        "tells the model to put other instructions aside",
        re.compile(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?(?:previous|"
            r"prior|above|earlier|other|system)\s+(?:instructions|directions|prompts|rules)",
            re.IGNORECASE,
        ),
    ),
    (
        "wraps text in markup addressed to the model",
        re.compile(
            r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>",
            re.IGNORECASE,
        ),
    ),
)


@check("no-hidden-instructions", "security")
def no_hidden_instructions(subject: SubjectInfo, context: CheckContext) -> Found:
    """The descriptions hide no text from the person and address the model against them."""
    for where, text in _descriptions(subject):
        for problem in (*_invisible(text), *_addressed(text)):
            yield warning(f"{where} {problem}")


def _descriptions(subject: SubjectInfo) -> Iterator[tuple[str, str]]:
    """The texts the model reads about the tool: its description, and the descriptions and
    titles in its input schema."""
    if isinstance(subject.description, str):
        yield "the description", subject.description
    yield from _schema_texts(subject.input_schema, ())


def _schema_texts(schema: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("description", "title") and isinstance(value, str):
                yield f"the input schema's {'/'.join((*path, key))}", value
            else:
                yield from _schema_texts(value, (*path, str(key)))
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _schema_texts(item, (*path, str(index)))


def _invisible(text: str) -> Iterator[str]:
    """What ``text`` holds that a person does not see, with the text it spells."""
    tags = "".join(
        chr(ord(char) - 0xE0000)
        for index, char in enumerate(text)
        if ord(char) in _TAGS and _FLAG not in text[max(index - 8, 0) : index]
    )
    if tags:
        yield f"holds text in invisible tag characters: {tags!r}"
    bidi = sorted({f"U+{ord(char):04X}" for char in text if char in _BIDI})
    if bidi:
        yield f"holds controls of text direction ({', '.join(bidi)}), which reorder what is shown"
    hidden = sorted(
        {
            f"U+{ord(char):04X}"
            for index, char in enumerate(text)
            if char in _ZERO_WIDTH and not _joins(text, index)
        }
    )
    if hidden:
        yield f"holds zero-width characters ({', '.join(hidden)}) between visible ASCII text"


def _joins(text: str, index: int) -> bool:
    """Whether the zero-width character at ``index`` joins two characters that are not ASCII
    (an emoji sequence, a script that needs it) rather than hiding between plain text."""
    before, after = text[index - 1 : index], text[index + 1 : index + 2]
    if text[index] == "\ufeff" and index == 0:
        return True  # a byte order mark
    return (
        bool(before and after)
        and not before.isascii()
        and not after.isascii()
        and (unicodedata.category(before)[0] != "C")
    )


def _addressed(text: str) -> Iterator[str]:
    for said, pattern in _ADDRESSED:
        found = pattern.search(text)
        if found:
            yield f"{said}: {found.group(0)!r}"
