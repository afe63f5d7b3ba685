"""Qwen Code pointed at the fake, for both of its columns (headless, and over ACP): its
settings file in the scenario's home, and the environment that names the fake."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.contract import SENTINEL_KEY

# The OpenAI-compatible provider; usage statistics and telemetry off (on by default, they
# look up a host outside loopback).
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def pointed(home: Path, port: int, settings: Mapping[str, Any] = SETTINGS) -> dict[str, str]:
    """Write `settings` where Qwen Code reads them under `home`; the environment beside
    the bare one that points it at the fake on `port`."""
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings), encoding="utf-8")
    return {
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": SENTINEL_KEY,
        "OPENAI_MODEL": "scripted",
        "QWEN_CODE_NO_RELAUNCH": "1",  # one process: no parent to raise its heap
    }
