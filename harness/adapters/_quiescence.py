"""Whether a run of a foreign runtime can still move: the wait-for graph, decided by
quiescence. Shared by every family that runs a runtime in its own process and sees its
questions come and go (the CLIs, ACP agents): each tells which agents' questions wait on a
human, and this decides from the fake's progress whether anything else can run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness.fake.dialect import DELEGATION_TOOL

if TYPE_CHECKING:
    from harness.scenario import Scenario


def wait_for(
    scenario: Scenario, progress: Mapping[str, int], held_by: Mapping[str, tuple[str, str]]
) -> dict[str, Any] | None:
    """The wait-for graph when nothing can move, else None. `progress` is each agent's
    steps served; `held_by` names the agents whose question waits on a human (its id, and
    who holds it: the answerer, or a human channel that never sees it).
    Called only when no request is in flight: then every agent still going (some steps
    served, some left) must wait on the human, or on a child that waits. One that waits
    on nothing is running; a child yet to start or just finished will ask again."""
    scripts = {n: a.script for n, a in scenario.agents.items()}
    going = [a for a, served in progress.items() if 0 < served < len(scripts[a])]
    waits: dict[str, tuple[str, str]] = {}  # agent -> (how it waits, on whom)
    for agent in going:
        if agent in held_by:
            question, holder = held_by[agent]
            waits[agent] = (f'awaits answer to "{question}"', holder)
            continue
        last = scripts[agent][progress[agent] - 1]
        children = [str(c.args.get("name")) for c in last.calls if c.tool == DELEGATION_TOOL]
        if not children or any(c not in going for c in children):
            return None
        waits[agent] = ("awaits subagent call", children[0])
    if not waits or any(a not in waits for a in going):
        return None
    graph = []
    for root in (a for a in going if scenario.agents[a].spawned_by is None):
        chain, agent = [f"{root} (root)"], root
        while agent in waits:
            how, on = waits[agent]
            owned = f" (owned by {agent})" if on in waits else ""
            chain.append(f"--{how}--> {on}{owned}")
            agent = on
        graph.append(" ".join(chain))
    stopped = {}  # each waiter's last step served, and the calls it made there
    for agent in sorted(waits):
        calls = ", ".join(c.tool for c in scripts[agent][progress[agent] - 1].calls)
        stopped[agent] = f"turn {progress[agent]} ({calls})"
    return {"cycles": [], "graph": graph, "stopped": stopped}
