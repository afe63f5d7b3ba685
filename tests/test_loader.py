"""Bad scenario files get one line per problem naming the file, the place and the fix, and
every problem in a file is reported at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import FEATURES, ScenarioError, load_all, load_paths, load_scenario

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


# -- features: a closed vocabulary, each tag decided by the content ------------------------
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
CHILD = "    spawned_by: parent\n    script: [{say: hi}]\n"


# One case per tag besides the two kinds: the base file, the tag, a replacement that makes
# the content need it, and the evidence the problem quotes.
TAG_CASES = [
    pytest.param(
        GOOD, "resume", "[{start: parent, prompt: go}]",
        "[{start: parent, prompt: go}, {resume: child, prompt: go}]",
        "/phases/1 resumes child", id="resume",
    ),
    pytest.param(
        GOOD, "plan-mode", CHILD, CHILD + "    plan_mode: true\n",
        "/agents/child/plan_mode is true", id="plan-mode-agent",
    ),
    pytest.param(
        GOOD, "plan-mode", "[{say: hi}]", "[{call: exit_plan_mode, args: {plan: '# P'}}]",
        "/agents/child/script/0 calls exit_plan_mode", id="plan-mode-call",
    ),
    pytest.param(
        GOOD, "plan-mode", "answerer_calls: 0", "answerer_calls: 0, plan_mode: {child: false}",
        "/expect/plan_mode is set", id="plan-mode-expect",
    ),
    pytest.param(
        SERVICE, "intent", "question: a}",
        "question: a, detail: d, options: [{label: A}], intent: {kind: k, approve: A}}",
        "/phases/0/ask/questions/0 declares an intent", id="intent",
    ),
    pytest.param(
        GOOD, "faults", "expect:",
        "faults: [{kind: aborted, agent: child, tool: ask_user_question}]\nexpect:",
        "/faults/0 injects aborted", id="faults",
    ),
    pytest.param(
        GOOD, "header-override", CHILD, CHILD + "    session: {delegation_depth: 0}\n",
        "/agents/child/session overrides the durable header", id="header-override",
    ),
    pytest.param(
        GOOD, "parallel-calls", "[{say: hi}]",
        "[{calls: [{call: ask_user_question, args: {questions: []}},"
        " {call: ask_user_question, args: {questions: []}}]}]",
        "/agents/child/script/0 makes 2 tool calls in one reply", id="parallel-calls",
    ),
    pytest.param(
        GOOD, "nested-delegation", CHILD,
        "    spawned_by: parent\n"
        "    script: [{call: subagent, args: {name: grand, prompt: p}}]\n"
        "  grand:\n    spawned_by: child\n    script: [{say: hi}]\n",
        "/agents/grand is spawned_by child, itself spawned_by parent", id="nested-delegation",
    ),
    pytest.param(
        GOOD, "hang", "outcome: completed", "outcome: hang", "/expect/outcome is hang",
        id="hang",
    ),
    pytest.param(
        GOOD, "guard-variant", "title: t", "title: t\nguard: tool-only",
        "/guard is tool-only, a test-only guard", id="guard-variant",
    ),
    pytest.param(
        GOOD, "no-registry", "title: t", "title: t\nworld: {registry: absent}",
        "/world/registry is absent", id="no-registry",
    ),
    pytest.param(
        SERVICE, "no-answerer", "title: t", "title: t\nworld: {answerer: none}",
        "/world/answerer is none", id="no-answerer",
    ),
    pytest.param(
        SERVICE, "provider-lifecycle", "caller: lead", "caller: lead\n      provider: [register]",
        "/phases/0/ask registers or disposes a provider", id="provider-lifecycle",
    ),
    pytest.param(
        GOOD, "ask-during-run", "[{start: parent, prompt: go}]",
        "[{start: parent, prompt: go},"
        " {ask: {while: {agent: child, before_step: 1}, questions: [{id: q, question: a}]}}]",
        "/phases/1/ask asks while a model phase runs", id="ask-during-run",
    ),
    pytest.param(
        GOOD, "no-user-questions", "title: t", "title: t\nworld: {user_questions: absent}",
        "/world/user_questions is absent", id="no-user-questions",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("base", "tag", "old", "new", "evidence"), TAG_CASES)
def test_each_tag_is_required_exactly_when_the_content_needs_it(
    tmp_path: Path, base: str, tag: str, old: str, new: str, evidence: str
) -> None:
    text = base.format(id="case") if base is GOOD else base
    kind = "service" if base is SERVICE else "assembled"
    features_line = text.splitlines().index(f"features: [{kind}]") + 1
    assert old in text
    needs = text.replace(old, new)
    (line,) = problems(path := write(tmp_path, needs))
    assert line.startswith(f"{path}: /features: missing {tag!r}: {evidence}; add it (line ")
    tagged = needs.replace(f"[{kind}]", f"[{kind}, {tag}]")
    assert load_scenario(write(tmp_path, tagged)).features == (kind, tag)
    # The other way round: the tag on content that does not need it.
    (line,) = problems(path := write(tmp_path, text.replace(f"[{kind}]", f"[{kind}, {tag}]")))
    assert line.startswith(f"{path}: /features/1: {tag!r} does not apply: ")
    assert line.endswith(f"; remove it (line {features_line})")


def test_every_tag_but_the_two_kinds_has_a_case() -> None:
    # service and assembled, one of which every file carries, are tested below; owned-resume
    # comes with resume, so it has tests of its own (tests/test_owned_resume.py).
    tested = {case.values[1] for case in TAG_CASES}
    assert tested == set(FEATURES) - {"service", "assembled", "owned-resume"}


def test_the_wrong_kind_is_one_problem_with_the_swap(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.format(id="case").replace("[assembled]", "[service]"))
    assert problems(path) == [
        f"{path}: /features/0: 'service' does not apply: /phases/0 starts parent, which needs "
        "the model; replace it with 'assembled' (line 16)"
    ]
    path = write(tmp_path, SERVICE.replace("[service]", "[assembled]"))
    assert problems(path) == [
        f"{path}: /features/0: 'assembled' does not apply: every phase is a direct ask, with no "
        "model; replace it with 'service' (line 10)"
    ]


def test_both_kinds_or_neither(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.format(id="case").replace("[assembled]", "[service, assembled]"))
    (line,) = problems(path)
    assert "/features/0: 'service' does not apply: " in line and line.endswith(
        "; remove it (line 16)"
    )
    path = write(tmp_path, GOOD.format(id="case").replace("[assembled]", "[hang]"))
    assert (
        "\n".join(problems(path)).count("missing 'assembled': /phases/0 starts parent; add it") == 1
    )


@pytest.mark.parametrize(
    ("features", "message"),
    [
        ("[assembled, servce]", "/features/1: 'servce' is not one of ['service', 'assembled',"),
        ("[]", "/features: [] should be non-empty"),
        ("[assembled, assembled]", "/features: ['assembled', 'assembled'] has non-unique elements"),
        ("assembled", "/features: 'assembled' is not of type 'array'"),
    ],
)
def test_a_malformed_list_is_the_schemas_one_problem(
    tmp_path: Path, features: str, message: str
) -> None:
    # Refused by the schema, so not checked against the content again: one mistake, one line.
    path = write(tmp_path, GOOD.format(id="case").replace("[assembled]", features))
    (line,) = problems(path)
    assert line.startswith(f"{path}: {message}")


def test_features_are_required(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.format(id="case").replace("features: [assembled]\n", ""))
    assert problems(path) == [
        f"{path}: /: missing 'features': what a runtime needs to run it, e.g. features: [assembled]"
    ]


def test_a_refused_section_decides_no_tag(tmp_path: Path) -> None:
    # world is refused, so whether no-registry applies is unknown: no second problem.
    text = GOOD.format(id="case").replace("title: t", "title: t\nworld: {registry: nowhere}")
    (line,) = problems(path := write(tmp_path, text))
    assert line.startswith(f"{path}: /world/registry: 'nowhere' is not one of")
    # The sections that are sound still decide theirs.
    text = text.replace("outcome: completed", "outcome: hang")
    lines = problems(write(tmp_path, text))
    assert len(lines) == 2 and "/features: missing 'hang': /expect/outcome is hang" in lines[1]


def test_the_tags_are_kept_in_file_order(tmp_path: Path) -> None:
    text = GOOD.format(id="case").replace("title: t", "title: t\nguard: none")
    text = text.replace("outcome: completed", "outcome: hang")
    text = text.replace("[assembled]", "[hang, assembled, guard-variant]")
    assert load_scenario(write(tmp_path, text)).features == ("hang", "assembled", "guard-variant")


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
