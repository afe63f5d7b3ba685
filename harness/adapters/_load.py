"""Choosing the runtime under test: `reference`, `node-dsh`, `claude-code`, `qwen-code`,
`opencode`, `codex`, `jsonl:COMMAND` for any
process that speaks the JSON-lines protocol, or `module:factory` for a Python adapter."""

from __future__ import annotations

import importlib
import os
import re
import shlex
from pathlib import Path

from harness.adapters.reference import ReferenceAdapter
from harness.contract import Adapter, AdapterError, is_reference

NAMED = ("reference", "node-dsh", "claude-code", "qwen-code", "opencode", "codex")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
FORMS = (
    "reference, node-dsh, claude-code, qwen-code, opencode, codex, jsonl:COMMAND or module:factory"
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
    from harness.adapters._jsonl import JsonLinesAdapter

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
    if spec == "node-dsh":
        from harness.adapters._node_dsh import node_dsh

        return node_dsh(scenarios)
    if spec == "claude-code":
        from harness.adapters._claude_code import claude_code

        return claude_code(scenarios)
    if spec == "qwen-code":
        from harness.adapters._qwen_code import qwen_code

        return qwen_code(scenarios)
    if spec == "opencode":
        from harness.adapters._opencode import opencode

        return opencode(scenarios)
    if spec == "codex":
        from harness.adapters._codex import codex

        return codex(scenarios)
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
        from harness.adapters._jsonl import JsonLinesAdapter

        return JsonLinesAdapter(Path(command[0]).name, command, env=env)
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
