"""Choosing the runtime under test: `reference`, `node-dsh`, `jsonl:COMMAND` for any
process that speaks the JSON-lines protocol, or `module:factory` for a Python adapter."""

from __future__ import annotations

import importlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from harness._paths import repository_root
from harness.adapters._base import Adapter, AdapterError
from harness.adapters._jsonl import JsonLinesAdapter
from harness.adapters._reference import ReferenceAdapter

NAMED = ("reference", "node-dsh")
FORMS = "reference, node-dsh, jsonl:COMMAND or module:factory"


def open_adapter(spec: str | None) -> Adapter:
    """The adapter named by `spec`, started and ready to run scenarios."""
    from harness.scenario import ScenarioError, scenarios_version

    adapter = _make(spec or "reference")
    if isinstance(adapter, JsonLinesAdapter):
        try:
            version = scenarios_version()
        except ScenarioError as exc:
            raise AdapterError(exc.problems[0]) from None
        adapter.open(version)
    return adapter


def _make(spec: str) -> Adapter:
    if spec == "reference":
        return ReferenceAdapter()
    if spec == "node-dsh":
        return node_dsh()
    if spec.startswith("jsonl:"):
        command = shlex.split(spec.removeprefix("jsonl:"))
        if not command:
            raise AdapterError("--adapter jsonl:COMMAND needs a command after 'jsonl:'")
        return JsonLinesAdapter(Path(command[0]).name, command)
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


def node_dsh() -> JsonLinesAdapter:
    """The published upstream seam (@deepseek-ai/dsh-user-questions) under Node.js."""
    checkout = repository_root()
    root = checkout / "adapters" / "node-dsh" if checkout else Path("adapters/node-dsh")
    if checkout is None or not (root / "adapter.mjs").is_file():
        raise AdapterError(
            "adapter node-dsh lives in a checkout of keyless-harness (adapters/node-dsh/); "
            "run from a clone"
        )
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise AdapterError("adapter node-dsh needs node (20 or later) and npm on PATH")

    def install() -> None:
        if (root / "node_modules" / "@deepseek-ai" / "dsh-user-questions").is_dir():
            return
        print("harness: installing adapters/node-dsh (npm ci, once)", file=sys.stderr)
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=root, capture_output=True, text=True
        )
        if done.returncode != 0:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise AdapterError(f"adapter node-dsh: npm ci failed ({tail})")

    return JsonLinesAdapter(
        "node-dsh",
        [node, "adapter.mjs"],
        cwd=root,
        expectations=root / "expectations.yaml",
        prepare=install,
    )
