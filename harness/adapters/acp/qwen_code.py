"""`qwen-code-acp`: Qwen Code over ACP (`qwen --acp`), as Zed and JetBrains run it.

The same package and lockfile as the headless column (adapters/qwen-code, installed once
for both, on Node 22), its known failures in adapters/qwen-code-acp. Pointed at the fake
as the headless column is (its settings file, OPENAI_BASE_URL, the sentinel key), in the
`default` approval mode with its agent tool allowed (its `auto` mode asks a classifier
model first, and `default` asks the user before each delegation).

What it does: a root's `ask_user_question` and `exit_plan_mode` reach the client as
`session/request_permission` (an ask's answers go back in a non-standard `answers` field,
by question index); from 0.21.10 a subagent has no ask tool (PR #8219), and its call
fails, shown to the client with `_meta.parentToolCallId`.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters._offline import choice as offline_choice
from harness.adapters._qwen import SETTINGS as QWEN_SETTINGS
from harness.adapters._qwen import pointed
from harness.adapters.acp.adapter import AcpAdapter
from harness.adapters.acp.host import approved, chosen
from harness.fake.dialect import PLAN_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun
    from harness.scenario._model import Reply

NAME = "qwen-code-acp"
# Its settings file: the OpenAI-compatible provider, nothing sent home, and no follow-up
# suggestion (over ACP, a turn that ends may send the model a `[SUGGESTION MODE: ...]`
# request of its own, which no script has: an editor's nicety, as Claude Code's is).
SETTINGS = {**QWEN_SETTINGS, "ui": {"enableFollowupSuggestions": False}}


class QwenCodeAcp(AcpAdapter):
    """Qwen Code, driven over ACP."""

    name = NAME
    label = "Qwen Code"
    program = "qwen"
    dialect_name = "qwen-code"
    features = frozenset({"assembled", "concurrent-children", "hang", "nested-delegation",
                          "no-answerer", "no-user-questions", "parallel-calls",
                          "plan-mode"})  # fmt: skip
    children_unarmed = True  # its subagents have no ask or plan tool
    npm = ("install", "--no-audit", "--no-fund", "--no-save")  # adapters/qwen-code says why
    no_nesting = "its ACP updates do not carry a grandchild's calls for the adapter to read"
    not_here = MappingProxyType(
        {"resume": "the adapter resumes no session over ACP yet (session/load)"}
    )

    def __init__(self, install: Path, known: Path, offline: bool | None = None) -> None:
        super().__init__(install, offline)
        self.expectations = known / "expectations.yaml"

    def argv(self, run: AcpRun) -> list[str]:
        return [str(self.cli), "--acp", "--approval-mode", "default", "--allowed-tools", "agent"]

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        return {**self.bare_environment(run, home), **pointed(home, port, SETTINGS)}

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        if run.scenario.agents[root].plan_mode:
            await conn.set_session_mode(session_id=session.session_id, mode_id="plan")

    def permission_reply(
        self,
        tool: str,
        given: dict[str, Any],
        questions: list[dict[str, Any]],
        answers: dict[str, Reply],
    ) -> tuple[bool, dict[str, Any]]:
        """A plan review approved or not; an ask submitted with `answers`: question index ->
        the labels chosen or the text typed."""
        if tool == PLAN_TOOL:
            return approved(answers), {}
        if any(a.dismissed for a in answers.values()):
            return False, {}
        by_index = {str(i): chosen(answers[q["id"]]) for i, q in enumerate(questions)
                    if q["id"] in answers}  # fmt: skip
        return True, {"answers": by_index}


def qwen_code_acp(scenarios: Path | None = None, version: str | None = None) -> QwenCodeAcp:
    install = adapter_dir("qwen-code", "package-lock.json", scenarios)
    known = adapter_dir(NAME, "expectations.yaml", scenarios)
    return QwenCodeAcp(install, known, offline_choice())
