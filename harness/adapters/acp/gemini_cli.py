"""`gemini-cli-acp`: Gemini CLI over ACP (`gemini --acp`), as Zed and other editors run it.

Installed from adapters/gemini-cli-acp/package-lock.json (@google/gemini-cli). Pointed at
the fake's Gemini wire (GOOGLE_GEMINI_BASE_URL, the sentinel key as GEMINI_API_KEY) with a
home of the scenario's own: its settings.json (API-key auth, the model `scripted`, no
update check, no usage statistics or telemetry, plans in `<cwd>/plans`) and one policy rule
allowing its `generalist` subagent, which its ACP session denies otherwise.

What it does (0.61.0):
- It has no ask tool over ACP: `ask_user` is declared only in its terminal UI. A root's
  question cannot be asked (skipped); a child's call is refused as a tool not available
  to it, an error its model is shown, and the parent completes.
- exit_plan_mode takes a plan file's name (`plan.md` in its plans directory), so the
  scripted plan is written there before the run. A root's plan review reaches the client
  as `session/request_permission` (Allow, Reject: no feedback travels).
- A child works in its session's mode. In plan mode a child's exit_plan_mode waits on a
  confirmation that nothing will give: the ACP session asks its client only for its root's
  calls, and a subagent's confirmation goes to a message bus no one answers. The client is
  shown only the parent's delegation in progress: a hang, the wait-for graph ending at a
  client that never sees the question (`unasked`).
- A subagent ends by calling `complete_task` (the dialect's `finish`), and nothing of it
  reaches the client. Whether its calls failed is read from Gemini CLI's own record: the
  chat files in its home, where each tool result is `{"error": ...}` or `{"output": ...}`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import offered
from harness.adapters._npm import adapter_dir
from harness.adapters._offline import choice as offline_choice
from harness.adapters.acp.adapter import AcpAdapter
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL, DELEGATION_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun
    from harness.scenario import Scenario

NAME = "gemini-cli-acp"
MODEL = "scripted"
PLANS = "plans"  # general.plan.directory, in the work dir
PLAN_FILE = "plan.md"  # the dialect's plan_filename
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "model": {"name": MODEL},  # named: no routing classifier request before each turn
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                "plan": {"directory": PLANS}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}  # fmt: skip
# Its ACP session asks its policy about a subagent, and `generalist` is no tool the policy
# knows: denied, in every mode, unless a rule allows it.
POLICY = '[[rule]]\ntoolName = "generalist"\ndecision = "allow"\npriority = 100\n'
UNSEEN = (
    "the ACP client, which never sees it (Gemini CLI asks its client only for its root's "
    "calls; a subagent's confirmation waits on a message bus no one answers)"
)


class GeminiCliAcp(AcpAdapter):
    """Gemini CLI, driven over ACP."""

    name = NAME
    label = "Gemini CLI"
    program = "gemini"
    dialect_name = "gemini-cli"
    # No concurrent-children: Gemini CLI runs a reply's subagent calls one at a time, so a
    # child's reply held until its sibling ends is never released (seen: the backstop fired
    # with the fake holding child-a's last step and child-b not started).
    features = frozenset({"assembled", "hang", "nested-delegation", "no-answerer",
                          "no-user-questions", "parallel-calls", "plan-mode"})  # fmt: skip
    children_unarmed = True  # ask_user is no subagent's tool; a child's call is refused as such
    no_nesting = "Gemini CLI gives its subagents no invoke_agent"

    def skip(self, scenario: Scenario) -> str | None:
        asks = any(a.spawned_by is None and c.tool == ASK_TOOL for a in scenario.agents.values()
                   for t in a.script for c in t.calls)  # fmt: skip
        if asks or any(p.kind == "ask" for p in scenario.phases):
            return (
                "a root asks its user: Gemini CLI declares ask_user only in its terminal UI, "
                "not over ACP (nor headless), so a root's question cannot be asked"
            )
        plans = set(_plans(scenario))
        if len(plans) > 1:
            return (
                f"{len(plans)} different plans: Gemini CLI's exit_plan_mode takes a plan file's "
                f"name, and the run has one plan file ({PLANS}/{PLAN_FILE})"
            )
        for name, agent in scenario.agents.items():
            reviews = any(c.tool == PLAN_TOOL for t in agent.script for c in t.calls)
            if reviews and not agent.plan_mode and _plan_mode(scenario, _root(scenario, name)):
                return (f"{name} calls exit_plan_mode outside plan mode, in a tree that "
                        "plans: Gemini CLI's agents work in their session's one mode")  # fmt: skip
        return super().skip(scenario)

    def argv(self, run: AcpRun) -> list[str]:
        return [str(self.cli), "--acp"]

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        config = home / ".gemini"
        (config / "policies").mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps(SETTINGS), "utf-8")
        (config / "policies" / "harness.toml").write_text(POLICY, "utf-8")
        plan = next(iter(_plans(run.scenario)), None)
        if plan is not None:  # read by exit_plan_mode, as if the agent had written it
            plans = run.folder / "work" / PLANS
            plans.mkdir(parents=True, exist_ok=True)
            (plans / PLAN_FILE).write_text(plan, "utf-8")
        return {
            **self.bare_environment(run, home),
            "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
            "GEMINI_API_KEY": SENTINEL_KEY,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "1",  # one process: no child Node with a bigger heap
            "NO_BROWSER": "1",
        }

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        """Plan mode for the session when its root or a child of it plans: the children
        work in their session's mode."""
        if _plan_mode(run.scenario, root):
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")

    def call_id(self, run: AcpRun, shown: str) -> str:
        """Gemini CLI shows a call as `NAME__ID`, the model's id after its tool's name."""
        if run.issued(shown) is None and "__" in shown:
            issued = shown.rsplit("__", 1)[1]  # an id has no "__"; a tool's name may
            return issued if run.issued(issued) is not None else shown
        return shown

    def unasked(self, run: AcpRun) -> dict[str, tuple[str, str]]:
        """A child's plan review, offered to it (plan mode), with no result while its
        parent's delegation is in progress: Gemini CLI never forwards it, so from the
        moment the call is made nothing can complete it (a call a child is not offered is
        refused at once, and is no wait)."""
        waiting: dict[str, tuple[str, str]] = {}
        if not run.in_progress(DELEGATION_TOOL):
            return waiting
        for call_id, (agent, tool, _) in run.issued_calls().items():
            child = run.scenario.agents.get(agent)
            if child is None or child.spawned_by is None or call_id in run.llm.results:
                continue
            if self.dialect.scenario_tool(tool) == PLAN_TOOL and tool in offered(run.llm, agent):
                waiting[call_id] = ("plan-review", UNSEEN)
        return waiting

    def failed(self, run: AcpRun, call_id: str, text: str) -> bool:
        """A call no update showed failed if Gemini CLI's chat record has its result as an
        `error` (a subagent's record is a file of its own under its session's)."""
        return call_id in _errors(run.folder / "home" / ".gemini" / "tmp")


def _plans(scenario: Scenario) -> list[str]:
    """Every plan the scenario's exit_plan_mode calls carry, in the scripts' order."""
    return [str(c.args.get("plan")) for a in scenario.agents.values() for t in a.script
            for c in t.calls if c.tool == PLAN_TOOL]  # fmt: skip


def _root(scenario: Scenario, agent: str) -> str:
    while (parent := scenario.agents[agent].spawned_by) is not None:
        agent = parent
    return agent


def _plan_mode(scenario: Scenario, root: str) -> bool:
    return any(a.plan_mode and _root(scenario, name) == root
               for name, a in scenario.agents.items())  # fmt: skip


def _errors(records: Path) -> set[str]:
    """The ids of every call whose result Gemini CLI recorded as an error."""
    ids: set[str] = set()
    for path in sorted(records.rglob("*.jsonl")) if records.is_dir() else ():
        for line in path.read_text("utf-8", "replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            for part in entry.get("content") or () if isinstance(entry, dict) else ():
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict) and "error" in (response.get("response") or {}):
                    shown = str(response.get("id"))
                    ids |= {shown, shown.split("__", 1)[-1]}
    return ids


def gemini_cli_acp(scenarios: Path | None = None, version: str | None = None) -> GeminiCliAcp:
    return GeminiCliAcp(adapter_dir(NAME, "package-lock.json", scenarios), offline_choice())
