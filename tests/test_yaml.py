"""Scenario files are JSON-compatible YAML: what YAML parsers disagree on, or JSON cannot
say, is refused as `path:line:col: message`, one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import load_scenario
from tests.test_loader import GOOD, problems, write


# -- YAML: path:line:col: message ------------------------------------------------------
def test_yaml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "id: x\ntitle: [unclosed\n")
    (line,) = problems(path)
    assert line.startswith(f"{path}:3:1: ")


@pytest.mark.parametrize(
    ("text", "where"),
    [("id: x\nfoo:\n\t- 1\n", "3:1"), ("id: x\n\ttitle: t\n", "2:1")],
    ids=["cannot-start-a-token", "violates-indentation"],
)
def test_a_tab_is_named_as_one(tmp_path: Path, text: str, where: str) -> None:
    # libyaml says "found character that cannot start any token"; an editor shows spaces.
    (line,) = problems(path := write(tmp_path, text))
    assert line.startswith(f"{path}:{where}: ")
    assert line.endswith("; that character is a tab: YAML indents with spaces only; use spaces")


def test_a_tab_inside_a_quoted_string_is_no_yaml_problem(tmp_path: Path) -> None:
    found = problems(write(tmp_path, 'id: case\ntitle: "a\tb"\n'))  # only missing sections
    assert found and all(": /: missing " in line for line in found)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("id: a\ntitle: t\nid: b\n", "3:1", "duplicate key 'id' (first at line 1)"),
        ("id: a\n1: x\n", "2:1", "key '1' is not a string; quote it"),
        ("id: a\nx: 0777\n", "2:4", "'0777' is a number to some YAML parsers"),
        ("id: a\nx: !!binary aGk=\n", "2:4", "tag tag:yaml.org,2002:binary is not JSON"),
        ("id: a\nx: !!python/object:os.system y\n", "2:4", "is not JSON"),
        ("id: a\nx: !!float .nan\n", "2:4", "'.nan' is not a JSON float"),
        ("id: a\nx: &r [*r]\n", "2:4", "an alias refers to its own anchor"),
        ("id: a\nx: [{q: Why?}]\n", "2:9", "'Why?' has a '?', which ends a plain scalar"),
        ('id: a\nx: {q: "Why?", r: [a?]}\n', "2:20", "'a?' has a '?'"),
        ("id: a\nx: 'b\x00'\n", "2:6", "unacceptable character '\\x00'"),
        ("a: 1\n---\nb: 2\n", "2:1", "expected a single document"),
        ("x: " + "[" * 70 + "]" * 70 + "\n", "1:1", "nests deeper than 64 levels"),
    ],
    ids=[
        "duplicate-key",
        "non-string-key",
        "octal",
        "binary-tag",
        "python-tag",
        "nan",
        "recursive-alias",
        "question-mark-in-flow",
        "question-mark-in-nested-flow",
        "nul",
        "two-documents",
        "too-deep",
    ],
)
def test_what_json_cannot_say_is_refused_with_line_and_column(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = write(tmp_path, text)
    (line,) = problems(path)
    assert line.startswith(f"{path}:{where}: ") and message in line


def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (line,) = problems(write(tmp_path, "\n".join(rows) + "\n"))
    assert "expands to more than 100000 values; check its aliases" in line


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("yes", "boolean"),
        ("off", "boolean"),
        ("N", "boolean"),
        ("ON", "boolean"),
        ("2024-01-01", "timestamp"),
        ("0777", "number"),
        ("0x1F", "number"),
        ("1_000", "number"),
        ("10:30", "number"),
        (".inf", "number"),
        (".nan", "number"),
        ("-.inf", "number"),
        ("+0x1F", "number"),
    ],
)
def test_scalars_yaml_parsers_disagree_on_must_be_quoted(
    tmp_path: Path, value: str, kind: str
) -> None:
    # YAML 1.1 (PyYAML, Go's yaml.v2) and the 1.2 core schema (JavaScript's yaml) read
    # these as booleans, dates or numbers; a JSON-schema 1.2 parser reads strings.
    path = write(tmp_path, GOOD.format(id="case").replace("say: hi", f"say: {value}"))
    (line,) = problems(path)
    assert line == (
        f"{path}:13:20: {value!r} is a {kind} to some YAML parsers and a string to others; quote it"
    )
    quoted = write(tmp_path, GOOD.format(id="case").replace("say: hi", f"say: '{value}'"))
    assert load_scenario(quoted).agents["child"].script[0].say == value


def test_a_problem_with_an_aliased_scalar_is_reported_once_at_its_anchor(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("title: t", "title: &t yes")
    path = write(tmp_path, text.replace("say: hi", "say: *t").replace("prompt: p", "prompt: *t"))
    assert problems(path) == [
        f"{path}:2:8: 'yes' is a boolean to some YAML parsers and a string to others; quote it"
    ]


def test_numbers_are_json_numbers(tmp_path: Path) -> None:
    # JSON cannot tell 2.0 from 2: read as an int, as every other language's parser does.
    text = GOOD.format(id="case").replace("title: t", "title: t\nstream_chunk: 2.0")
    scenario = load_scenario(write(tmp_path, text))
    assert scenario.stream_chunk == 2 and isinstance(scenario.stream_chunk, int)
    path = write(tmp_path, GOOD.format(id="case").replace("prompt: p", "prompt: p, num: 1e400"))
    assert problems(path) == [f"{path}:9:45: 1e400 is too large for a JSON number"]


def test_patterns_end_at_the_end_of_the_string(tmp_path: Path) -> None:
    # Python's `$` also matches before a final newline; JSON Schema's (ECMA-262) does not.
    text = GOOD.format(id="case").replace("  child:\n", '  "child\\n":\n')
    lines = problems(write(tmp_path, text))
    assert any("/agents: 'child\\n' does not match '^[A-Za-z0-9]" in line for line in lines)


def test_the_closest_shape_of_a_step_or_phase_is_the_one_reported(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("{say: hi}", "{say: 1}")
    text = text.replace("phases: [{start: parent, prompt: go}]", "phases: [{start: parent}]")
    path = write(tmp_path, text)
    assert problems(path) == [
        f"{path}: /agents/child/script/0/say: 1 is not of type 'string' (line 13)",
        f"{path}: /phases/0: missing 'prompt': the text the phase's agent is started or "
        "resumed with (line 14)",
    ]


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"id: a\ntitle: caf\xe9\n")
    assert problems(path) == [f"{path}:2: byte 0xe9 is not UTF-8; save the file as UTF-8"]


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + GOOD.format(id="case").encode())
    assert load_scenario(path).id == "case"


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "the file is empty"), ("- a\n", "a scenario is a mapping with id, title")],
)
def test_empty_or_not_a_mapping(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    (line,) = problems(path)
    assert line.startswith(f"{path}: /: ") and message in line


def test_every_shipped_file_reads_the_same_under_a_strict_yaml_11_parser() -> None:
    # PyYAML's pure-Python loader (YAML 1.1, stricter about plain scalars in flow
    # collections) stands in for the parsers downstream runtimes use: each shipped file must
    # give it the very value the harness's loader gives, and a clock-like or boolean-like
    # value would differ between 1.1 and 1.2, so equal values also mean nothing was ambiguous.
    import yaml

    from harness._paths import scenarios_dir
    from harness.scenario._yaml import parse

    files = sorted(scenarios_dir().glob("*.yaml"))
    assert len(files) > 30
    for path in files:
        text = path.read_text("utf-8")
        assert yaml.load(text, Loader=yaml.SafeLoader) == parse(text).value, path.name
