"""The README's examples work as shown: the GitHub Actions recipe parses as YAML and every
`harness` command in it is one the CLI accepts, with those flags; the annotated scenario
of "Reading a scenario" loads and passes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from harness.cli._main import parser

README = (Path(__file__).parents[1] / "README.md").read_text("utf-8")


def recipe() -> dict[Any, Any]:  # YAML 1.1 reads the workflow's `on:` key as True
    section = README.split("### A CI recipe (GitHub Actions)", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None, "the recipe's yaml block is gone"
    doc: dict[Any, Any] = yaml.safe_load(block[1])
    return doc


def commands() -> list[str]:
    steps = recipe()["jobs"]["scenarios"]["steps"]
    runs = [" ".join(step["run"].split()) for step in steps if "run" in step]
    # GitHub fills in ${{ matrix.shard }} before the shell sees it.
    return [re.sub(r"\$\{\{ matrix\.shard \}\}", "2", r) for r in runs if r.startswith("harness")]


def test_the_recipe_is_a_workflow_over_a_matrix_of_shards() -> None:
    doc = recipe()
    assert set(doc) >= {"name", "jobs"} and (doc.get("on") or doc.get(True))
    job = doc["jobs"]["scenarios"]
    shards = job["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    assert all(f"/{len(shards)}" in c for c in commands() if "--shard" in c)
    uploaded = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload")]
    assert uploaded and "report.html" in uploaded[0]["with"]["path"]


def test_each_job_runs_its_scenarios_once() -> None:
    # JUnit, annotations and the page all come from one `harness run` of the shard.
    (command,) = commands()
    args = parser().parse_args(shlex.split(command)[1:])
    assert args.command == "run"
    assert (args.shard, args.format) == ("2/4", "github")
    assert str(args.junit) == "results-2.xml" and str(args.html) == "report-2"
    assert args.adapter == "jsonl:node adapter.mjs"
    uploaded = [s for s in recipe()["jobs"]["scenarios"]["steps"] if "upload" in str(s)]
    assert "report-${{ matrix.shard }}/report.html" in uploaded[0]["with"]["path"]


def test_the_readmes_annotated_scenario_is_one_that_passes(tmp_path: Path) -> None:
    # "Reading a scenario" shows a whole file; it must load and pass as shown.
    from harness.run import run_scenario
    from harness.scenario import load_scenario

    section = README.split("## Reading a scenario", 1)[1]
    block = re.search(r"```yaml\n(id: (\S+).*?)```", section, re.S)
    assert block is not None, "the annotated scenario is gone"
    path = tmp_path / f"{block[2]}.yaml"
    path.write_text(block[1], "utf-8")
    result = run_scenario(load_scenario(path))
    assert result.status == "pass", result.mismatches
