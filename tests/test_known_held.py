"""A known failure that still holds a level (`held: rule`): a runtime that keeps the rule in
its own words is a known failure at the upstream level and a plain pass at the rule level,
where a failure of it is new."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.adapters import Expectations, ExpectationsError


def known(tmp_path: Path, text: str) -> Expectations:
    path = tmp_path / "expectations.yaml"
    path.write_text(text, encoding="utf-8")
    return Expectations.load(path, {"a", "b"})


def test_held_rule_applies_above_the_rule_only(tmp_path: Path) -> None:
    entries = known(
        tmp_path,
        "scenarios:\n  a: {expected: fail, held: rule, reason: its own words}\n"
        "  b: {expected: fail, reason: breaks the rule}\n",
    )
    assert entries.verdict("a", "fail", "upstream") == ("KNOWN FAIL", True)
    assert entries.verdict("a", "pass", "upstream") == ("NEW PASS", False)
    assert entries.verdict("a", "pass", "rule") == ("PASS", True)
    assert entries.verdict("a", "fail", "rule") == ("NEW FAIL", False)
    assert entries.reason("a", "rule") is None
    assert entries.reason("a", "upstream") == "its own words"
    # Without `held`, an entry applies at every level.
    assert entries.verdict("b", "fail", "rule") == ("KNOWN FAIL", True)
    assert entries.reason("b", "rule") == "breaks the rule"


def test_held_names_a_level_below_upstream(tmp_path: Path) -> None:
    with pytest.raises(ExpectationsError) as info:
        known(tmp_path, "scenarios:\n  a: {expected: fail, held: upstream, reason: x}\n")
    (problem,) = info.value.problems
    assert problem.endswith("/scenarios/a/held: the level it still holds: live, rule")
