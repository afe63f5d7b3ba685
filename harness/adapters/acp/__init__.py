"""The ACP family: an agent an editor runs over the Agent Client Protocol (JSON-RPC on
stdio), with the harness as the editor, the client that plays the human. Built on the
official Python SDK (`agent-client-protocol`): its connection, its schema, its router.

- `run.py`: one scenario on one agent process: `initialize`, a `session/new` per root in
  the scenario's fresh folder, the mode a root needs, one `session/prompt` per phase; a
  hang decided by quiescence (harness.adapters._quiescence), never by a clock.
- `host.py`: the human end: `session/request_permission` and `elicitation/create`
  answered as the scenario's answerer says, and every `session/update` kept.
- `observe.py`: the observation: each tool call's status from the agent's updates, who
  made it and what each model was shown from the fake.
- `adapter.py`: the family's adapter: install from a lockfile, offline, skip reasons.
- one module per named agent (`claude-code-acp`, `qwen-code-acp`, `codex-acp`,
  `opencode-acp`, `gemini-cli-acp`), and `generic.py` for any other (`--adapter
  acp:COMMAND`).
"""
