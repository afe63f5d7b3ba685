"""`qwen-code`: Qwen Code, the CLI (`@qwen-code/qwen-code`), as a runtime under test.

Installed on first use with `npm ci` from adapters/qwen-code/package-lock.json into that
folder's ignored node_modules; it is a bundled `cli.js` run on the `node` on PATH (on the
toolchain's Node 22 for a release that needs more: 0.24.4 does). Each
phase is one `qwen -p PROMPT --output-format stream-json` process, headless, with a home of
its own in a fresh folder, its settings file there (OpenAI-compatible auth, usage
statistics and telemetry off), the sentinel key, and, where Linux allows, no network but
loopback. It talks Chat Completions to the scenario's scripted fake, in Qwen Code's dialect
(harness/dialects/qwen-code.json), told apart by content.

Headless, Qwen Code has no human channel: every `ask_user_question` (a root's or a child's)
comes back as a plain, non-error result ("Cannot ask user questions in non-interactive
mode without ACP support..."), and `exit_plan_mode` is declined as a permission it cannot
prompt for. So a scenario whose root must be answered cannot be expressed, and is skipped;
a child's ask is not refused as an error, which misses the rule (a known failure, with the
public issues that report the child's ask: QwenLM/qwen-code #7126, #7835). Its stream-json
carries a child's events, tagged with the `agent` call that started it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._calls import question_back
from harness.adapters._npm import adapter_dir as npm_adapter_dir
from harness.adapters._qwen import pointed
from harness.adapters.clis.adapter import CliAdapter, member
from harness.adapters.clis.host_human import can_use_tool, user_message
from harness.fake.dialect import ASK_TOOL, PLAN_TOOL

if TYPE_CHECKING:
    import subprocess

    from harness.adapters.clis.run import CliRun, Due
    from harness.scenario import Scenario

NAME = "qwen-code"
# The subagent the dialect names, declared by the host as its SDK would (see `opening`).
SUBAGENT = "general-purpose"
SUBAGENT_ABOUT = (
    "General-purpose agent for researching complex questions and executing multi-step tasks."
)
SUBAGENT_PROMPT = (
    "You are a general-purpose agent. Given the user's message, use the tools available to "
    "complete the task, and report what was done."
)
# Where a child's question waits: the end of its wait-for graph.
UNSEEN = "the human channel, which never sees it (Qwen Code forwards no subagent's question)"
# What it settles from its settings file: the OpenAI-compatible provider, and nothing sent
# home (usage statistics are on by default, and look up a host outside loopback).
# Phase kinds, and what headless Qwen Code cannot do with them.
NOT_HERE = {
    "resume": "headless Qwen Code resumes a session only as the root it was; a child's "
    "session cannot be brought back as a root of its own",
}


class QwenCode(CliAdapter):
    """Qwen Code, headless (`-p`): no human channel at all."""

    name = NAME
    label = "Qwen Code"
    program = "qwen"
    features = frozenset(
        {"assembled", "concurrent-children", "hang", "parallel-calls", "plan-mode", "no-answerer"}
    )
    children_in_stream = True
    # `npm ci` refuses its lockfile: the package lists optional clipboard binaries for other
    # platforms that the registry does not have, which `npm install` passes over as
    # optional and `npm ci` counts as out of sync. `npm install` from the same lockfile,
    # which must come out unchanged (harness.adapters._npm), installs the same tree.
    npm = ("install", "--no-audit", "--no-fund", "--no-save")

    # 0.24 gives subagents an agent tool of their own (--max-subagent-depth), but its
    # stream-json does not carry a grandchild's calls, so the adapter cannot read them back.
    no_nesting = (
        "before 0.24 Qwen Code gives its subagents no agent tool; from 0.24 it does, and "
        "its stream-json does not carry a grandchild's calls for the adapter to read"
    )
    not_here = NOT_HERE

    def answered_root(self, scenario: Scenario, root: str) -> str | None:
        """Hosted, a root is answered; a plan review cannot be hosted, nor answered headless."""
        if not _reviews_plans(scenario):
            return None
        return (
            f"{root}, a root, is to be answered by the human in a scenario with a plan review: "
            "in SDK mode, where a host is the human, Qwen Code registers no exit_plan_mode, and "
            "headless it has no human"
        )

    def argv(self, run: CliRun, root: str, prompt: str) -> list[str]:
        if hosted(run.scenario):
            argv = [str(self.cli), "--input-format", "stream-json", "--output-format",
                    "stream-json"]  # fmt: skip
        else:
            argv = [str(self.cli), "-p", prompt, "--output-format", "stream-json"]
        if run.scenario.agents[root].plan_mode:
            argv += ["--approval-mode", "plan"]
        else:
            argv += ["--approval-mode", "default"]
        # A delegation runs without a prompt: headless, 0.24 declines an `agent` call it cannot
        # confirm. The human tools stay unallowed, as a user would leave them.
        return [*argv, "--allowed-tools", "agent"]

    def opening(self, run: CliRun, prompt: str) -> list[dict[str, Any]]:
        if not hosted(run.scenario):
            return []
        # An SDK host declares the subagents its session has: in SDK mode Qwen Code lists
        # no other (not even its builtin general-purpose one, which this one stands for).
        agents = [{"name": SUBAGENT, "description": SUBAGENT_ABOUT, "level": "session",
                   "systemPrompt": SUBAGENT_PROMPT}]  # fmt: skip
        initialize = {"subtype": "initialize", "hooks": None, "agents": agents}
        return [
            {"type": "control_request", "request_id": "initialize", "request": initialize},
            user_message(prompt),
        ]

    def control(
        self, run: CliRun, process: subprocess.Popen[str], event: dict[str, Any]
    ) -> list[Due]:
        return can_use_tool(self.dialect, run, process, event, answers_by_index=True)

    def unasked(self, run: CliRun) -> dict[str, tuple[str, str]]:
        """A child's ask or plan review, pending: in SDK mode its confirmation is never
        forwarded to the host (only a root's reaches it as can_use_tool), and with
        stream-json input the ask's default permission is `ask`, so it waits on a human
        channel that cannot see it, until stdin closes (cli.js of 0.15.10). A child that was
        not offered the tool (0.24 gives a subagent none, QwenLM/qwen-code PR #8219) waits on
        nobody: Qwen Code refuses the call as an unknown tool."""
        if not hosted(run.scenario):
            return {}
        waiting: dict[str, tuple[str, str]] = {}
        for call_id, call in run.stream.calls.items():
            agent = run.scenario.agents.get(call.agent)
            tool = self.dialect.scenario_tool(call.tool)
            if agent is None or agent.spawned_by is None or call_id in run.stream.resulted:
                continue
            if call.tool not in run.offered(call.agent):
                continue
            if tool == PLAN_TOOL:
                waiting[call_id] = ("plan-review", UNSEEN)
            elif tool == ASK_TOOL:
                shown = call.input.get("questions") or [{}]
                waiting[call_id] = (question_back(shown[0], run.scripted)["id"], UNSEEN)
        return waiting

    def environment(self, run: CliRun, home: Path, port: int) -> dict[str, str]:
        """From nothing: no inherited key, token or proxy reaches the CLI."""
        return {**self.bare_environment(run, home), **pointed(home, port)}


def adapter_dir(scenarios: Path | None = None) -> Path:
    """adapters/qwen-code beside the scenarios being run, else in this checkout."""
    return npm_adapter_dir(NAME, "package-lock.json", scenarios)


def qwen_code(scenarios: Path | None = None, version: str | None = None) -> QwenCode:
    return member(QwenCode, adapter_dir(scenarios), version)


def hosted(scenario: Scenario) -> bool:
    """Whether the scenario runs with a host as its human end (SDK mode: stream-json in and
    out, an `initialize` first), else headless (`-p`: no human channel at all). A world
    with no answerer is headless; so is one with a plan review, since in SDK mode Qwen Code
    registers no exit_plan_mode at all (headless, the tool is there and declined)."""
    return scenario.world.answerer != "none" and not _reviews_plans(scenario)


def _reviews_plans(scenario: Scenario) -> bool:
    return any(
        call.tool == PLAN_TOOL
        for agent in scenario.agents.values()
        for turn in agent.script
        for call in turn.calls
    )
