"""An ACP agent as a runtime under test: installed from npm into adapters/NAME (from its
lockfile, once), or any command (`acp:COMMAND`); one agent process per scenario, driven
by harness.adapters.acp.run with the harness as the editor; skipped where an editor
cannot express the scenario; its observation checked against the protocol's schema and
read back in the scenario's names (harness.adapters._reported). Each agent is a subclass
that says how it is started, pointed at the fake, and put in plan mode.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.adapters._foreign import reported, scenario_folder, served
from harness.adapters._node import first_on_path, installed_program, node_for
from harness.adapters._node import version as node_version
from harness.adapters._npm import installed_version, pinned
from harness.contract import AdapterError, Observation, RunOptions
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun
    from harness.scenario import Scenario
    from harness.scenario._model import Reply

# What every editor advertises: a form to ask its user in; no file system or terminal of
# its own (an agent then uses its own tools, which the scenarios never call).
EDITOR = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False,
          "elicitation": {"form": {}}}  # fmt: skip
NO_ANSWERER = (
    "an editor is always the human end of an ACP agent: a world without a user-questions "
    "answerer is the headless column's"
)
NO_SERVICE = (
    "an editor is always the human end of an ACP agent: a world composed without a "
    "user-questions service is the headless column's"
)


class AcpAdapter:
    """The adapter (harness.contract.Adapter) of one ACP agent; subclasses fill it in."""

    name = ""  # --adapter NAME, adapters/NAME
    label = ""  # the runtime's name in reports
    program = ""  # its executable in node_modules/.bin, and how errors name it
    dialect_name = ""  # how it spells the scenarios' tools (harness/dialects/NAME.json)
    features: frozenset[str] = frozenset()
    reference = False
    release = ""
    npm: tuple[str, ...] = ("ci", "--no-audit", "--no-fund")
    # What it cannot express, each with why: a root the human must answer (None: it can),
    # a child that delegates again (None: its subagents can), per phase kind.
    no_human: str | None = None
    no_nesting: str | None = None
    not_here: Mapping[str, str] = MappingProxyType({})
    # Its subagents have no human tool at all (True): a child's call is refused as unknown
    # before its arguments are read, so a shape the dialect cannot spell stops only a root.
    children_unarmed = False
    # Scenarios it cannot express, by id, each with why (beside the dialect's `cannot`).
    skips: Mapping[str, str] = MappingProxyType({})
    # Agent-specific texts that vary per run (a session id in a task's result), read off.
    varying: tuple[tuple[re.Pattern[str], str], ...] = ()

    def __init__(self, root: Path | None, offline: bool | None = None) -> None:
        from harness.adapters._offline import decided
        from harness.fake.dialect import REFERENCE_DIALECT, Dialect, DialectError

        try:
            import acp  # noqa: F401
        except ImportError:
            raise AdapterError(
                f"adapter {self.name} needs the ACP SDK: pip install 'keyless-harness[acp]'"
            ) from None

        self.root = root
        self.expectations: Path | None = root / "expectations.yaml" if root else None
        try:
            named = self.dialect_name not in ("", "reference")
            self.dialect = Dialect.load(self.dialect_name) if named else REFERENCE_DIALECT
        except DialectError as exc:
            raise AdapterError(f"adapter {self.name}: its dialect: {exc}") from None
        self.offline, self.where = decided(self.name, offline)
        self.node: str | None = None
        self.cli = Path(self.program)
        shown = self.program
        if root is not None:
            self.node = node_for(root, self.name)
            self.cli = installed_program(self.name, root, self.program, self.npm, self.node)
            shown, self.release = pinned(root), installed_version(root)
        if self.node is not None:
            shown += ", on Node {}.{}".format(*node_version(self.node))
        self.runtime = f"{self.label} over ACP ({shown}), {self.where}"

    def close(self) -> None:
        pass

    # -- what an agent says of itself (run.Agent) ---------------------------------------
    def argv(self, run: AcpRun) -> list[str]:
        raise NotImplementedError

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        raise NotImplementedError

    def bare_environment(self, run: AcpRun, home: Path) -> dict[str, str]:
        """What every agent's environment starts from, built from nothing, so that no
        inherited key, token or proxy reaches it: a PATH, a home and temp dir of its own."""
        path = first_on_path(self.node, "/usr/local/bin:/usr/bin:/bin")
        return {"PATH": path, "HOME": str(home), "TMPDIR": str(run.folder), "TERM": "dumb",
                "LANG": "C.UTF-8"}  # fmt: skip

    def capabilities(self) -> dict[str, Any]:
        return dict(EDITOR)

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        return None  # the session's default mode will do

    def permission_reply(
        self,
        tool: str,
        given: dict[str, Any],
        questions: list[dict[str, Any]],
        answers: dict[str, Reply],
    ) -> tuple[bool, dict[str, Any]]:
        """Standard ACP: an option, and nothing else. A plan review approved is allowed;
        an ask is allowed unless dismissed (the answers cannot travel in an option)."""
        from harness.adapters.acp.host import approved

        if tool == PLAN_TOOL:
            return approved(answers), {}
        return not any(a.dismissed for a in answers.values()), {}

    def unasked(self, run: AcpRun) -> dict[str, tuple[str, str]]:
        return {}  # every question it puts to its user reaches the client

    def failed(self, run: AcpRun, call_id: str, text: str) -> bool:
        """Whether a call the agent showed no client ended as an error (its own record
        says): unknown here, so not."""
        return False

    def normalised(self, run: AcpRun, text: str) -> str:
        for session, root in run.roots.items():
            text = text.replace(session, root)
        for pattern, replacement in self.varying:
            text = pattern.sub(replacement, text)
        return text

    def call_id(self, run: AcpRun, shown: str) -> str:
        return shown  # the model's call id, kept as the toolCallId

    # -- one scenario -------------------------------------------------------------------
    def skip(self, scenario: Scenario) -> str | None:
        """Why an editor cannot express the scenario with this agent (None: it runs)."""
        if scenario.world.answerer == "none":
            return NO_ANSWERER
        if not scenario.world.user_questions:
            return NO_SERVICE
        if scenario.id in self.skips:
            return self.skips[scenario.id]
        if any(r.failed or r.aborted for r in scenario.world.answers.values()):
            return ("a user-questions provider that throws (`fail`, `abort`): over ACP the "
                    "human end is the client's answer, which cannot throw")  # fmt: skip
        human = (ASK_TOOL, PLAN_TOOL)
        asks = any(a.spawned_by is None and any(c.tool in human for t in a.script
                   for c in t.calls) for a in scenario.agents.values())  # fmt: skip
        if asks and scenario.world.answerer == "scripted" and self.no_human:
            return f"a root is to be answered, and {self.no_human}"
        nested = any(a.spawned_by in scenario.agents
                     and scenario.agents[a.spawned_by].spawned_by is not None
                     for a in scenario.agents.values())  # fmt: skip
        if nested and self.no_nesting:
            return f"a child delegates again: {self.no_nesting}"
        phase = next((p.kind for p in scenario.phases if p.kind in self.not_here), None)
        if phase is not None:
            return self.not_here[phase]
        why = self.dialect.cannot.get(scenario.id)
        direct = any(p.kind == "ask" for p in scenario.phases)
        return why if not self.children_unarmed or asks or direct else None

    def run(self, scenario: Scenario, options: RunOptions) -> Observation:
        from harness.adapters.acp.observe import observed, transcript
        from harness.adapters.acp.run import AcpRun

        why = self.skip(scenario)
        if why is not None:
            return Observation.empty(scenario.id, "skipped", why)
        with scenario_folder(self.name, scenario.id) as folder:
            llm, server = served(scenario, options, self.dialect, folder, self.offline)
            try:
                run = AcpRun(self, scenario, llm, server, folder, options)
                outcome, error = run.phases()
                data = observed(run, outcome, error)
            except (OSError, LookupError, TypeError, ValueError, AttributeError) as exc:
                why = f"adapter {self.name}: {scenario.id}: {type(exc).__name__}: {exc}"
                return Observation.broken(scenario.id, why)
            finally:
                server.stop()
        seen = reported(self.name, scenario, data, llm)
        seen.hang = run.hang
        seen.sessions = transcript(run)
        return seen
