"""The agent-CLI family: a real CLI, installed from its npm lockfile into adapters/NAME,
run one process per phase against the scenario's fake, headless or as an SDK host.

A member is one module, or one package where the CLI has a reader of its own: a subclass
of `adapter.CliAdapter` saying how its CLI is started and spoken to (its argv, an
environment built from nothing, its dialect, the scenarios it cannot express and why) and
a `Reader` of what it writes. The family gives it the rest: the install (`_npm`), the
runner (`run.CliRun`: a hang decided by quiescence with its wait-for graph, the backstop a
no-progress watchdog), the human end of a CLI that asks its host (`host_human.py`), the
delegation-tree order its errors and handoffs are read in (`observe.py`), stream-json read
back (`stream_json.py`, Claude Code's and Qwen Code's), and a loopback-only network
namespace (`offline.py`). Members: `claude_code.py`, `qwen_code.py`, `opencode/`, `codex/`.
"""
