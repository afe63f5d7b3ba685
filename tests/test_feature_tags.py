"""Feature tags: a closed vocabulary, each tag required exactly when a scenario's content
needs it, and every missing or stray tag one problem line that quotes the evidence. The
loader's other checks are tests/test_loader.py, whose file helpers these share."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario import FEATURES, load_scenario
from tests.test_loader import GOOD, SERVICE, problems, write

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
    pytest.param(
        GOOD, "concurrent-children", '- say: "got {{d.result}}"',
        '- say: "got {{d.result}}"\n        after: child',
        "/agents/parent/script/1 is held until child ends", id="concurrent-children",
    ),
    pytest.param(
        GOOD, "interrupt", "title: t", "title: t\nworld: {answerer: scripted, answers: "
        "{q: interrupt}}", "/world/answers/q interrupts the asking run", id="interrupt",
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
    # and live-lineage come with resume, so they have tests of their own
    # (tests/test_owned_resume.py).
    tested = {case.values[1] for case in TAG_CASES}
    assert tested == set(FEATURES) - {"service", "assembled", "owned-resume", "live-lineage"}


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
