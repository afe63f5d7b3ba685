"""Every clause of the design document has a scenario that would fail if it broke."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.scenario import clauses
from tests.conftest import SCENARIOS


def test_every_clause_is_covered_by_a_scenario() -> None:
    covered = {c for s in SCENARIOS.values() for c in s.covers}
    assert sorted(set(clauses()) - covered) == []


def test_the_clause_list_has_every_section() -> None:
    ids = list(clauses())
    for section, count in {"D": 12, "A": 4, "C": 4, "T": 7}.items():
        assert sum(i.startswith(section) for i in ids) == count, section


def test_coverage_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage"]) == 0
    out = capsys.readouterr().out
    assert "UNCOVERED" not in out
    assert out.splitlines()[-1] == f"{len(clauses())} of {len(clauses())} clauses covered"
    assert "covered by: delegated-question-handoff" in out


def test_coverage_fails_while_a_clause_is_uncovered(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    from pathlib import Path

    source = SCENARIOS["missing-registry"].path
    shutil.copy(source, Path(str(tmp_path)) / source.name)
    assert main(["--scenarios", str(tmp_path), "coverage"]) == 1
    out = capsys.readouterr().out
    assert "UNCOVERED: no scenario" in out
    assert out.splitlines()[-1] == f"3 of {len(clauses())} clauses covered"
