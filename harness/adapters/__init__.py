"""Adapters: how a runtime under test runs a scenario and hands back an observation.

Every runtime is an adapter, in a family; a family never imports a sibling family:
- `reference/`: the reference runtime (`reference`), the one every other is compared with;
- `process/`: a runtime in any language, in a process speaking JSON lines (`jsonl:COMMAND`;
  the protocol is in scenarios/INTERPRETING.md), upstream's published one among them
  (`node-dsh`);
- `clis/`: the agent CLIs, installed from their lockfiles and run one process per phase
  (`claude-code`, `qwen-code`, `opencode`, `codex`);
- `acp/`: agents driven over the Agent Client Protocol with the harness as the editor
  (`claude-code-acp`, `qwen-code-acp`, `opencode-acp`, `codex-acp`, `gemini-cli-acp`, and
  `acp:COMMAND`);
- `frameworks/`: Python agent frameworks, run in this process against the fake, with the
  harness as the host of their top-level run (`openai-agents`, `deepagents`, `google-adk`,
  `google-adk-single-turn`, `pydantic-ai`, `pydantic-ai-deferred`, `smolagents`).
A Python one implements `Adapter` and is named as `module:factory`. What the families share
sits here: the one table from `--adapter NAME` to a family member (`_load.py`), the
known-failures files (`_expectations.py`), a runtime's report checked against the protocol
(`_reported.py`), the backstop's no-progress watchdog (`_watchdog.py`), installs from npm
lockfiles (`_npm.py`, `_node.py`), and for runtimes run as processes of their own: the
scenario's folder and fake (`_foreign.py`), the loopback-only namespace (`_offline.py`),
the wait-for graph (`_quiescence.py`), calls read back in the scenario's names (`_calls.py`),
Claude Code's hand-back frame (`_handback.py`) and Qwen Code pointed at the fake
(`_qwen.py`), which each agent's two columns share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.adapters._expectations import Expectations, ExpectationsError
from harness.adapters._load import FORMS, open_adapter
from harness.adapters.reference import ReferenceAdapter
from harness.contract import (
    Adapter,
    AdapterError,
    RunOptions,
    missing_features,
    runtime_of,
)

if TYPE_CHECKING:
    from harness.adapters.process.jsonl import PROTOCOL, JsonLinesAdapter


def __getattr__(name: str) -> Any:
    # The process adapters' module is loaded when first named: a run on the reference
    # runtime never needs it.
    if name in ("PROTOCOL", "JsonLinesAdapter"):
        from harness.adapters.process import jsonl

        return getattr(jsonl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMS",
    "PROTOCOL",
    "Adapter",
    "AdapterError",
    "Expectations",
    "ExpectationsError",
    "JsonLinesAdapter",
    "ReferenceAdapter",
    "RunOptions",
    "missing_features",
    "open_adapter",
    "runtime_of",
]
