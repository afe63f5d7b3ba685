"""`codex-acp`: Codex over ACP, through `@agentclientprotocol/codex-acp`, which runs the
Codex app server of the `@openai/codex` it depends on (0.166.0 with 2.6.0).

Installed from adapters/codex-acp/package-lock.json; pointed at the fake through a
CODEX_HOME of the scenario's own (its config.toml: the fake as the only provider, on the
Responses wire, the sentinel key in an environment variable; no update check, no
analytics). The app server's log (APP_SERVER_LOGS) is kept in the scenario's folder.

What it does (2.6.0): Codex asks its user (`request_user_input`) only in Plan mode, its
`collaboration_mode` config option, so a root that asks is started in it, as an editor
user would; the ask comes as an `elicitation/create` form, one field per question id. A
child's ask is refused ("request_user_input can only be used by the root thread"), and
nothing of the child reaches the client: the refusal is known from the app server's log,
where its tool router logs each failed call (`failed`). The other ACP adapter of Codex,
`@zed-industries/codex-acp` 0.16.0, has no Plan mode, and with the ask forced on in
default mode never forwards it (a hang): a column of its own is left for when it changes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._npm import adapter_dir
from harness.adapters._offline import choice as offline_choice
from harness.adapters.acp.adapter import AcpAdapter
from harness.contract import SENTINEL_KEY
from harness.fake.dialect import ASK_TOOL

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun

NAME = "codex-acp"
KEY_VAR = "HARNESS_API_KEY"
LOGS = "codex-app-server-logs"  # a folder in the scenario's
_ROUTER = re.compile(r"ERROR codex_core::tools::router: error=(.*)$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # the app server's log is coloured
# config.toml, section by section: the fake as the only provider, nothing else online.
CONFIG: dict[str, dict[str, object]] = {
    "": {"model": "scripted", "model_provider": "harness", "check_for_update_on_startup": False},
    "model_providers.harness": {"name": "Keyless harness", "base_url": "{base}/v1",
                                "wire_api": "responses", "env_key": KEY_VAR,
                                "request_max_retries": 0, "stream_max_retries": 0},
    "analytics": {"enabled": False},
}  # fmt: skip


def toml(port: int) -> str:
    lines = []
    for section, values in CONFIG.items():
        lines += [f"[{section}]"] if section else []
        for key, value in values.items():
            if isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, int):
                lines.append(f"{key} = {value}")
            else:
                shown = str(value).replace("{base}", f"http://127.0.0.1:{port}")
                lines.append(f'{key} = "{shown}"')
    return "\n".join(lines) + "\n"


class CodexAcp(AcpAdapter):
    """Codex, driven over ACP."""

    name = NAME
    label = "Codex"
    program = "codex-acp"
    dialect_name = "codex"
    features = frozenset({"assembled", "concurrent-children", "hang", "nested-delegation",
                          "no-answerer", "no-user-questions", "parallel-calls"})  # fmt: skip
    no_nesting = "Codex gives its subagents no multi_agent_v1 tools"

    def argv(self, run: AcpRun) -> list[str]:
        return [str(self.cli)]

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(toml(port), encoding="utf-8")
        return {
            **self.bare_environment(run, home),
            "CODEX_HOME": str(codex_home),
            KEY_VAR: SENTINEL_KEY,
            "APP_SERVER_LOGS": str(run.folder / LOGS),
        }

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        """A root that asks its user works in Plan mode, the one mode Codex asks in."""
        asks = any(c.tool == ASK_TOOL for t in run.scenario.agents[root].script for c in t.calls)
        if asks:
            await conn.set_config_option(
                session_id=session.session_id, config_id="collaboration_mode", value="plan"
            )

    def failed(self, run: AcpRun, call_id: str, text: str) -> bool:
        """A call no update showed failed if its result is an error the router logged."""
        logged = {m[1].strip() for path in sorted((run.folder / LOGS).rglob("*"))
                  if path.is_file()
                  for line in path.read_text("utf-8", "replace").splitlines()
                  if (m := _ROUTER.search(_COLOUR.sub("", line)))}  # fmt: skip
        return text.strip() in logged


def codex_acp(scenarios: Path | None = None, version: str | None = None) -> CodexAcp:
    return CodexAcp(adapter_dir(NAME, "package-lock.json", scenarios), offline_choice())
