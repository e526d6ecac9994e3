"""Refusals told by behaviour: one template of words for the inputs the kit drew, other answers
for the values other tools made; acknowledgements, counts and JSON answers are not refusals."""

from __future__ import annotations

from collections.abc import Iterable

from axm_conformance._engine._templates import Templates, template
from axm_conformance._observation import Alike
from tests.unit.factories import STR_RESULT, call, returned, value


def _answered(answers: Iterable[tuple[str, str, str]]) -> Templates:
    """A tool's served calls: each input's ``name`` value, its answer, and where it came from."""
    kept = Templates()
    for name, said, source in answers:
        kept.add(call(returned(value(said)), input={"name": name}), STR_RESULT, source)
    return kept


def test_an_answer_loses_what_it_echoes_its_digits_and_its_spaces() -> None:
    assert template("记录 7 不存在", {"id": 7}) == template("记录 1003 不存在", {"id": 1003})
    assert template("没有名为「ab\ncd」的表", {"sheet": "ab\ncd"}) == ("没有名为「0」的表", True)
    # A short string is taken out where it stands alone, not inside a word.
    assert template("no sheet named a", {"sheet": "a"}) == ("nosheetnamed0", True)
    assert template("(no output)", {"code": "x = 1"}) == ("(nooutput)", False)


def test_one_template_for_drawn_inputs_that_made_values_escape_is_a_refusal() -> None:
    drawn = [(name, f"未找到任务 {name}", "generated") for name in ("x-1", "qq", "abc", "zz9")]
    made = [("t-7", "任务 t-7: buy milk, due Monday", "tool-output")]
    kept = _answered([*drawn, *made])
    [refusal] = kept.refusals()
    assert refusal.calls == 4
    told = kept.alike(refusal).alike
    assert told == Alike(4, 4, "任务 t-7: buy milk, due Monday")


def test_what_made_values_get_too_is_an_answer() -> None:
    # An acknowledgement: what the kit drew and what other tools made are answered alike.
    drawn = [(name, f"Successfully wrote to {name}", "generated") for name in ("a1", "b22", "c")]
    made = [(name, f"Successfully wrote to {name}", "tool-output") for name in ("notes", "log")]
    assert _answered([*drawn, *made]).refusals() == []


def test_an_answer_that_names_nothing_it_was_given_is_no_refusal() -> None:
    # A run of code that prints nothing, beside the errors of values other tools made.
    drawn = [(code, "(no output)", "generated") for code in ("x = 1", "pass", "", "y = 2")]
    made = [("drwxr-xr-x", "[stderr] sh: 1: drwxr-xr-x: Permission denied", "tool-output")]
    assert _answered([*drawn, *made]).refusals() == []


def test_no_value_made_no_refusal() -> None:
    drawn = [(name, "词汇表中没有这个词", "generated") for name in ("a", "b", "c", "d")]
    assert _answered(drawn).refusals() == []


def test_a_count_told_a_little_otherwise_for_a_made_value_is_an_answer() -> None:
    drawn = [(name, f"{len(name)} words", "generated") for name in ("one", "two", "three")]
    made = [("x", "1 word", "tool-output")]
    assert _answered([*drawn, *made]).refusals() == []


def test_an_answer_that_is_its_input_told_again_is_no_refusal() -> None:
    drawn = [(name, name.upper(), "generated") for name in ("A", "BB", "ccc", "dd")]
    made = [("done", "DONE", "tool-output"), ("x", "COMPLETE NOW", "tool-output")]
    assert _answered([*drawn, *made]).refusals() == []


def test_json_is_never_a_refusal() -> None:
    drawn = [(name, '{"entities": []}', "generated") for name in ("a", "b", "c")]
    made = [("Alice", '{"entities": [{"name": "Alice"}]}', "tool-output")]
    assert _answered([*drawn, *made]).refusals() == []


def test_made_values_mostly_given_the_template_do_not_show_it_refuses() -> None:
    drawn = [(name, f"no match for {name}", "generated") for name in ("aa", "bb", "cc")]
    made = [(name, f"no match for {name}", "tool-output") for name in ("x1", "x2", "x3", "x4")]
    made += [(name, f"no match for {name}", "tool-output") for name in ("x5",)]
    made += [("found", "Found: the full record of it", "tool-output")]
    assert _answered([*drawn, *made]).refusals() == []
