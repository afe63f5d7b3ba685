"""A file's check is remembered by its name and bytes, not its folder: the same scenario
at two places is checked once, yet each load reports its own path, in the scenario and
in every problem and warning line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_scenario
from harness.scenario._load import _loaded

SHIPPED = Path(__file__).parents[1] / "scenarios" / "zero-depth-live-child.yaml"


def test_the_same_file_in_two_folders_is_checked_once_and_keeps_its_path(
    tmp_path: Path,
) -> None:
    copies = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        copies.append(Path(shutil.copy(SHIPPED, tmp_path / folder / SHIPPED.name)))
    _loaded.cache_clear()
    first, second = (load_scenario(path) for path in copies)
    assert _loaded.cache_info().misses == 1
    assert (first.path, second.path) == tuple(copies)
    assert first.id == second.id == "zero-depth-live-child"


def test_a_problem_names_the_path_it_was_loaded_from(tmp_path: Path) -> None:
    bad = "id: broken\ntitle: [unclosed\n"
    for folder in ("a", "b"):
        path = tmp_path / folder / "broken.yaml"
        path.parent.mkdir()
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(ScenarioError) as caught:
            load_scenario(path)
        assert caught.value.problems
        assert all(line.startswith(f"{path}:") for line in caught.value.problems)


def test_a_warning_names_the_path_it_was_loaded_from(tmp_path: Path) -> None:
    # The child's script ends in its tool call: valid, and warned about.
    ending = '      - say: "UNRESOLVED: {{ask.args.questions.0.question}}"\n'
    text = SHIPPED.read_text(encoding="utf-8")
    assert ending in text
    for folder in ("a", "b"):
        path = tmp_path / folder / SHIPPED.name
        path.parent.mkdir()
        path.write_text(text.replace(ending, ""), encoding="utf-8")
        lines = load_scenario(path).warnings
        assert lines and all(line.startswith(f"{path}: /agents/child/") for line in lines)
