"""Runtimes across releases, without starting one: known failures by release
(`releases:` in an expectations file), the order of releases, the history table and the
joining of its shards, `harness pin` and `--adapter NAME@PATH` refusing bad input in one
line, and Claude Code's hand-back frame read off a report."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.adapters import Expectations, ExpectationsError
from harness.adapters._expectations import release_key
from harness.adapters._handback import unframed
from harness.cli import main
from harness.cli._history import HistoryError, cell, column, markdown, merge, table

VERSIONED = """\
scenarios:
  a:
    - releases: "0.15.10"
      expected: fail
      reason: it hangs
    - releases: ">=0.24.4"
      expected: fail
      held: rule
      reason: its own words
  b: {expected: fail, reason: every release}
"""


def load(tmp_path: Path, text: str, release: str | None) -> Expectations:
    path = tmp_path / "expectations.yaml"
    path.write_text(text, encoding="utf-8")
    return Expectations.load(path, {"a", "b"}, release)


@pytest.mark.parametrize(
    ("release", "a", "held"),
    [("0.15.10", "it hangs", None), ("0.24.4", "its own words", "rule"),
     ("1.0.0", "its own words", "rule"), ("0.20.0", None, None), (None, None, None)],
)  # fmt: skip
def test_an_entry_applies_to_the_releases_it_names(
    tmp_path: Path, release: str | None, a: str | None, held: str | None
) -> None:
    known = load(tmp_path, VERSIONED, release)
    assert known.failing.get("a") == a
    assert known.held.get("a") == held
    assert known.failing["b"] == "every release"  # no `releases`: all of them


def test_entries_that_both_apply_are_refused(tmp_path: Path) -> None:
    text = VERSIONED.replace('">=0.24.4"', '">=0.15.0"')
    with pytest.raises(ExpectationsError) as info:
        load(tmp_path, text, "0.15.10")
    assert info.value.problems == [
        f"{tmp_path / 'expectations.yaml'}: /scenarios/a: entries 0 and 1 both apply to "
        "0.15.10; make their releases apart"
    ]


@pytest.mark.parametrize("releases", ['"~0.15"', '""', "15", '"0.15"'])
def test_a_releases_field_must_compare_releases(tmp_path: Path, releases: str) -> None:
    with pytest.raises(ExpectationsError) as info:
        load(tmp_path, VERSIONED.replace('"0.15.10"', releases), "0.15.10")
    (problem,) = info.value.problems
    assert problem.startswith(f"{tmp_path / 'expectations.yaml'}: /scenarios/a/0/releases: ")


def test_releases_only_in_a_list_of_entries(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError) as info:
        load(tmp_path, "scenarios:\n  b: {expected: fail, reason: x, releases: '1.0.0'}\n", None)
    assert info.value.problems[0].endswith("only expected, held, reason are allowed")


def test_releases_sort_as_npm_sorts_them() -> None:
    given = ["0.24.4", "0.15.10", "1.0.0", "1.0.0-rc.10", "1.0.0-rc.2", "0.9.0", "1.0.0+abc"]
    ordered = sorted(given, key=release_key)
    assert ordered[:5] == ["0.9.0", "0.15.10", "0.24.4", "1.0.0-rc.2", "1.0.0-rc.10"]
    assert release_key("1.0.0+abc") == release_key("1.0.0")


# -- the history table ------------------------------------------------------------------
def ran(sid: str, status: str, held: str | None, outcome: str = "completed") -> Any:
    result = SimpleNamespace(scenario=SimpleNamespace(id=sid), status=status, held=held,
                             mismatches=[f"{sid} first"], above=[],
                             observation=SimpleNamespace(outcome=outcome))  # fmt: skip
    return SimpleNamespace(result=result)


def test_a_cell_is_the_level_held_whatever_the_known_failures_say() -> None:
    assert cell(ran("a", "fail", "rule")) == ("rule", "a first")
    assert cell(ran("a", "pass", "upstream"))[0] == "upstream"
    assert cell(ran("a", "fail", "none", "hang"))[0] == "none (hang)"
    assert cell(ran("a", "error", None, "error"))[0] == "error"
    assert cell(ran("a", "skip", None))[0] == "skip"


COLUMNS = [
    column("0.24.4", "Q 0.24.4", [ran("a", "fail", "rule"), ran("b", "fail", "rule")]),
    column("0.15.10", "Q 0.15.10", [ran("a", "fail", "none", "hang"), ran("b", "fail", "rule")]),
    column("0.21.10", "Q 0.21.10", [ran("a", "fail", "none", "hang"), ran("b", "fail", "rule")]),
]


def test_the_table_orders_releases_and_names_where_a_cell_changed() -> None:
    doc = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS)
    assert [c["release"] for c in doc["releases"]] == ["0.15.10", "0.21.10", "0.24.4"]
    assert doc["changes"] == {"a": [{"release": "0.24.4", "from": "none (hang)", "to": "rule"}]}
    shown = markdown(doc)
    assert "| a | none (hang) | none (hang) | rule |" in shown
    assert "- a: 0.24.4 (none (hang) → rule)" in shown
    assert "- b:" not in shown


def test_shards_join_into_the_table_one_run_makes() -> None:
    whole = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS)
    one = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS[::2])
    two = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS[1:2])
    joined = merge([("1.json", {**one, "shard": "1/2"}), ("2.json", {**two, "shard": "2/2"})])
    assert json.dumps(joined, sort_keys=True) == json.dumps(whole, sort_keys=True)


def test_shards_of_other_commands_do_not_join() -> None:
    one = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS[:1])
    other = table("qwen-code", "harness history qwen-code --last 2", ["a", "b"], COLUMNS[1:])
    with pytest.raises(HistoryError, match=r"2\.json: its command is not 1\.json's"):
        merge([("1.json", one), ("2.json", other)])


def test_history_merge_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = table("qwen-code", "harness history qwen-code", ["a", "b"], COLUMNS)
    parts = []
    for k, cols in enumerate((COLUMNS[:2], COLUMNS[2:]), 1):
        part = tmp_path / f"{k}.json"
        part.write_text(json.dumps(table("qwen-code", whole["command"], ["a", "b"], cols)), "utf-8")
        parts.append(str(part))
    out = tmp_path / "joined.json"
    assert main(["history", "--merge", *parts, "--format", "json", "--output", str(out)]) == 0
    assert json.loads(out.read_text("utf-8")) == json.loads(json.dumps(whole))
    (tmp_path / "bad.json").write_text("[]", "utf-8")
    assert main(["history", "--merge", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"harness: {tmp_path / 'bad.json'}: not a table written by harness history "
                   "--format json"]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["history", "nope"], "name an agent CLI"),
     (["history", "qwen-code", "0.15.10", "--last", "2"], "one of them"),
     (["history", "qwen-code", "--merge", "x.json"], "--merge joins tables"),
     (["history", "qwen-code", "--since", "latest"], "--since latest: not a release"),
     (["pin", "nope", "1.0.0"], "not an agent CLI's adapter"),
     (["run", "--adapter", "qwen-code@./no/such/cli.js"], "no file at")],
)  # fmt: skip
def test_bad_input_is_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert said in line


def test_pin_restores_the_pin_when_npm_cannot_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "adapters" / "qwen-code"
    root.mkdir(parents=True)
    (tmp_path / "scenarios").mkdir()
    manifest = '{"dependencies": {"@qwen-code/qwen-code": "0.15.10"}}\n'
    (root / "package.json").write_text(manifest, "utf-8")
    (root / "package-lock.json").write_text("{}\n", "utf-8")
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on it
    assert main(["--scenarios", str(tmp_path / "scenarios"), "pin", "qwen-code", "0.24.4"]) == 2
    assert "needs npm on PATH" in capsys.readouterr().err
    assert (root / "package.json").read_text("utf-8") == manifest
    assert (root / "package-lock.json").read_text("utf-8") == "{}\n"


def test_a_build_that_cannot_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "qwen"
    binary.write_text("#!/bin/sh\n", "utf-8")  # not executable
    assert main(["run", "--adapter", f"qwen-code@{binary}"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"harness: --adapter qwen-code@{binary}: {binary} is not executable; chmod +x it"
    )


# -- Claude Code's hand-back frame ------------------------------------------------------
NOTE = (
    "  <tools-used-before-summary>Agent</tools-used-before-summary>\n  \n  [harness: subagent "
    "output matched instruction-shaped pattern(s): x. Control tags below are neutralized.]\n  \n"
)
FRAME = "[Subagent hand-back] The text below is the final report. The report follows:\n"


def test_a_framed_report_is_read_back_as_the_report() -> None:
    inner = FRAME + "  UNRESOLVED: Q?\nagentId: g (to continue)"
    nested = ("  ".join([""] + [line + "\n" for line in inner.splitlines()]).rstrip("\n")
              .replace("[Subagent", "[\\Subagent"))  # fmt: skip
    outer = NOTE + FRAME + "  CHILD_DONE; " + nested.lstrip() + "\nagentId: c (to continue)"
    assert (
        unframed(outer)
        == "CHILD_DONE; UNRESOLVED: Q?\nagentId: g (to continue)\nagentId: c (to continue)"
    )
    assert unframed("no frame <here>") == "no frame <here>"
    assert unframed(FRAME + "  a <\\tag>\n  b\nagentId: x") == "a <tag>\nb\nagentId: x"
