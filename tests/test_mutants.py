"""Every test-only guard is killed by at least one scenario (the guard matrix)."""

from __future__ import annotations

import pytest

from harness.adapters.reference.guards import GUARDS
from harness.cli import main
from harness.cli._options import GUARD_NAMES
from harness.run._mutants import SURVIVED, mutant_matrix
from harness.scenario import Scenario
from tests.conftest import SCENARIOS

# The scenario that exists to catch each rejected alternative.
KILLERS = {
    "none": "zero-depth-live-child",
    "delegation-depth": "resumed-depth-one-root",
    "tool-only": "plan-mode-child-refused",
    "after-intent": "intent-checked-after-ownership",
    "id-equality": "stale-same-id-object",
    "approve-any": "plan-review-approve-with-feedback",
}


def test_cli_guard_names_match_the_runtime() -> None:
    assert list(GUARD_NAMES) == list(GUARDS)


def test_every_guard_is_killed_by_its_scenario() -> None:
    scenarios: list[Scenario] = [SCENARIOS[s] for s in sorted(set(KILLERS.values()))]
    matrix = mutant_matrix(scenarios)
    assert matrix.survivors() == []
    for guard, killer in KILLERS.items():
        assert matrix.cells[guard, killer] != SURVIVED, (guard, killer)


def test_a_tripped_tripwire_shows_as_a_hang_cell() -> None:
    matrix = mutant_matrix([SCENARIOS["zero-depth-live-child"]])
    assert matrix.cells["none", "zero-depth-live-child"] == "hang"


def test_depth_guard_is_killed_both_ways() -> None:
    # It blocks a resumed root and admits a zero-depth live child.
    matrix = mutant_matrix(
        [SCENARIOS["resumed-depth-one-root"], SCENARIOS["zero-depth-live-child"]]
    )
    assert matrix.cells["delegation-depth", "resumed-depth-one-root"] == "killed"
    # The admitted child reaches the tripwire, which never answers: a detected hang.
    assert matrix.cells["delegation-depth", "zero-depth-live-child"] == "hang"


def test_mutants_command_kills_everything(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants"]) == 0
    captured = capsys.readouterr()
    assert "SURVIVED" not in captured.out
    # One progress line per cell; a scenario with a guard of its own runs under it always,
    # so it judges no guard and has no row.
    judging = [s for s in SCENARIOS.values() if s.guard == "runtime-ownership"]
    assert 0 < len(judging) < len(SCENARIOS)
    assert captured.err.count("\n") == len(KILLERS) * len(judging)
    assert "hang-before-the-fix" not in captured.out
