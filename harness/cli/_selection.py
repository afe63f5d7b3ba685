"""Which scenarios a command works on: the corpus it loads (`--scenarios DIR`, or the
scenarios this harness ships), the ids named on the command line, and a shard of them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from harness.cli._exits import invalid, usage

if TYPE_CHECKING:
    from harness.scenario import Scenario


def load_corpus(args: argparse.Namespace) -> list[Scenario] | int:
    """Every scenario of the `--scenarios` directory, or an exit code once the problem is
    said: an invalid file refuses them all before anything runs."""
    from harness.scenario import ScenarioError, load_all

    try:
        scenarios = load_all(args.scenarios)
    except ScenarioError as exc:
        return invalid(exc, "nothing was run")
    if not scenarios:
        return usage(f"no scenario files (*.yaml) in {args.scenarios or 'the default directory'}")
    return scenarios


def warn(scenarios: Sequence[Scenario]) -> int:
    """Print every warning, on stderr: valid but almost certainly not meant."""
    lines = [w for s in scenarios for w in s.warnings]
    for line in lines:
        print(line, file=sys.stderr)
    return len(lines)


def named_scenarios(ids: Sequence[str], scenarios: Sequence[Scenario]) -> list[Scenario] | None:
    """The named scenarios in the order first named, each once (all of them when none is
    named), or None after saying which ids are unknown."""
    by_id = {s.id: s for s in scenarios}
    named = list(dict.fromkeys(ids))  # an id named twice runs once
    unknown = [i for i in named if i not in by_id]
    if unknown:
        usage(f"unknown scenario id(s): {', '.join(unknown)}; 'harness list' shows the ids")
        return None
    return [by_id[i] for i in named] if named else list(scenarios)


# -- shards ---------------------------------------------------------------------------
def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' -> (K, N), 1 <= K <= N; ValueError says how to write it."""
    k, sep, n = text.partition("/")
    if not sep or not k.isdigit() or not n.isdigit() or not 1 <= int(k) <= int(n):
        raise ValueError(f"--shard {text}: write K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def shard_of(scenario_id: str, shards: int) -> int:
    """The shard (1..N) a scenario belongs to: the first 8 bytes of the SHA-256 of its id,
    modulo N, plus 1. By id alone, so adding a scenario never moves another one."""
    import hashlib  # here, as ElementTree for JUnit: a plain `harness run` needs neither

    digest = hashlib.sha256(scenario_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards + 1


def in_shard(scenarios: Sequence[Scenario], k: int, n: int) -> list[Scenario]:
    return [s for s in scenarios if shard_of(s.id, n) == k]
