"""Bad scenario files get one line per problem naming the file and the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_all, load_scenario

GOOD = """\
id: {id}
title: t
covers: [D1]
agents:
  parent:
    script:
      - call: subagent
        as: d
        args: {{name: child, prompt: p}}
      - say: "got {{{{d.result}}}}"
  child:
    spawned_by: parent
    script: [{{say: hi}}]
phases: [{{start: parent, prompt: go}}]
expect: {{outcome: completed, answerer_calls: 0}}
"""


def write(tmp_path: Path, text: str, name: str = "case") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value.problems


def test_a_good_file_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD.format(id="case")))
    assert scenario.agents["child"].spawned_by == "parent"
    assert scenario.world.registry and scenario.world.answerer == "tripwire"


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "id: x\ntitle: [unclosed\n")
    (line,) = problems(path)
    assert line.startswith(f"{path}:3:1: ")


def test_schema_violations_have_json_pointers_and_all_are_reported(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("answerer_calls: 0", "answerer_calls: -1")
    text = text.replace("title: t", "title: t\nworld: {registry: maybe}")
    lines = problems(write(tmp_path, text))
    assert len(lines) == 2
    assert any(": /expect/answerer_calls: " in line for line in lines)
    assert any(": /world/registry: " in line for line in lines)


def test_semantic_errors_name_the_place_and_the_fix(tmp_path: Path) -> None:
    text = (
        GOOD.format(id="other")
        .replace("spawned_by: parent", "spawned_by: ghost")
        .replace("d.result", "e.result")
    )
    lines = problems(write(tmp_path, text))
    joined = "\n".join(lines)
    assert "/id: id 'other' must equal the file name 'case'" in joined
    assert "/agents/child/spawned_by: unknown agent 'ghost'" in joined
    assert "/agents/parent/script/1/say: {{e.result}} names no earlier labelled call" in joined
    assert "/agents/parent/script/0/args/name: subagent name 'child' is not an agent" in joined
    assert all("\n" not in line for line in lines)


def test_load_all_collects_problems_across_files(tmp_path: Path) -> None:
    write(tmp_path, "id: [", "a")
    write(tmp_path, "id: b\n", "b")
    with pytest.raises(ScenarioError) as info:
        load_all(tmp_path)
    files = {line.split(":")[0] for line in info.value.problems}
    assert files == {str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")}


def test_unlabelled_and_unknown_args_path(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("d.result", "d.args.nothing.here")
    (line,) = problems(write(tmp_path, text))
    assert line.endswith("{{d.args.nothing.here}}: args.nothing does not exist")


def test_direct_ask_phase_problems(tmp_path: Path) -> None:
    text = """\
id: case
title: t
covers: [D1, Z9]
phases:
  - ask:
      live: {child: parent, parent: null}
      detach: [ghost]
      caller: nobody
      questions: []
expect: {outcome: completed, answerer_calls: 0, tool_errors: [{agent: x, tool: ask, code: C}]}
"""
    joined = "\n".join(problems(write(tmp_path, text)))
    assert "/phases/0/ask/live/child: owner 'parent' must be entered in live before child" in joined
    assert "/phases/0/ask/detach/0: 'ghost' is not entered in live" in joined
    assert "/phases/0/ask/caller: caller 'nobody' is not entered in live" in joined
    assert "/expect/tool_errors/0/agent: unknown agent 'x'" in joined
    assert "/covers/1: unknown clause 'Z9'; the ids are in scenarios/clauses.yaml" in joined
