"""Scenarios generated in code, for the scaling figures: delegation trees of any fan-out and
depth, and small one-delegation variations."""

from __future__ import annotations

from pathlib import Path

from harness.fake import Call, Turn
from harness.scenario import (
    AgentSpec,
    Expect,
    Phase,
    Scenario,
    TextMatch,
    ToolErrorExpect,
    World,
)


def _ask(question_id: str, question: str) -> Turn:
    args = {"questions": [{"id": question_id, "question": question}]}
    return Turn(calls=(Call("ask_user_question", args, "ask"),))


def tree(fanout: int, depth: int) -> Scenario:
    """A root that delegates to `fanout` children in one step, each of which does the same,
    `depth` levels down. Each leaf asks and is refused with DELEGATED_CALLER, then returns
    UNRESOLVED; each parent completes. Agents are named n0, n1, ... (session ids)."""
    agents: dict[str, AgentSpec] = {}
    leaves: list[str] = []
    # Named in pre-order (a node, then each child's whole subtree), without recursion, so a
    # chain 1,000 deep builds as readily as a wide tree.
    names: dict[tuple[int, ...], str] = {}
    stack: list[tuple[int, ...]] = [()]
    while stack:
        path = stack.pop()
        names[path] = f"n{len(names)}"
        if len(path) < depth:
            stack += [(*path, i) for i in reversed(range(fanout))]
    for path, name in names.items():
        parent = names[path[:-1]] if path else None
        if len(path) == depth:
            leaves.append(name)
            question = f"Should {name} use the fallback?"
            script = (_ask(f"q-{name}", question), Turn.text(f"UNRESOLVED: {question}"))
        else:
            children = [names[(*path, i)] for i in range(fanout)]
            calls = tuple(Call("subagent", {"name": c, "prompt": f"Check {c}."}) for c in children)
            script = (Turn(calls=calls), Turn.text(f"DONE {name}"))
        agents[name] = AgentSpec(name=name, script=script, spawned_by=parent)
    leaves.sort(key=lambda n: int(n[1:]))
    root = names[()]
    return Scenario(
        id=f"tree-f{fanout}-d{depth}",
        title=f"generated delegation tree, fan-out {fanout}, depth {depth}",
        path=Path(f"<generated>/tree-f{fanout}-d{depth}.yaml"),
        # Nesting past upstream's default cap of 3 is what a deep tree measures.
        world=World(registry=True, answerer="tripwire", max_depth=None),
        agents=agents,
        phases=(Phase(kind="start", agent=root, prompt="Check everything."),),
        faults=(),
        expect=Expect(
            outcome="completed",
            answerer_calls=0,
            tool_errors=tuple(
                ToolErrorExpect(leaf, "ask_user_question", "DELEGATED_CALLER") for leaf in leaves
            ),
            final={root: TextMatch(equals=f"DONE {root}")},
        ),
        features=("assembled", "nested-delegation", "parallel-calls"),
    )


def small(i: int) -> Scenario:
    """The i-th variation of a one-delegation scenario: its own names, texts and header."""
    child = f"child-{i % 7}"
    question = f"Should deployment {i} use the CUDA fallback?"
    header = ({}, {"delegation_depth": 0}, {"delegation_depth": None})[i % 3]
    agents = {
        "parent": AgentSpec(
            name="parent",
            script=(
                Turn.tool("subagent", {"name": child, "prompt": f"Check environment {i}."}),
                Turn.text(f"PARENT_COMPLETED {i}"),
            ),
        ),
        child: AgentSpec(
            name=child,
            spawned_by="parent",
            session=header,
            script=(_ask(f"q{i}", question), Turn.text(f"UNRESOLVED: {question}")),
        ),
    }
    return Scenario(
        id=f"small-{i}",
        title="generated one-delegation scenario",
        path=Path(f"<generated>/small-{i}.yaml"),
        world=World(registry=True, answerer="tripwire"),
        agents=agents,
        phases=(Phase(kind="start", agent="parent", prompt=f"Prepare deployment {i}."),),
        faults=(),
        expect=Expect(
            outcome="completed",
            answerer_calls=0,
            tool_errors=(ToolErrorExpect(child, "ask_user_question", "DELEGATED_CALLER"),),
            handoffs=(TextMatch(contains=(f"UNRESOLVED: {question}",)),),
            final={"parent": TextMatch(equals=f"PARENT_COMPLETED {i}")},
        ),
        features=("assembled",),
    )
