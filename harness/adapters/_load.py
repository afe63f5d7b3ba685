"""Choosing the runtime under test: the one table from `--adapter NAME` to a member of a
family (`MEMBERS`), `jsonl:COMMAND` for any process that speaks the JSON-lines protocol, or
`module:factory` for a Python adapter. A member's module is imported only when it is
named."""

from __future__ import annotations

import importlib
import os
import re
import shlex
from pathlib import Path

from harness.adapters.reference import ReferenceAdapter
from harness.contract import Adapter, AdapterError, is_reference

# `--adapter NAME` -> (its family, the module and the factory that make it), every family.
MEMBERS = {
    "reference": ("reference", "harness.adapters.reference", "ReferenceAdapter"),
    "node-dsh": ("process", "harness.adapters.process.node_dsh", "node_dsh"),
    "claude-code": ("clis", "harness.adapters.clis.claude_code", "claude_code"),
    "qwen-code": ("clis", "harness.adapters.clis.qwen_code", "qwen_code"),
    "opencode": ("clis", "harness.adapters.clis.opencode.adapter", "opencode"),
    "codex": ("clis", "harness.adapters.clis.codex.adapter", "codex"),
    "claude-code-acp": ("acp", "harness.adapters.acp.claude_code", "claude_code_acp"),
    "qwen-code-acp": ("acp", "harness.adapters.acp.qwen_code", "qwen_code_acp"),
    "opencode-acp": ("acp", "harness.adapters.acp.opencode", "opencode_acp"),
    "codex-acp": ("acp", "harness.adapters.acp.codex", "codex_acp"),
    "gemini-cli-acp": ("acp", "harness.adapters.acp.gemini_cli", "gemini_cli_acp"),
    "openai-agents": ("frameworks", "harness.adapters.frameworks.openai_agents", "openai_agents"),
    "deepagents": ("frameworks", "harness.adapters.frameworks.deepagents", "deepagents"),
    "google-adk": ("frameworks", "harness.adapters.frameworks.google_adk", "google_adk"),
    "google-adk-single-turn": (
        "frameworks",
        "harness.adapters.frameworks.google_adk",
        "google_adk_single_turn",
    ),
    "pydantic-ai": ("frameworks", "harness.adapters.frameworks.pydantic_ai", "pydantic_ai"),
    "smolagents": ("frameworks", "harness.adapters.frameworks.smolagents", "smolagents"),
    "pydantic-ai-deferred": (
        "frameworks",
        "harness.adapters.frameworks.pydantic_ai",
        "pydantic_ai_deferred",
    ),
}
NAMED = tuple(MEMBERS)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
FORMS = (
    f"{', '.join(NAMED)} (an agent CLI's other release: NAME@VERSION; its local build: "
    "NAME@PATH), jsonl:COMMAND, acp:COMMAND (an agent speaking ACP) or module:factory"
)


def open_adapter(spec: str | None, scenarios: Path | None = None) -> Adapter:
    """The adapter named by `spec`, started and ready to run scenarios (`scenarios`: the
    directory being run, where a vendoring checkout keeps its adapters/ beside it)."""
    from harness.scenario import ScenarioError, scenarios_version

    adapter = _make(spec or "reference", scenarios)
    if is_reference(adapter):
        return adapter
    # Imported here: `harness run` on the reference runtime starts no process and speaks no
    # protocol, so it does not pay for either (subprocess, threading, hashlib, ...).
    from harness.adapters.process.jsonl import JsonLinesAdapter

    if isinstance(adapter, JsonLinesAdapter):
        try:
            version = scenarios_version()
        except ScenarioError as exc:
            raise AdapterError(exc.problems[0]) from None
        adapter.open(version)
    return adapter


def _make(spec: str, scenarios: Path | None) -> Adapter:
    if spec == "reference":
        return ReferenceAdapter()
    name, at, version = spec.partition("@")
    if name in MEMBERS:
        family, module, factory = MEMBERS[name]
        if at and family != "clis":
            raise AdapterError(
                f"--adapter {spec}: only an agent CLI installs another release by version; "
                f"{name} runs its pinned build (its README says how to run another)"
            )
        made = getattr(importlib.import_module(module), factory)
        member: Adapter = made(scenarios, version) if at else made(scenarios)
        return member
    if spec.startswith("jsonl:"):
        # Split as a POSIX shell would (quotes, backslashes) but run without one: no pipes,
        # globs or $VARS. Leading NAME=value words set the process's environment, as `env`
        # would, so `jsonl:RUNTIME_FLAG=1 node adapter.mjs` works.
        try:
            command = shlex.split(spec.removeprefix("jsonl:"))
        except ValueError as exc:
            raise AdapterError(f"--adapter {spec}: {exc}; quote it as a shell would") from None
        settings = {}
        while command and _ASSIGNMENT.fullmatch(command[0]):
            name, _, value = command.pop(0).partition("=")
            settings[name] = value
        if not command:
            raise AdapterError("--adapter jsonl:COMMAND needs a command after 'jsonl:'")
        env = {**os.environ, **settings} if settings else None
        from harness.adapters.process.jsonl import JsonLinesAdapter

        return JsonLinesAdapter(Path(command[0]).name, command, env=env)
    if spec.startswith("acp:"):
        from harness.adapters.acp.generic import generic

        return generic(spec)
    module, sep, factory = spec.partition(":")
    if not sep or not module or not factory:
        raise AdapterError(f"unknown adapter {spec!r}; use {FORMS}")
    try:
        made = getattr(importlib.import_module(module), factory)()
    except Exception as exc:  # whatever the user's factory raises is a bad adapter, not ours
        raise AdapterError(f"adapter {spec}: cannot load it: {type(exc).__name__}: {exc}") from None
    if not isinstance(made, Adapter):
        raise AdapterError(
            f"adapter {spec}: {factory}() returned {type(made).__name__}, which lacks the "
            "Adapter protocol (name, features, expectations, run, close)"
        )
    return made
