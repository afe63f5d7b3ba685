"""`harness run` for CI: JUnit XML read back by a JUnit parser, GitHub annotations at the
failing expectation's line, and shards that split the corpus exactly."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.adapters import ReferenceAdapter
from harness.cli import main
from harness.cli._selection import in_shard, parse_shard, shard_of
from harness.contract import Observation
from harness.scenario import FEATURES
from tests.conftest import SCENARIOS

ROOT = Path(__file__).parents[1]
PASSES, FAILS, SKIPS, BREAKS = (
    "zero-depth-live-child", "missing-registry", "service-no-provider", "stale-same-id-object"
)  # fmt: skip


class Mixed(ReferenceAdapter):
    """The reference runtime, made to give one of each verdict: a pass, a fail (the human
    asked once too often), a skip (no service-level scenarios) and an error (an adapter
    that broke)."""

    name = "mixed"
    reference = False
    features = frozenset(FEATURES) - {"service"}

    def run(self, scenario, options):  # type: ignore[no-untyped-def]
        if scenario.id == BREAKS:
            return Observation.broken(scenario.id, "adapter mixed: the runtime crashed")
        observed = super().run(scenario, options)
        if scenario.id == FAILS:
            return dataclasses.replace(observed, answerer_calls=observed.answerer_calls + 1)
        return observed


def make() -> Mixed:
    return Mixed()


def run_mixed(*extra: str) -> int:
    return main(["run", "--adapter", "tests.test_results:make", PASSES, FAILS, SKIPS, BREAKS,
                 *extra])  # fmt: skip


def test_junit_of_a_pass_a_fail_a_skip_and_an_error_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from junitparser import Error, Failure, JUnitXml, Skipped

    out = tmp_path / "results.xml"
    assert run_mixed("--junit", str(out)) == 1
    capsys.readouterr()
    (suite,) = JUnitXml.fromfile(str(out))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 1, 1, 1)
    cases = {case.name: case for case in suite}
    assert set(cases) == {PASSES, FAILS, SKIPS, BREAKS}
    assert all(case.classname == "mixed" for case in cases.values())
    assert cases[PASSES].is_passed
    (failure,) = cases[FAILS].result
    assert isinstance(failure, Failure)
    assert failure.message == "answerer_calls: expected 0, observed 1"
    assert failure.text.startswith(failure.message)
    (skipped,) = cases[SKIPS].result
    assert isinstance(skipped, Skipped) and "service" in skipped.message
    (error,) = cases[BREAKS].result
    assert isinstance(error, Error) and "the runtime crashed" in error.message
    # Real seconds, though scenario time is frozen: a run takes some, and not a day.
    assert all(0 < cases[name].time < 60 for name in (PASSES, FAILS))


def test_github_annotations_point_at_the_failing_expectation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert run_mixed("--format", "github") == 1
    annotations = [line for line in capsys.readouterr().out.splitlines()
                   if line.startswith("::error ")]  # fmt: skip
    assert len(annotations) == 2  # the fail and the error; never a pass or a skip
    where = {}
    for annotation in annotations:
        props = dict(
            p.split("=", 1) for p in annotation.removeprefix("::error ").split("::")[0].split(",")
        )
        where[props["title"].split("%3A")[0]] = (props["file"], int(props["line"]))
    file, line = where[FAILS]
    assert file == f"scenarios/{FAILS}.yaml"
    pointed = (ROOT / file).read_text("utf-8").splitlines()[line - 1]
    assert pointed.strip().startswith("answerer_calls:")
    file, line = where[BREAKS]
    assert (ROOT / file).is_file() and line >= 1
    text = summary.read_text("utf-8")
    assert f"| `{FAILS}` | FAIL | live | answerer_calls: expected 0, observed 1 |" in text


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_shards_split_the_corpus_exactly(n: int) -> None:
    scenarios = list(SCENARIOS.values())
    parts = [in_shard(scenarios, k, n) for k in range(1, n + 1)]
    ids = [s.id for part in parts for s in part]
    assert sorted(ids) == sorted(SCENARIOS) and len(ids) == len(set(ids))
    # By id alone: adding a scenario moves no other one.
    assert shard_of("zero-depth-live-child", n) == shard_of("zero-depth-live-child", n)


def test_the_cli_shards_run_every_scenario_once(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[str] = []
    for k in (1, 2, 3):
        assert main(["run", "--json", "--shard", f"{k}/3"]) == 0
        seen += [s["id"] for s in json.loads(capsys.readouterr().out)["scenarios"]]
    assert sorted(seen) == sorted(SCENARIOS)


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_bad_shard_is_a_usage_error(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="write K/N with 1 <= K <= N"):
        parse_shard(text)
    assert main(["run", "--shard", text]) == 2
    assert "write K/N with 1 <= K <= N, e.g. 2/4" in capsys.readouterr().err


def test_the_run_loop_judges_each_result_and_labels_it_by_the_known_failures(
    tmp_path: Path,
) -> None:
    from harness.adapters import Expectations
    from harness.run import run_loop

    known = Expectations(tmp_path / "known.yaml", {FAILS: "asks twice"})
    chosen = [SCENARIOS[i] for i in (PASSES, FAILS, SKIPS, BREAKS)]
    with Mixed() as adapter:
        ran = list(run_loop(chosen, adapter, expectations=known))
    assert [(r.result.scenario.id, r.label, r.acceptable) for r in ran] == [
        (PASSES, "PASS", True),
        (FAILS, "KNOWN FAIL", True),
        (SKIPS, "SKIP", True),
        (BREAKS, "NEW FAIL", False),
    ]
    assert all(0 <= r.seconds < 60 for r in ran)
    # No known-failures file: plain labels, and only a pass or a skip is acceptable.
    with Mixed() as adapter:
        plain = [(r.label, r.acceptable) for r in run_loop(chosen, adapter)]
    assert plain == [("PASS", True), ("FAIL", False), ("SKIP", True), ("ERROR", False)]
