"""`claude-code-acp`: Claude Code over ACP, through `@agentclientprotocol/claude-agent-acp`
(the adapter Zed ships), on Node 22.

Installed from adapters/claude-code-acp/package-lock.json; it runs the Claude Code binary
its Agent SDK bundles (2.1.318 with 0.101.0, a 338 MB ELF). Pointed at the fake as the
headless column is: ANTHROPIC_BASE_URL, the sentinel key, a config dir of the scenario's
own, every nonessential request off, and the `default` permission mode (its `auto` mode
asks a classifier model before each delegation, a request no script has).

What it does (0.101.0): a root's AskUserQuestion reaches the client as an
`elicitation/create` form (one field `question_N` per question, and `question_N_custom`
for the text typed), and only when the client advertises forms; ExitPlanMode comes as
`session/request_permission`. A child has neither tool: its call fails ("not available
inside subagents"), shown to the client with `_meta.claudeCode.parentToolUseId`.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.adapters._handback import unframed
from harness.adapters._npm import adapter_dir
from harness.adapters._offline import choice as offline_choice
from harness.adapters.acp.adapter import AcpAdapter
from harness.contract import SENTINEL_KEY

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun

NAME = "claude-code-acp"
SETTINGS = {"permissions": {"defaultMode": "default", "disableAutoMode": "disable"},
            "promptSuggestionEnabled": False}  # fmt: skip
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION": "false",
}


class ClaudeCodeAcp(AcpAdapter):
    """Claude Code, driven over ACP."""

    name = NAME
    label = "Claude Code"
    program = "claude-agent-acp"
    dialect_name = "claude-code"
    features = frozenset({"assembled", "concurrent-children", "hang", "nested-delegation",
                          "no-answerer", "no-user-questions", "parallel-calls",
                          "plan-mode"})  # fmt: skip
    children_unarmed = True  # its subagents have no ask or plan tool
    no_nesting = (
        "claude-agent-acp shows the client no grandchild's calls, and the adapter reads no "
        "transcript of Claude Code's to find them"
    )
    skips = MappingProxyType({
        scenario: f"{what}: ExitPlanMode takes no plan (Claude Code reads it from its plan "
        "file), so the scripted plan cannot be sent"
        for scenario, what in (("exit-plan-mode-heading-rule", "a plan without a # heading"),
                               ("exit-plan-mode-empty-plan", "an empty plan"))
    })  # fmt: skip

    def argv(self, run: AcpRun) -> list[str]:
        return [str(self.cli)]

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        config = home / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "settings.json").write_text(json.dumps(SETTINGS), "utf-8")
        return {
            **self.bare_environment(run, home),
            **QUIET,
            "CLAUDE_CONFIG_DIR": str(config),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
        }

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        if run.scenario.agents[root].plan_mode:
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")

    def normalised(self, run: AcpRun, text: str) -> str:
        """A child's report as its parent read it, the hand-back frame read off."""
        return super().normalised(run, unframed(text))


def claude_code_acp(scenarios: Path | None = None, version: str | None = None) -> ClaudeCodeAcp:
    return ClaudeCodeAcp(adapter_dir(NAME, "package-lock.json", scenarios), offline_choice())
