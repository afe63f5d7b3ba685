"""`opencode-acp`: opencode over ACP (`opencode acp`), as Zed and other editors run it.

The same package and lockfile as the headless column (adapters/opencode, installed once for
both), its known failures in adapters/opencode-acp. The fake is its only provider, given in
OPENCODE_CONFIG_CONTENT (Chat Completions, the sentinel key); its question tool is on
(OPENCODE_ENABLE_QUESTION_TOOL=1), as an editor user turns it on.

What it does with a question (1.18.33): a root's `question` call shows as a tool call in
progress and never reaches the client, neither as `session/request_permission` nor as a
form: opencode waits on its own question service, which only its TUI and web client
answer (anomalyco/opencode #17920). So the run hangs, and the wait-for graph ends at the
client, which never sees the question (`unasked`). Its `general` subagent has no question
tool: a child's ask becomes a call of opencode's `invalid` tool, completed, no error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import offered, question_back
from harness.adapters._npm import adapter_dir, home_dirs
from harness.adapters._offline import choice as offline_choice
from harness.adapters.acp.adapter import AcpAdapter
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun

NAME = "opencode-acp"
PROVIDER, MODEL = "harness", "scripted"
UNSEEN = (
    "the ACP client, which never sees it (opencode waits on its own question service, "
    "which no ACP client is asked through)"
)


class OpencodeAcp(AcpAdapter):
    """opencode, driven over ACP."""

    name = NAME
    label = "opencode"
    program = "opencode"
    dialect_name = "opencode"
    features = frozenset({"assembled", "concurrent-children", "hang", "nested-delegation",
                          "no-answerer", "no-user-questions", "parallel-calls",
                          "plan-mode"})  # fmt: skip
    children_unarmed = True  # its subagents have no ask or plan tool
    npm = ("install", "--no-audit", "--no-fund", "--no-save")  # adapters/opencode says why
    no_nesting = "opencode's general subagent is denied task"
    not_here = MappingProxyType(
        {"resume": "the adapter resumes no session over ACP yet (session/load)"}
    )
    # A task's result, as its parent's model is shown it, is framed with the child's
    # session id; the handoff is what the frame holds (the headless store keeps it bare).
    varying = (
        (
            re.compile(
                r'\A<task id="[^"]*" state="\w+">\n<task_result>\n(.*)\n</task_result>\n</task>\Z',
                re.DOTALL,
            ),
            r"\1",
        ),
        (re.compile(r"\bses_[0-9A-Za-z]+"), "<session>"),
    )

    def __init__(self, install: Path, known: Path, offline: bool | None = None) -> None:
        super().__init__(install, offline)
        self.expectations = known / "expectations.yaml"

    def argv(self, run: AcpRun) -> list[str]:
        return [str(self.cli), "acp", "--pure"]  # --pure: no external plugins

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "Keyless harness",
                    "options": {"baseURL": f"http://127.0.0.1:{port}/v1",
                                "apiKey": SENTINEL_KEY},
                    "models": {MODEL: {"name": MODEL}}}  # fmt: skip
        config = {"provider": {PROVIDER: provider}, "model": f"{PROVIDER}/{MODEL}",
                  "small_model": f"{PROVIDER}/{MODEL}", "autoupdate": False,
                  "share": "disabled"}  # fmt: skip
        return {
            **self.bare_environment(run, home),
            **home_dirs(home),
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_ENABLE_QUESTION_TOOL": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        }

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        """A root in plan mode is opencode's `plan` agent: its `mode` config option."""
        if run.scenario.agents[root].plan_mode:
            await conn.set_config_option(
                session_id=session.session_id, config_id="mode", value="plan"
            )

    def unasked(self, run: AcpRun) -> dict[str, tuple[str, str]]:
        """A root's question or plan exit in progress: opencode never forwards it."""
        waiting: dict[str, tuple[str, str]] = {}
        for tool in (ASK_TOOL, PLAN_TOOL):
            for call_id in run.in_progress(tool):
                made = run.issued(call_id)
                # A tool it was not offered is its `invalid` tool's, which completes alone.
                if made is None or made[1] not in offered(run.llm, made[0]):
                    continue
                shown = made[2].get("questions") or [{}]
                asked = question_back(shown[0], run.scripted)["id"] if tool == ASK_TOOL else None
                waiting[call_id] = (asked or "plan-review", UNSEEN)
        return waiting


def opencode_acp(scenarios: Path | None = None, version: str | None = None) -> OpencodeAcp:
    install = adapter_dir("opencode", "package-lock.json", scenarios)
    known = adapter_dir(NAME, "expectations.yaml", scenarios)
    return OpencodeAcp(install, known, offline_choice())
