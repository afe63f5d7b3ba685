"""pytest plugin: `--shuffle-seed N` runs the collected tests in an order shuffled by
`random.Random(N)`, so a test that passes only after another one shows up, and the seed
in the report header replays the order exactly. Unshuffled, the second tier (`slow`: the
tests that start processes, seconds each) runs first and the rest as collected: under
xdist the long tests start at once and the short ones fill the gaps, instead of one worker
finishing a long test alone at the end.
"""

from __future__ import annotations

import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("harness").addoption(
        "--shuffle-seed",
        type=int,
        default=None,
        metavar="N",
        help="run the tests in the order random.Random(N) shuffles them into",
    )


def shuffle_seed(config: pytest.Config) -> int | None:
    seed: int | None = config.getoption("--shuffle-seed")
    return seed


# Last, so the shuffle sees the final selection (after -k, -m and deselection by any
# other plugin). Every xdist worker collects the same items in the same order and shuffles
# them with the same seed, so all workers agree on the order, as xdist requires.
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = shuffle_seed(config)
    if seed is not None:
        random.Random(seed).shuffle(items)
    else:  # stable: each tier keeps its collected order
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_report_header(config: pytest.Config) -> str:
    seed = shuffle_seed(config)
    if seed is None:
        return (
            "test order: the slow tier first, each tier as collected (--shuffle-seed N to shuffle)"
        )
    return f"test order: shuffled, --shuffle-seed {seed}"
