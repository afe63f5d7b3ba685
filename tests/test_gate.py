"""`harness run` as CI and vendors run it: the shipped corpus on the reference runtime,
answered whole and streamed one character per delta (CI runs both).

Marked `gate` so mutation testing can judge this command alone (README, "Mutation
testing"): its score says what the gate catches, apart from the unit tests around it.
"""

from __future__ import annotations

import pytest

from harness.cli import main
from tests.conftest import SCENARIOS


@pytest.mark.gate
@pytest.mark.parametrize(
    "transport", [[], ["--stream", "--chunk", "1"]], ids=["json", "streamed-by-the-character"]
)
def test_harness_run_passes_the_shipped_corpus(
    transport: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", *transport])
    out = capsys.readouterr().out
    assert code == 0, out
    # Every shipped scenario ran and met its golden, not a corpus that shrank.
    assert out.strip().splitlines()[-1] == f"{len(SCENARIOS)} passed, 0 failed"
