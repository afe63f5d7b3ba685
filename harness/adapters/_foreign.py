"""What every family that runs a foreign runtime's own process per scenario shares (the
CLIs, the ACP agents): the scenario's fresh folder, the fake served for it, and what the
runtime did, checked against the protocol's schema and read back in the scenario's names."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.contract import Observation, RunOptions
    from harness.fake import ScriptedLLM
    from harness.fake.dialect import Dialect
    from harness.fake.serve import ServerThread
    from harness.scenario import Scenario

KEEP = "HARNESS_KEEP"  # 1: keep each scenario's folder, and say where, on stderr


@contextlib.contextmanager
def scenario_folder(adapter: str, scenario_id: str) -> Iterator[Path]:
    """A fresh folder for one scenario (the runtime's home, config, work dir, transcripts),
    removed afterwards unless HARNESS_KEEP=1."""
    slug = re.sub(r"[^\w.-]+", "_", adapter)[:40]  # acp:COMMAND is no file name
    folder = Path(tempfile.mkdtemp(prefix=f"{slug}-{scenario_id}-"))
    try:
        yield folder
    finally:
        if os.environ.get(KEEP) == "1":
            print(f"harness: {adapter}: {scenario_id} kept in {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


def served(
    scenario: Scenario, options: RunOptions, dialect: Dialect, folder: Path, offline: bool
) -> tuple[ScriptedLLM, ServerThread]:
    """The scenario's scripts, served in the runtime's dialect: on a Unix socket in
    `folder` when the runtime runs offline (harness.adapters._offline bridges to it)."""
    from harness.fake import ScriptedLLM
    from harness.fake.serve import ServerThread

    chunk = options.wire.chunk if options.wire.chunk is not None else scenario.stream_chunk
    llm = ScriptedLLM({n: a.script for n, a in scenario.agents.items()}, chunk=chunk,
                      roots=scenario.roots(), dialect=dialect)  # fmt: skip
    return llm, ServerThread(llm, unix=folder / "fake.sock" if offline else None)


def reported(
    adapter: str, scenario: Scenario, data: dict[str, Any], llm: ScriptedLLM
) -> Observation:
    """The observation `data` (the protocol's JSON) describes, if the schema allows it;
    else one that says the adapter broke it."""
    from harness.adapters._reported import ProtocolError, check, observation
    from harness.contract import Observation

    try:
        check({"type": "result", "id": scenario.id, "observation": data}, "result")
    except ProtocolError as exc:
        return Observation.broken(scenario.id, f"adapter {adapter}: {exc}")
    return observation(scenario, data, llm)
