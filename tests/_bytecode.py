"""pytest plugin: the Python processes a test run starts keep their bytecode in one cache
outside the checkout when PYTHONDONTWRITEBYTECODE is set.

With that variable set (as on many CI runners and containers) every process compiles each
module it imports from source again: the default run starts about a hundred Pythons of the
harness's own (`harness serve`, the jsonl adapters, inner pytest sessions, the xdist
workers), about 0.2 s of CPU each. So the session points them all at
PYTHONPYCACHEPREFIX=$TMPDIR/keyless-harness-bytecode-UID instead: nothing is written into
the checkout, which is what the variable is usually set for, and the cache lives on across
runs (Python checks each file against its source, so a stale one is never used). A
PYTHONPYCACHEPREFIX of your own is kept as it is; without PYTHONDONTWRITEBYTECODE nothing
changes.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest


def cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"keyless-harness-bytecode-{os.getuid()}"


# First, and in the controller before xdist starts its workers, so they inherit it.
@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    where = cache_dir()
    where.mkdir(mode=0o700, exist_ok=True)
    os.environ["PYTHONPYCACHEPREFIX"] = str(where)
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    # This process too, for what it imports from now on (and pytest's rewritten tests).
    sys.pycache_prefix, sys.dont_write_bytecode = str(where), False
