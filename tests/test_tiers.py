"""The fast tier starts no process: a test outside the second tier that tries fails,
naming itself and where to mark it (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.conftest import StartedAProcess, no_processes


def test_this_first_tier_test_cannot_start_a_process() -> None:
    with pytest.raises(StartedAProcess) as got:
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    message = str(got.value)
    assert message.startswith(
        "tests/test_tiers.py::test_this_first_tier_test_cannot_start_a_process started a process"
    )
    assert "add its module to SLOW_MODULES or the test to SLOW_TESTS" in message


def test_the_guard_names_the_test_and_covers_asyncio_subprocesses() -> None:
    async def spawn() -> None:
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")

    with no_processes("tests/x.py::t"), pytest.raises(StartedAProcess, match=r"^tests/x.py::t "):
        asyncio.run(spawn())


def test_the_guard_is_lifted_after_the_test() -> None:
    before = subprocess.Popen.__init__
    with no_processes("tests/x.py::t"):
        assert subprocess.Popen.__init__ is not before
    assert subprocess.Popen.__init__ is before
