"""The test run's own Python processes share one bytecode cache outside the checkout when
PYTHONDONTWRITEBYTECODE is set (tests/_bytecode.py), and leave a chosen one alone."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests import _bytecode


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    # What the hook changes in this process, put back after the test.
    monkeypatch.setattr(sys, "pycache_prefix", sys.pycache_prefix)
    monkeypatch.setattr(sys, "dont_write_bytecode", sys.dont_write_bytecode)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    return tmp_path


def configure(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, str | None]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    _bytecode.pytest_configure(None)  # type: ignore[arg-type]
    return {k: os.environ.get(k) for k in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}


def test_without_bytecode_processes_get_a_cache_outside_the_checkout(
    temp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got = configure(monkeypatch, PYTHONDONTWRITEBYTECODE="1")
    where = temp / f"keyless-harness-bytecode-{os.getuid()}"
    assert got == {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": str(where)}
    assert where.is_dir() and (where.stat().st_mode & 0o777) == 0o700
    assert (sys.pycache_prefix, sys.dont_write_bytecode) == (str(where), False)


def test_a_prefix_of_your_own_is_kept(temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = str(temp / "mine")
    got = configure(monkeypatch, PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=mine)
    assert got == {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": mine}
    assert list(temp.iterdir()) == []


def test_with_bytecode_allowed_nothing_changes(temp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    got = configure(monkeypatch)
    assert got == {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": None}
    assert list(temp.iterdir()) == []
