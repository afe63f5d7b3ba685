"""Snapshot bytes depend on nothing but the scenario: not the hash seed, not the test order,
not the worker count. The two-run check is `python -m tests.determinism`; these are its
fast parts and the mechanics it relies on."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import determinism
from tests.determinism import Difference, Observed, compare, report

ROOT = Path(__file__).resolve().parents[1]
LEAN = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

# Several children, a wait-for graph and direct ask phases: the snapshots most exposed to
# set and dict ordering.
HASH_SENSITIVE = ["parallel-children-refused", "hang-before-the-fix", "owner-detached-child"]
PRINT_SNAPSHOTS = """
import sys
from harness.run import run_scenarios, snapshot_text
from harness.scenario import load_scenario, scenario_paths

paths = {p.stem: p for p in scenario_paths()}
for result in run_scenarios(load_scenario(paths[i]) for i in sys.argv[1:]):
    sys.stdout.buffer.write(snapshot_text(result.observation.snapshot()).encode() + b"\\0")
"""


def test_snapshot_bytes_do_not_depend_on_the_hash_seed(harness_snapshot_dir: Path) -> None:
    seeds = ["0", "2718281"]
    children = [
        subprocess.Popen(
            [sys.executable, "-c", PRINT_SNAPSHOTS, *HASH_SENSITIVE],
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for seed in seeds
    ]
    outputs = []
    for seed, child in zip(seeds, children, strict=True):
        out, err = child.communicate(timeout=30)
        assert child.returncode == 0, f"PYTHONHASHSEED={seed}: {err.decode()}"
        outputs.append(out.split(b"\0")[:-1])
    assert outputs[0] == outputs[1]
    for scenario_id, text in zip(HASH_SENSITIVE, outputs[0], strict=True):
        assert text == (harness_snapshot_dir / f"{scenario_id}.json").read_bytes(), scenario_id


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_shuffle_seed_gives_one_order_per_seed_and_shows_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in LEAN.items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(
        **{f"test_m{m}": "def test_a(): pass\ndef test_b(): pass\n" for m in range(3)}
    )
    pytester.makepyfile(test_many="\n".join(f"def test_{n}(): pass" for n in range(20)))

    def order(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess("-p", "tests._order", "--collect-only", *args)

    plain, seven, seven_again, eight = (
        order("-q"),
        order("-q", "--shuffle-seed", "7"),
        order("-q", "--shuffle-seed", "7"),
        order("-q", "--shuffle-seed", "8"),
    )
    assert len(collected(plain)) == 26
    assert collected(seven) == collected(seven_again)
    assert collected(seven) != collected(plain) and collected(seven) != collected(eight)
    assert sorted(collected(seven)) == sorted(collected(plain))
    order("--shuffle-seed", "7").stdout.fnmatch_lines(["test order: shuffled, --shuffle-seed 7"])
    order().stdout.fnmatch_lines(["test order: the slow tier first, each tier as collected*"])


PINNING_TESTS = """
import pytest

from harness.run import Wire, run_scenario
from harness.scenario import load_scenario, scenario_paths


@pytest.mark.parametrize("scenario_id", ["live-root-answered", "zero-depth-live-child"])
@pytest.mark.parametrize("stream", [False, True])
def test_pinned(scenario_id, stream, scenario_snapshot):
    (path,) = [p for p in scenario_paths() if p.stem == scenario_id]
    observed = run_scenario(load_scenario(path), wire=Wire(stream=stream)).observation
    assert observed.snapshot() == scenario_snapshot
"""


def test_observed_files_hold_the_compared_bytes_one_per_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, harness_snapshot_dir: Path
) -> None:
    for name, value in LEAN.items():
        monkeypatch.setenv(name, value)
    snapshots = pytester.mkdir("snapshots-copy")
    for scenario_id in ("live-root-answered", "zero-depth-live-child"):
        golden = (harness_snapshot_dir / f"{scenario_id}.json").read_bytes()
        (snapshots / f"{scenario_id}.json").write_bytes(golden)
    # A changed golden file: the observed one must still hold what the run produced.
    changed = snapshots / "zero-depth-live-child.json"
    changed.write_text("{}\n", encoding="utf-8")
    pytester.makepyfile(test_pinning=PINNING_TESTS)
    plugins = ("-p", "syrupy", "-p", "harness.pytest_plugin")
    result = pytester.runpytest_subprocess(
        *plugins, "--harness-snapshots", str(snapshots), "--harness-observed", "observed"
    )
    result.assert_outcomes(passed=2, failed=2)
    assert changed.read_text(encoding="utf-8") == "{}\n"
    result.stdout.fnmatch_lines([f"harness observed snapshots: {pytester.path / 'observed'}"])
    kept = {
        str(p.relative_to(pytester.path / "observed")): p.read_bytes()
        for p in (pytester.path / "observed").rglob("*.json")
    }
    assert sorted(kept) == [
        f"{scenario_id}/test_pinning.py_test_pinned_{stream}-{scenario_id}.json"
        for scenario_id in ("live-root-answered", "zero-depth-live-child")
        for stream in ("False", "True")
    ]
    for name, data in kept.items():
        scenario_id = name.split("/")[0]
        assert data == (harness_snapshot_dir / f"{scenario_id}.json").read_bytes(), name

    inside = pytester.runpytest_subprocess(
        *plugins, "--harness-snapshots", str(snapshots), "--harness-observed", str(snapshots)
    )
    assert inside.ret == pytest.ExitCode.USAGE_ERROR
    inside.stderr.fnmatch_lines(["*--harness-observed*must lie outside the snapshot directory*"])


GOLDEN = {"s": b'{\n  "a": 1\n}\n', "t": b"{}\n"}
RUN: Observed = {("s", "json.json"): GOLDEN["s"], ("s", "sse.json"): GOLDEN["s"]}
RUN |= {("t", "json.json"): GOLDEN["t"]}


def test_identical_runs_have_no_difference_and_count_every_file() -> None:
    assert compare(GOLDEN, {"a": RUN, "b": dict(RUN)}) == ([], 2 + 3 + 3)


def test_a_run_that_differs_is_named_with_a_diff() -> None:
    b = {**RUN, ("s", "sse.json"): b'{\n  "a": 2\n}\n'}
    differences, _ = compare(GOLDEN, {"a": RUN, "b": b})
    assert [d.what for d in differences] == [
        "s/sse.json: run a and run b differ",
        "s/sse.json: run b differs from snapshots/s.json",
    ]
    assert '-  "a": 1' in differences[0].diff and '+  "a": 2' in differences[0].diff
    assert differences[1].diff[:2] == ("--- snapshots/s.json", "+++ run b: s/sse.json")


def test_missing_tests_and_unpinned_snapshots_are_differences() -> None:
    b = {key: data for key, data in RUN.items() if key[0] != "t"}
    differences, _ = compare({**GOLDEN, "u": b"{}\n"}, {"a": RUN, "b": b})
    assert [d.what for d in differences] == [
        "1 test(s) compared a snapshot in another run but not in run b, e.g. t/json.json",
        "snapshots/u.json: no test pinned it in run a",
        "snapshots/t.json: no test pinned it in run b",
        "snapshots/u.json: no test pinned it in run b",
    ]


def test_bytes_that_decode_alike_still_get_a_diff() -> None:
    # Two invalid UTF-8 bytes both decode to U+FFFD: no line differs, the bytes do.
    (difference,) = compare({"s": b"\xff"}, {"a": {("s", "x.json"): b"\xfe"}})[0]
    assert difference.diff == (
        "--- snapshots/s.json",
        "+++ run a: s/x.json",
        "@@ bytes differ from offset 0 (1 vs 1 bytes); the lines look alike once decoded",
    )


def test_the_report_is_bounded() -> None:
    many = [Difference(f"d{n}", tuple(f"+{m}" for m in range(100))) for n in range(40)]
    lines = report(many)
    assert lines[0] == "determinism: 40 difference(s)"
    shown, listed = determinism.SHOWN_DIFFERENCES, determinism.LISTED_DIFFERENCES
    assert len(lines) == 1 + shown * (1 + determinism.DIFF_LINES + 1) + listed + 1
    assert lines[-1] == f"... and {40 - shown - listed} more"


@pytest.mark.parametrize(
    ("statuses", "b_differs", "expected"),
    [((0, 0), False, 0), ((0, 0), True, 1), ((0, 5), False, 5), ((2, 1), True, 2)],
)
def test_the_command_forwards_the_first_failing_status(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    statuses: tuple[int, int],
    b_differs: bool,
    expected: int,
) -> None:
    def fake_run(run: determinism.Run, work: Path, args: list[str]) -> tuple[int, Observed]:
        observed = dict(RUN)
        if b_differs and run.name == "b":
            observed[("t", "json.json")] = b"[]\n"
        return statuses[ord(run.name) - ord("a")], observed

    monkeypatch.setattr(determinism, "run_suite", fake_run)
    monkeypatch.setattr(determinism, "read_golden", lambda directory: GOLDEN)
    assert determinism.main(["--order-seeds", "3", "4", "--hash-seed", "99"]) == expected
    out, err = capsys.readouterr()
    if expected == 0:
        assert out.strip() == (
            "determinism: OK: 8 files byte-identical (3 in run a, 3 in run b, 2 in snapshots/) "
            "across run a (PYTHONHASHSEED=0, -n 0, --shuffle-seed 3) and "
            "run b (PYTHONHASHSEED=99, -n 2, --shuffle-seed 4)"
        )
    else:
        assert "determinism:" in err and "OK" not in out


def _pins_snapshots(path: Path) -> bool:
    """Whether the module's own code (not a test file it writes as text) asks for the
    scenario_snapshot fixture, as a parameter or through request.getfixturevalue."""
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            a.arg == "scenario_snapshot" for a in node.args.args
        ):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "getfixturevalue"
            and any(
                isinstance(a, ast.Constant) and a.value == "scenario_snapshot" for a in node.args
            )
        ):
            return True
    return False


def test_the_determinism_check_runs_every_module_that_pins_snapshots() -> None:
    # It runs only these by default; a module pinning snapshots outside them would go
    # unvaried, so one is an error here.
    pinning = {
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").glob("test_*.py"))
        if _pins_snapshots(path)
    }
    assert pinning == set(determinism.SNAPSHOT_TESTS)
