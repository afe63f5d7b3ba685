"""`acp:COMMAND`: any agent that speaks ACP on stdio, by its command alone (Goose, Kimi CLI,
a team's own build of a named one).

The command is split as a POSIX shell would, and run without one, in the scenario's work
dir, offline where Linux allows, with an environment built from nothing: a PATH, a home
and temp dir of the scenario's own, and the fake as every provider a runtime reads from
its environment (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, each API key
the sentinel). Leading NAME=value words add to that environment, as `env` would; in them
and in the command, `{base_url}` (the fake's root URL), `{port}` and `{key}` (the sentinel)
are filled in. One word is the harness's own and never reaches the agent:
`HARNESS_DIALECT=NAME|FILE`, how the agent spells the scenarios' tools (a shipped dialect,
such as `opencode` or `qwen-code`, or a JSON file; default: the scenarios' own names).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.adapters._offline import choice as offline_choice
from harness.adapters.acp.adapter import AcpAdapter
from harness.contract import SENTINEL_KEY, AdapterError

if TYPE_CHECKING:
    from harness.adapters.acp.run import AcpRun

DIALECT = "HARNESS_DIALECT"
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


class GenericAcp(AcpAdapter):
    """An ACP agent named by its command."""

    label = "an ACP agent"
    features = frozenset({"assembled", "no-answerer", "no-user-questions", "parallel-calls",
                          "plan-mode"})  # fmt: skip
    no_nesting = None

    def __init__(self, spec: str, command: list[str], settings: dict[str, str],
                 dialect: str) -> None:  # fmt: skip
        self.dialect_name = dialect
        # A path is taken from where the harness runs; the agent runs in the work dir.
        program = Path(command[0])
        if len(program.parts) > 1:
            command = [str(program.absolute()), *command[1:]]
        self.command, self.settings = command, settings
        self.name = spec
        self.program = program.name
        super().__init__(None, offline_choice())
        self.runtime = f"{shlex.join(command)}, over ACP, {self.where}"

    def argv(self, run: AcpRun) -> list[str]:
        return [self._filled(word, run) for word in self.command]

    def environment(self, run: AcpRun, home: Path, port: int) -> dict[str, str]:
        base = f"http://127.0.0.1:{port}"
        env = {
            **self.bare_environment(run, home),
            "HARNESS_BASE_URL": base,
            "OPENAI_BASE_URL": f"{base}/v1",
            "OPENAI_API_KEY": SENTINEL_KEY,
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": SENTINEL_KEY,
            "GOOGLE_GEMINI_BASE_URL": base,
            "GEMINI_API_KEY": SENTINEL_KEY,
        }
        return env | {k: self._filled(v, run) for k, v in self.settings.items()}

    def _filled(self, word: str, run: AcpRun) -> str:
        port = int(run.server.base_url.rsplit(":", 1)[1].split("/")[0])
        base = f"http://127.0.0.1:{port}"
        return (
            word.replace("{base_url}", base)
            .replace("{port}", str(port))
            .replace("{key}", SENTINEL_KEY)
        )

    async def enter(self, run: AcpRun, conn: Any, session: Any, root: str) -> None:
        """A root in plan mode: the session mode whose id says plan, if it offers one."""
        if not run.scenario.agents[root].plan_mode:
            return
        modes = session.modes.available_modes if session.modes else []
        plan = next((m.id for m in modes if "plan" in m.id.lower()), None)
        if plan is None:
            offered = ", ".join(m.id for m in modes) or "none"
            raise ValueError(f"{root} starts in plan mode, and the agent offers no plan "
                             f"mode (its modes: {offered})")  # fmt: skip
        await conn.set_session_mode(session_id=session.session_id, mode_id=plan)


def generic(spec: str) -> GenericAcp:
    """The adapter of `--adapter acp:COMMAND`; a bad spec is one line that says the fix."""
    try:
        words = shlex.split(spec.removeprefix("acp:"))
    except ValueError as exc:
        raise AdapterError(f"--adapter {spec}: {exc}; quote it as a shell would") from None
    settings: dict[str, str] = {}
    while words and _ASSIGNMENT.fullmatch(words[0]):
        key, _, value = words.pop(0).partition("=")
        settings[key] = value
    if not words:
        raise AdapterError("--adapter acp:COMMAND needs a command after 'acp:'")
    dialect = settings.pop(DIALECT, "reference")
    return GenericAcp(spec, words, settings, dialect)
