"""Bad scenario files get one line per problem naming the file, the place and the fix, and
every problem in a file is reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import ScenarioError, load_all, load_paths, load_scenario

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
features: [assembled]
"""

SERVICE = """\
id: case
title: t
covers: [D1]
phases:
  - ask:
      live: [{agent: lead}]
      caller: lead
      questions: [{id: q, question: a}]
expect: {outcome: completed, answerer_calls: 0}
features: [service]
"""


def write(tmp_path: Path, text: str | bytes, name: str = "case") -> Path:
    path = tmp_path / f"{name}.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    lines = info.value.problems
    assert lines and all(line.startswith(f"{path}:") and "\n" not in line for line in lines)
    return lines


def test_a_good_file_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD.format(id="case")))
    assert scenario.agents["child"].spawned_by == "parent"
    assert scenario.world.registry and scenario.world.answerer == "tripwire"


# -- schema: path: /pointer: message (line N) -----------------------------------------------
def test_schema_violations_have_json_pointers_lines_and_all_are_reported(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("answerer_calls: 0", "answerer_calls: -1")
    text = text.replace("title: t", "title: t\nworld: {registry: maybe}")
    path = write(tmp_path, text)
    assert problems(path) == [
        f"{path}: /world/registry: 'maybe' is not one of ['present', 'absent'] (line 3)",
        f"{path}: /expect/answerer_calls: -1 is less than the minimum of 0 (line 16)",
    ]


def test_an_unknown_field_suggests_the_likely_one(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("spawned_by: parent", "spawn_by: parent")
    lines = problems(write(tmp_path, text))
    assert any(
        "/agents/child/spawn_by: unknown field 'spawn_by'; did you mean 'spawned_by'? (line 12)"
        in line
        for line in lines
    )


def test_schema_and_semantic_problems_come_together(tmp_path: Path) -> None:
    # The schema refuses /world; the agents are sound, so their checks still run.
    text = GOOD.format(id="case").replace("title: t", "title: t\nworld: {registry: maybe}")
    text = text.replace("d.result", "e.result")
    joined = "\n".join(problems(write(tmp_path, text)))
    assert "/world/registry: 'maybe' is not one of" in joined
    assert "/agents/parent/script/1/say: {{e.result}} names no earlier labelled call" in joined


def test_a_section_the_schema_refused_is_not_checked_again(tmp_path: Path) -> None:
    # A broken agents section must not also produce "unknown agent" noise elsewhere.
    text = GOOD.format(id="case").replace("script: [{say: hi}]", "script: {}")
    lines = problems(write(tmp_path, text))
    assert len(lines) == 1 and "/agents/child/script: {} is not of type 'array'" in lines[0]


def test_only_a_child_may_have_an_empty_script(tmp_path: Path) -> None:
    # A child the runtime must refuse before it starts never asks the model anything.
    child = GOOD.format(id="case").replace("script: [{say: hi}]", "script: []")
    assert load_scenario(write(tmp_path, child)).agents["child"].script == ()
    root = (
        GOOD.format(id="case")
        .replace(
            "phases: [{start: parent, prompt: go}]",
            "phases: [{start: parent, prompt: go}, {start: idle, prompt: go}]",
        )
        .replace("  child:\n", "  idle:\n    script: []\n  child:\n")
    )
    (line,) = problems(write(tmp_path, root))
    assert (
        ": /agents/idle/script: a root's script is empty; give it the replies it is to make "
        "(only a child that never starts has none) (line " in line
    )


# -- semantic checks ---------------------------------------------------------------------
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


def test_unlabelled_and_unknown_args_path(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("d.result", "d.args.nothing.here")
    (line,) = problems(write(tmp_path, text))
    # It says what is there, so the fix is in the message.
    assert line.endswith(
        "{{d.args.nothing.here}}: args.nothing does not exist; there are: name, prompt (line 10)"
    )


def test_resuming_a_session_before_it_exists(tmp_path: Path) -> None:
    text = (
        GOOD.format(id="case")
        .replace(
            "phases: [{start: parent, prompt: go}]",
            "phases: [{resume: child, prompt: go}, {start: parent, prompt: go}]",
        )
        .replace("[assembled]", "[assembled, resume]")
    )
    (line,) = problems(write(tmp_path, text))
    assert "/phases/0/resume: session 'child' does not exist yet; an earlier phase must" in line


def test_resuming_a_child_after_its_parent_ran_is_fine(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace(
        "script: [{say: hi}]", "script: [{say: hi}, {say: again}]"
    )
    text = text.replace(
        "phases: [{start: parent, prompt: go}]",
        "phases: [{start: parent, prompt: go}, {resume: child, prompt: go}]",
    ).replace("[assembled]", "[assembled, resume]")
    assert [p.kind for p in load_scenario(write(tmp_path, text)).phases] == ["start", "resume"]


def test_agents_that_never_run(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace(
        "phases:",
        "  idle:\n    script: [{say: hi}]\n  orphan:\n    spawned_by: idle\n"
        "    script: [{say: hi}]\nphases:",
    )
    joined = "\n".join(problems(write(tmp_path, text)))
    assert "/agents/idle: idle is never run: add a phase 'start: idle'" in joined
    assert (
        "/agents/orphan/spawned_by: idle's script never calls subagent with name orphan" in joined
    )


def test_answers_without_the_scripted_answerer(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace(
        "title: t", "title: t\nworld: {answerer: tripwire, answers: {q: {selected: [a]}}}"
    )
    (line,) = problems(write(tmp_path, text))
    assert "/world/answers: only the scripted answerer uses answers; set answerer: scripted" in line


def test_no_user_questions_service_leaves_nothing_to_answer_or_ask(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace(
        "title: t", "title: t\nworld: {user_questions: absent, answerer: scripted}"
    )
    text = text.replace("features: [assembled]", "features: [assembled, no-user-questions]")
    (line,) = problems(write(tmp_path, text))
    assert "/world/answerer: with no user-questions service there is nothing to register" in line
    service = SERVICE.replace("title: t", "title: t\nworld: {user_questions: absent}")
    service = service.replace("[service]", "[service, no-user-questions]")
    (line,) = problems(write(tmp_path, service))
    assert "/phases/0: an ask phase calls the user-questions service" in line


def test_direct_ask_phase_problems(tmp_path: Path) -> None:
    text = """\
id: case
title: t
covers: [D1, Z9]
phases:
  - ask:
      live: [{agent: child, owner: parent}, {agent: parent}, {agent: child}]
      detach: [ghost]
      caller: nobody
      questions: [{id: q, question: a}, {id: q, question: b}]
expect: {outcome: completed, answerer_calls: 0, tool_errors: [{agent: x, tool: ask, code: C}]}
"""
    joined = "\n".join(problems(write(tmp_path, text)))
    assert "/phases/0/ask/live/0/owner: owner 'parent' must be entered in live before" in joined
    assert "/phases/0/ask/live/2/agent: 'child' is already entered; use reenter" in joined
    assert "/phases/0/ask/detach/0: 'ghost' is not entered in live" in joined
    assert "/phases/0/ask/caller: caller 'nobody' is not entered in live" in joined
    assert "/phases/0/ask/questions/1/id: question id 'q' is already used in this batch" in joined
    assert "/expect/tool_errors/0/agent: unknown agent 'x'" in joined
    assert "/covers/1: unknown clause 'Z9'; the ids are in scenarios/clauses.yaml" in joined


# -- across files ------------------------------------------------------------------------
def test_load_all_collects_problems_across_files(tmp_path: Path) -> None:
    write(tmp_path, "id: [", "a")
    write(tmp_path, "id: b\n", "b")
    with pytest.raises(ScenarioError) as info:
        load_all(tmp_path)
    files = {line.split(":")[0] for line in info.value.problems}
    assert files == {str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")}


def test_an_id_used_by_two_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = write(tmp_path / "one", GOOD.format(id="case"))
    second = write(tmp_path / "two", GOOD.format(id="case"))
    with pytest.raises(ScenarioError) as info:
        load_paths([first, second])
    assert info.value.problems == [
        f"{second}: /id: id 'case' is also used by {first}; scenario ids are unique"
    ]


def test_a_line_break_in_quoted_text_stays_one_line(tmp_path: Path) -> None:
    # Found by the fuzz test: a template split across lines in a quoted scalar.
    text = GOOD.format(id="case").replace('"got {{d.result}}"', '"got {{d\n          .result}}"')
    (line,) = problems(write(tmp_path, text))
    assert "template {{d .result}} is not LABEL.result" in line


def test_an_unknown_key_is_reported_at_its_own_line(tmp_path: Path) -> None:
    # The value starts a line later; the mistake is the key.
    text = GOOD.format(id="case").replace(
        "agents:\n", "world:\n  answerr:\n    tripwire\nagents:\n"
    )
    (line,) = problems(write(tmp_path, text))
    key_line = text.splitlines().index("  answerr:") + 1
    assert line.endswith(
        f"/world/answerr: unknown field 'answerr'; did you mean 'answerer'? (line {key_line})"
    )


def test_a_missing_expect_says_what_it_needs(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("expect: {outcome: completed, answerer_calls: 0}\n", "")
    (line,) = problems(write(tmp_path, text))
    assert line.endswith(
        "/: missing 'expect': what the run must show; at least outcome (completed, error or "
        "hang) and answerer_calls (a count), e.g. expect: {outcome: completed, answerer_calls: 0}"
    )
