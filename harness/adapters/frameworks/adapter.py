"""A Python agent framework as a runtime under test: each scenario's agents built as the
framework's users build them, run in this process against the fake (its SDK's own HTTP
client, served in-process, nothing off loopback), the harness as the host of the top-level
run. Each framework is a subclass that says how agents are built, run and resumed, and
reads what happened; the observation is checked against the protocol and read back in the
scenario's names (harness.adapters._foreign.reported).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import Call, issued, walk
from harness.contract import AdapterError, Observation, RunOptions
from harness.fake.routing import message_text

if TYPE_CHECKING:
    from harness.fake import ScriptedLLM
    from harness.fake.dialect import Dialect
    from harness.scenario import Scenario

# The host's word when it will not put a question to anyone (no scripted answer): the
# tool's result, as the child reads it, where a framework has no refusal of its own.
DECLINED = "The user was not asked: no one can answer this question now."
NO_SERVICE = (
    "a framework's host is always its human end: a world composed without a user-questions "
    "service, or without an agent registry, is a runtime's own make-up, not a framework's"
)


class FrameworkAdapter:
    """The adapter (harness.contract.Adapter) of one framework; subclasses fill it in."""

    name = ""  # --adapter NAME, adapters/NAME
    label = ""  # the framework's name in reports
    package = ""  # its distribution on the package index, and the extra that installs it
    module = ""  # what is imported to see that it is there
    beneath: tuple[str, ...] = ()  # the packages it runs on, named with their versions too
    features: frozenset[str] = frozenset(
        {"assembled", "concurrent-children", "parallel-calls", "nested-delegation"}
    )
    reference = False
    release = ""
    # Scenarios it cannot express, by id, each with why.
    skips: Mapping[str, str] = MappingProxyType({})
    # Whether it names agents (and the tools that reach them) as Python identifiers.
    identifiers = False

    def __init__(self, root: Any = None) -> None:
        import importlib
        import importlib.metadata

        try:
            importlib.import_module(self.module)
        except ImportError:
            raise AdapterError(
                f"adapter {self.name} needs {self.package}: pip install "
                f"'keyless-harness[frameworks]'"
            ) from None
        self.release = importlib.metadata.version(self.package)
        self.expectations = root / "expectations.yaml" if root is not None else None
        shown = [f"{p} {importlib.metadata.version(p)}" for p in (self.package, *self.beneath)]
        self.runtime = f"{self.label} ({', '.join(shown)}), in-process"
        self.dialect = self.make_dialect()

    def close(self) -> None:
        pass

    def make_dialect(self) -> Dialect:
        raise NotImplementedError

    def skip(self, scenario: Scenario) -> str | None:
        """Why a framework cannot express the scenario (None: it runs)."""
        if not scenario.world.user_questions or not scenario.world.registry:
            return NO_SERVICE
        if any(r.failed or r.aborted for r in scenario.world.answers.values()):
            return ("a user-questions provider that throws (`fail`, `abort`): a framework's "
                    "human end is its host's decision, which cannot throw")  # fmt: skip
        if any(a.plan_mode for a in scenario.agents.values()):
            return f"plan mode: {self.label} has no plan mode, and no plan review to leave it"
        if self.identifiers:
            from harness.fake.dialect import as_identifier

            named = [as_identifier(name) for name in scenario.agents]
            if len(set(named)) < len(named):
                return (f"two agents whose names are one Python identifier, which {self.label} "
                        "names agents by: it could not tell them apart")  # fmt: skip
        return self.dialect.cannot.get(scenario.id) or self.skips.get(scenario.id)

    def drive(self, scenario: Scenario, llm: ScriptedLLM) -> dict[str, Any]:
        """Run every phase of `scenario` in this process, the fake serving it; the
        observation's JSON, as the protocol has it, and `hang`, the wait-for graph, when
        the run hung."""
        raise NotImplementedError

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.adapters._foreign import reported
        from harness.fake import ScriptedLLM

        why = self.skip(scenario)
        if why is not None:
            return Observation.empty(scenario.id, "skipped", why)
        chunk = options.wire.chunk if options.wire.chunk is not None else scenario.stream_chunk
        llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()}, chunk=chunk,
                          roots=scenario.roots(), dialect=self.dialect)  # fmt: skip
        with llm.intercept():
            data = self.drive(scenario, llm)
        hang = data.pop("hang", None)  # the wait-for graph travels beside the observation
        seen = reported(self.name, scenario, data, llm)
        seen.hang = hang
        return seen


def answered(scenario: Scenario, questions: list[dict[str, Any]]) -> str | None:
    """What the host answers a question that reached it: the scripted human's answers, as
    upstream's tool result spells them, when it has one for each question; else None (the
    host declines: a tripwire or unreachable answerer, or a question no script answers)."""
    from harness.runtime.questions import answers_text

    world = scenario.world
    wanted = [str(q.get("id")) for q in questions]
    if world.answerer != "scripted" or not all(q in world.answers for q in wanted):
        return None
    return answers_text(tuple(item for q in wanted for item in world.answers[q].items))


def children_first(scenario: Scenario) -> list[str]:
    """The scenario's agents, the deepest first, each depth in the scenario's order: so each
    parent can be built with its children already built."""
    depth = {}
    for name in scenario.agents:
        at, d = name, 0
        while (parent := scenario.agents[at].spawned_by) is not None:
            at, d = parent, d + 1
        depth[name] = d
    order = {name: i for i, name in enumerate(scenario.agents)}
    return sorted(scenario.agents, key=lambda n: (-depth[n], order[n]))


def named_child(scenario: Scenario, agent: str, tool: str, arguments: dict[str, Any]) -> str | None:
    """The child a call of `agent` starts where each child is a tool named after it."""
    spec = scenario.agents.get(tool)
    return tool if spec is not None and spec.spawned_by == agent else None


def identified_child(
    scenario: Scenario, agent: str, tool: str, arguments: dict[str, Any]
) -> str | None:
    """The child a call of `agent` starts where each child is a tool named after it as a
    Python identifier (the dialect's `{identifier}`)."""
    from harness.fake.dialect import as_identifier

    mine = [c for c, a in scenario.agents.items() if a.spawned_by == agent]
    return next((c for c in mine if as_identifier(c) == tool), None)


# (scenario, the calling agent, the tool, its arguments) -> the child the call starts.
ChildOf = Callable[["Scenario", str, str, dict[str, Any]], "str | None"]


def observed(
    scenario: Scenario,
    llm: ScriptedLLM,
    ended: tuple[str, str | None],
    asked: list[dict[str, Any]],
    finals: dict[str, str],
    child_of: ChildOf,
) -> dict[str, Any]:
    """The protocol's observation: how the run ended (outcome, error), the questions as they
    reached the host, each root's final output as the framework returned it; who called
    what and what each model was shown, from the fake (a child's run happens inside its
    parent's tool call, which a framework returns whole)."""
    calls: dict[str, Call] = {}
    children: dict[str, str] = {}
    handed: dict[str, dict[str, Any]] = {}
    for call_id, (agent, tool, arguments) in issued(llm).items():
        calls[call_id] = Call(agent, tool, arguments)
        child = child_of(scenario, agent, tool, arguments)
        result = llm.results.get(call_id)
        if child is not None:
            children[call_id] = child
            if result is not None:
                handed[call_id] = {"parent": agent, "child": child, "child_final": None,
                                   "tool_result": result}  # fmt: skip
    # Each agent's last words as its model said them; a root's as the framework returned.
    final = {a: t for a, m in list(llm.replies) if (t := message_text(m.get("content")))}
    final.update(finals)
    roots = [p.agent for p in scenario.phases if p.agent is not None]
    tool_errors, handoffs = walk(roots, calls, children, handed, {})
    for handoff in handoffs:
        handoff["child_final"] = final.get(handoff["child"])
    outcome, error = ended
    return {
        "outcome": outcome, "error": error, "answerer_calls": len(asked), "asked": asked,
        "direct": [], "tool_errors": tool_errors, "handoffs": handoffs, "final": final,
        "plan_mode": {},
    }  # fmt: skip
