"""`harness run` as CI and vendors run it: the shipped corpus on the reference runtime.

Marked `gate` so mutation testing can judge this command alone (README, "Mutation
testing"): its score says what the gate catches, apart from the unit tests around it.
"""

from __future__ import annotations

import pytest

from harness._cli import main
from tests.conftest import SCENARIOS


@pytest.mark.gate
def test_harness_run_passes_the_shipped_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run"])
    out = capsys.readouterr().out
    assert code == 0, out
    # Every shipped scenario ran and met its golden, not a corpus that shrank.
    assert out.strip().splitlines()[-1] == f"{len(SCENARIOS)} passed, 0 failed"
