"""A scenario, as the runner consumes it: plain frozen data, already validated."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.runtime.questions import Answer, Question
from harness.scenario._turn import Turn

# The closed vocabulary of `features:` tags, in the order scenarios/schema.json lists them
# (its $defs/feature enum, which describes each one). Mirrored here so Python code can
# name the known tags without reading the schema; tests/test_selfcheck.py keeps the two
# equal, and harness.scenario._check holds the rule that decides each tag from content.
FEATURES: tuple[str, ...] = (
    "service",
    "assembled",
    "resume",
    "plan-mode",
    "intent",
    "faults",
    "header-override",
    "parallel-calls",
    "nested-delegation",
    "hang",
    "guard-variant",
    "no-registry",
    "no-answerer",
    "ask-during-run",
    "no-user-questions",
    "owned-resume",
    "provider-lifecycle",
    "live-lineage",
    "concurrent-children",
    "interrupt",
)

# The caller check the design document decides: every scenario runs under it unless it
# names another guard (one kept to prove the scenarios would catch it).
DEFAULT_GUARD = "runtime-ownership"


@dataclass(frozen=True)
class Reply:
    """The scripted human's reply to one question: its answer items (usually one; none or
    duplicates are what a careless UI might send), or dismissed, closing the question
    instead of answering it, or failed: the provider itself throws (a UI that broke), an
    error that is no UserQuestionError, or aborted: the provider throws ASK_ABORTED (its wait
    was aborted before the human answered), or interrupted: the host stops the asking run
    while the question waits, and the provider rejects with ASK_ABORTED once the request's
    signal fires."""

    items: tuple[Answer, ...] = ()
    dismissed: bool = False
    failed: bool = False
    aborted: bool = False
    interrupted: bool = False


@dataclass(frozen=True)
class World:
    registry: bool = True
    user_questions: bool = True  # False: no user-questions service composed at all
    answerer: str = "tripwire"  # tripwire | scripted | unreachable | none
    answers: dict[str, Reply] = field(default_factory=dict)
    answer_delay_ms: int = 0
    # The delegation nesting cap: upstream's subagent tool's maxDepth, 3 by default; None:
    # none (a generated chain a thousand deep, say).
    max_depth: int | None = 3


@dataclass(frozen=True)
class AgentSpec:
    name: str
    script: tuple[Turn, ...]
    spawned_by: str | None = None
    session: dict[str, Any] = field(default_factory=dict)
    plan_mode: bool = False


@dataclass(frozen=True)
class DirectAsk:
    """A service-level call: the registry as declared, then one ask()."""

    questions: tuple[Question, ...]
    live: tuple[tuple[str, str | None], ...] = ()
    reenter: tuple[str, ...] = ()
    detach: tuple[str, ...] = ()
    detach_replaced: tuple[str, ...] = ()  # replaced entries whose detach is called again
    caller: str | None = None
    stale: bool = False
    aborted: bool = False
    # Agent -> the durable header fields its session carries (delegation_depth,
    # parent_session), for the live entries that declare one.
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Provider lifecycle calls before the ask, in order: "register" (a second provider) or
    # "dispose" (the world provider's disposer).
    provider: tuple[str, ...] = ()
    # (agent, step): ask while a model phase runs, right before that agent's step is served,
    # against the running runtime's registry and service; None: after the previous phase.
    during: tuple[str, int] | None = None


@dataclass(frozen=True)
class Phase:
    kind: str  # start | resume | ask
    agent: str | None
    prompt: str = ""
    ask: DirectAsk | None = None
    # resume only: the live agent whose scope the session is resumed in (None: a root).
    owner: str | None = None
    # resume only: live roots entered first, owning nothing (the header's parent among them).
    alongside: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fault:
    kind: str
    agent: str
    tool: str


@dataclass(frozen=True)
class TextMatch:
    contains: tuple[str, ...] = ()
    equals: str | None = None

    def mismatch(self, text: str | None) -> str | None:
        """None when `text` matches; otherwise why not."""
        if text is None:
            return "nothing was said"
        if self.equals is not None and text != self.equals:
            return f"expected exactly {self.equals!r}, got {text!r}"
        missing = [c for c in self.contains if c not in text]
        if missing:
            return f"expected it to contain {missing[0]!r}, got {text!r}"
        return None

    def describe(self) -> str:
        if self.equals is not None:
            return f"= {self.equals!r}"
        return " & ".join(f"~{c!r}" for c in self.contains)


@dataclass(frozen=True)
class ToolErrorExpect:
    agent: str | None
    tool: str
    code: str
    text: TextMatch | None = None  # the model-visible text, when the scenario pins it


@dataclass(frozen=True)
class DirectExpect:
    """One ask phase's result: the answers, or the error's code (and text, if pinned)."""

    answers: tuple[Answer, ...] | None = None
    code: str | None = None
    text: TextMatch | None = None


@dataclass(frozen=True)
class AskedExpect:
    """One call that reached the answerer: each question as written in the scenario (its id,
    plus whichever fields it pins), and who asked, if `caller_pinned`."""

    questions: tuple[dict[str, Any], ...]
    caller: str | None = None
    caller_pinned: bool = False


@dataclass(frozen=True)
class Expect:
    outcome: str
    answerer_calls: int
    tool_errors: tuple[ToolErrorExpect, ...] = ()
    handoffs: tuple[TextMatch, ...] | None = None
    final: dict[str, TextMatch] = field(default_factory=dict)
    plan_mode: dict[str, bool] = field(default_factory=dict)
    direct: tuple[DirectExpect, ...] | None = None
    asked: tuple[AskedExpect, ...] | None = None


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    path: Path
    world: World
    agents: dict[str, AgentSpec]
    phases: tuple[Phase, ...]
    faults: tuple[Fault, ...]
    expect: Expect
    covers: tuple[str, ...] = ()
    # As written in the file (order kept, so a report can echo the author's list); a
    # default so code that builds a Scenario by hand need not invent tags.
    features: tuple[str, ...] = ()
    guard: str = DEFAULT_GUARD
    stream_chunk: int | None = None
    description: str = ""
    # Valid, but almost certainly not meant: one line each, like a problem's.
    warnings: tuple[str, ...] = ()

    def roots(self) -> list[str]:
        """The agents root phases start, in phase order: whom a new conversation that is no
        delegation's child belongs to, when the runtime does not name its agents."""
        return [str(p.agent) for p in self.phases if p.kind == "start"]
