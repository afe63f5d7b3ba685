"""`harness run` judges goldens strictly and says how they differ: values compare as JSON
(type and value, key order aside), a stray file among the goldens fails a whole-corpus run,
and a mismatch shows both sides in full, in the CLI, `--json` and JUnit alike."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.run import Difference, differences, json_equal

ROOT = Path(__file__).parents[1]
ZERO = "zero-depth-live-child"  # answerer_calls 0, one DELEGATED_CALLER text


@pytest.fixture
def goldens(tmp_path: Path) -> Path:
    """A copy of the shipped goldens, to edit."""
    directory = tmp_path / "goldens"
    shutil.copytree(ROOT / "snapshots", directory)
    return directory


def edit(goldens: Path, sid: str, change: Any) -> None:
    path = goldens / f"{sid}.json"
    doc = json.loads(path.read_text("utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2), "utf-8")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    status = main(["run", *args])
    return status, capsys.readouterr().out.splitlines()


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (True, 1, False),
        (False, 0, False),
        (1.0, 1, False),
        (None, 0, False),
        ("1", 1, False),
        ({"a": 1, "b": [1, True]}, {"b": [1, True], "a": 1}, True),  # key order aside
        ({"a": [1, 2]}, {"a": [1, 2.0]}, False),
        ({"a": None}, {}, False),
        ([], {}, False),
        ([1, [True]], [1, [True]], True),
    ],
)
def test_json_values_compare_as_json(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal
    assert (differences(a, b) == []) is equal


@pytest.mark.parametrize("stand_in", [False, 0.0])
def test_a_golden_of_another_json_type_fails_the_gate(
    stand_in: Any, goldens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Python's == took false and 0.0 for the observed 0.
    edit(goldens, ZERO, lambda doc: doc.update(answerer_calls=stand_in))
    status, out = run(capsys, "--snapshots", str(goldens), ZERO)
    assert status == 1
    shown = json.dumps(stand_in)
    kind = "boolean" if stand_in is False else "number"
    assert f"      snapshot.answerer_calls: expected {shown} ({kind}), observed 0 (integer)" in out


def test_key_order_in_a_golden_does_not_matter(
    goldens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = goldens / f"{ZERO}.json"
    doc = json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps(dict(reversed(doc.items()))), "utf-8")
    assert run(capsys, "--snapshots", str(goldens), ZERO)[0] == 0


def near_the_end(doc: dict[str, Any]) -> None:
    error = doc["tool_errors"][0]
    error["text"] = error["text"].replace("final result", "final answer")


def test_a_long_text_that_differs_near_its_end_shows_where(
    goldens: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(goldens, ZERO, near_the_end)
    status, out = run(capsys, "--snapshots", str(goldens), ZERO)
    assert status == 1
    (line,) = [x for x in out if x.startswith("      snapshot.tool_errors[0].text:")]
    # Both sides at the point where they part, not two identical-looking beginnings.
    assert line == (
        "      snapshot.tool_errors[0].text: expected ...\" or decision in the child agent's "
        'final answer", observed ..." or decision in the child agent\'s final result" '
        "(they part at character 168)"
    )
    # No detail unless asked for (stdout is not a terminal here).
    assert not any(x.startswith("        expected: ") for x in out)


def test_diff_shows_both_sides_in_full(goldens: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(goldens, ZERO, near_the_end)
    status, out = run(capsys, "--snapshots", str(goldens), "--diff", ZERO)
    assert status == 1
    text = (ROOT / "snapshots" / f"{ZERO}.json").read_text("utf-8")
    full = json.loads(text)["tool_errors"][0]["text"]
    at = out.index("      snapshot.tool_errors[0].text:")
    assert out[at + 1 : at + 3] == [
        f"        expected: {json.dumps(full.replace('final result', 'final answer'))}",
        f"        observed: {json.dumps(full)}",
    ]


def test_json_and_junit_carry_the_same_differences(
    goldens: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Failure, JUnitXml

    edit(goldens, ZERO, near_the_end)
    junit = tmp_path / "results.xml"
    assert main(["run", "--snapshots", str(goldens), "--json", "--junit", str(junit), ZERO]) == 1
    (entry,) = json.loads(capsys.readouterr().out)["scenarios"]
    (found,) = entry["differences"]
    assert found["path"] == "snapshot.tool_errors[0].text"
    assert found["expected"].endswith("final answer") and found["observed"].endswith("result")
    assert found["diff"] == [
        f"expected: {json.dumps(found['expected'])}",
        f"observed: {json.dumps(found['observed'])}",
    ]
    ((failure,),) = [case.result for case in next(iter(JUnitXml.fromfile(str(junit))))]
    assert isinstance(failure, Failure)
    assert f"  expected: {json.dumps(found['expected'])}" in failure.text
    assert f"  observed: {json.dumps(found['observed'])}" in failure.text


def test_a_long_value_is_a_bounded_unified_diff() -> None:
    expected = [{"seq": i, "content": f"event {i}"} for i in range(400)]
    observed = [*expected[:200], {"seq": 200, "content": "changed"}, *expected[201:], {}]
    (difference,) = [Difference("snapshot.sessions.child", expected, observed)]
    detail = difference.detail()
    assert detail[:2] == ["--- expected", "+++ observed"]
    assert '-    "content": "event 200",' in detail and '+    "content": "changed",' in detail
    assert len(detail) <= 41 and difference.summary().startswith("snapshot.sessions.child: ")


def test_a_stray_golden_fails_a_whole_corpus_run_and_names_the_file(
    goldens: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Failure, JUnitXml

    (goldens / "no-such-scenario.json").write_text("{}\n", "utf-8")
    junit = tmp_path / "results.xml"
    status, out = run(capsys, "--snapshots", str(goldens), "--junit", str(junit))
    assert status == 1
    stray = (
        f"{goldens.name}/no-such-scenario.json: no scenario has the id 'no-such-scenario'; "
        "delete this golden snapshot, or add the scenario no-such-scenario.yaml"
    )
    assert f"STRAY {stray}" in out
    assert out[-1].endswith("passed, 0 failed; 1 unknown golden snapshot(s)")
    cases = {case.name: case for case in next(iter(JUnitXml.fromfile(str(junit))))}
    (failure,) = cases["golden no-such-scenario.json"].result
    assert isinstance(failure, Failure) and failure.message == stray
    # Named scenarios are not the corpus: the stray is none of their business.
    assert run(capsys, "--snapshots", str(goldens), ZERO)[0] == 0
    assert main(["run", "--json", "--snapshots", str(goldens)]) == 1
    assert json.loads(capsys.readouterr().out)["unknown_goldens"] == [
        f"{goldens.name}/no-such-scenario.json"
    ]


def test_the_decision_named_explicitly_is_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--json"]) == 0
    default = capsys.readouterr().out
    assert main(["run", "--json", "--guard", "runtime-ownership"]) == 0
    assert capsys.readouterr().out == default
    assert {e["golden"] for e in json.loads(default)["scenarios"]} == {"compared"}


def test_a_scenarios_own_guard_wins_and_a_variant_applies_to_the_others(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "--json", "--guard", "none", "hang-before-the-fix", ZERO]) == 3
    own, variant = json.loads(capsys.readouterr().out)["scenarios"]
    # hang-before-the-fix is guard none by its own file: run as written, and judged by its
    # golden; the zero-depth child runs under the variant, which its golden does not pin.
    assert (own["status"], own["golden"]) == ("pass", "compared")
    assert (variant["status"], variant["golden"]) == ("fail", "none")
    assert variant["observed"]["outcome"] == "hang"
    # Under tool-only the zero-depth child would be refused and nothing would hang: the
    # scenario's own guard none still decides.
    assert main(["run", "--guard", "tool-only", "hang-before-the-fix"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
    # And repro shows what run judges.
    assert main(["repro", "hang-before-the-fix", "--guard", "tool-only"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "verdict: pass"


def test_the_decision_named_explicitly_is_no_variant_for_another_adapter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A Python adapter (the reference with a twist, tests/test_results.py): the decision
    # named is what it runs anyway; only a test-only guard is the reference's own seam.
    spec = "tests.test_results:make"
    assert main(["run", "--adapter", spec, "--guard", "runtime-ownership", ZERO]) == 0
    assert main(["run", "--adapter", spec, "--guard", "none", ZERO]) == 2
    assert "--guard is a test seam of the reference runtime" in capsys.readouterr().err


def test_an_id_named_twice_runs_once(capsys: pytest.CaptureFixture[str]) -> None:
    status, out = run(capsys, ZERO, "missing-registry", ZERO)
    assert status == 0
    assert [line.split()[1] for line in out[1:-3]] == [ZERO, "missing-registry"]
    assert out[-1] == "2 passed, 0 failed"


def test_junit_names_scenario_files_relative_even_from_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import JUnitXml

    monkeypatch.chdir(tmp_path)  # outside the checkout: no absolute path of this machine
    assert main(["run", "--junit", "results.xml", ZERO]) == 0
    capsys.readouterr()
    (case,) = next(iter(JUnitXml.fromfile(str(tmp_path / "results.xml"))))
    assert case._elem.get("file") == f"scenarios/{ZERO}.yaml"
