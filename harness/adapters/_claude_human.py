"""The test-only hook around Claude Code's human end (harness.adapters._host_human): a
scenario's override of a child's durable header, written into the record Claude Code keeps
of that child before the child's first step."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# A scenario's durable-header field -> the one Claude Code keeps for a subagent (in
# projects/<cwd>/<session>/subagents/agent-<id>.meta.json). Another field has none.
HEADER_FIELDS = {"delegation_depth": "spawnDepth"}


def override_header(config: Path, child: str, session: Mapping[str, Any]) -> str | None:
    """Write `session` into the durable record of the subagent named `child` (its `Agent`
    call's description), a null field removed; None when done, else why not."""
    records = [
        path
        for path in sorted(config.glob("projects/*/*/subagents/agent-*.meta.json"))
        if json.loads(path.read_text("utf-8")).get("description") == child
    ]
    if len(records) != 1:
        return f"found {len(records)} durable records of {child} to override, not one"
    record = json.loads(records[0].read_text("utf-8"))
    for field, value in session.items():
        if value is None:
            record.pop(HEADER_FIELDS[field], None)
        else:
            record[HEADER_FIELDS[field]] = value
    records[0].write_text(json.dumps(record), "utf-8")
    return None
