"""`harness history NAME [VERSIONS | --last N | --since V]`: the corpus (or `--scenario`s)
on each release of one agent CLI, as one table (harness.cli._history): a row per scenario,
a column per release, the level held in each cell, and per scenario the first release
where its cell changed. `--bisect SCENARIO GOOD BAD` finds the first release between two
that changed one cell, in about log2(n) runs. `--shard K/N` runs every Nth release, and
`--merge FILE...` joins the shards' JSON into the table one run would print, so a CI job
matrix can run a long history across machines. Each release installs once from a lockfile
of its own (`--adapter NAME@VERSION`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from harness.cli._exits import EXIT_OK, usage

LAST = 5  # releases, when none are named


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="an agent CLI, e.g. qwen-code")
    parser.add_argument(
        "versions",
        nargs="*",
        metavar="VERSION",
        help="releases to run (default: the last 5 the registry serves)",
    )
    parser.add_argument("--last", type=int, metavar="N", help="the last N releases")
    parser.add_argument("--since", metavar="V", help="every release from V on")
    parser.add_argument(
        "--scenario",
        action="append",
        default=None,
        metavar="ID",
        help="run this scenario (repeat it; default: the corpus)",
    )
    parser.add_argument(
        "--shard", metavar="K/N", help="run the Kth of N shares of the releases; --merge joins them"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="join the JSON of shards (or runs) into one table; runs nothing",
    )
    parser.add_argument(
        "--bisect",
        nargs=3,
        metavar=("SCENARIO", "GOOD", "BAD"),
        help="the first release after GOOD, up to BAD, where SCENARIO's cell changed",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="run up to N releases at once (each CLI is processes of its own)",
    )
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument("--output", type=Path, metavar="FILE", help="write the table to FILE")
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the table's JSON to FILE (a HISTORY.md and its HISTORY.json from one run)",
    )


def run(args: argparse.Namespace) -> int:
    from harness.cli._history import HistoryError, check_part, markdown, merge

    if args.merge:
        if args.name or args.bisect or args.shard:
            return usage("--merge joins tables; it takes no NAME, --bisect or --shard")
        try:
            parts = [(str(p), check_part(str(p), _read(p))) for p in args.merge]
            return _show(args, merge(parts), markdown)
        except HistoryError as exc:
            return usage(str(exc))
    root = _cli_root(args)
    if isinstance(root, int):
        return root
    if args.bisect:
        return _bisect(args, root)
    releases = _releases(args, root)
    if isinstance(releases, int):
        return releases
    return _history(args, releases)


def _read(path: Path) -> Any:
    from harness.cli._history import HistoryError

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HistoryError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise HistoryError(f"{path}: not JSON ({exc})") from None


def _cli_root(args: argparse.Namespace) -> Path | int:
    from harness.adapters._load import MEMBERS
    from harness.adapters._npm import adapter_dir
    from harness.contract import AdapterError

    clis = sorted(n for n, (family, _, _) in MEMBERS.items() if family == "clis")
    if args.name not in clis:
        return usage(f"harness history {args.name or ''}: name an agent CLI: {', '.join(clis)}")
    try:
        return adapter_dir(args.name, "package-lock.json", args.scenarios)
    except AdapterError as exc:
        return usage(str(exc))


def _releases(args: argparse.Namespace, root: Path) -> list[str] | int:
    from harness.adapters._expectations import is_release, release_key
    from harness.adapters._npm import registry_releases
    from harness.cli._selection import parse_shard
    from harness.contract import AdapterError

    chosen = [bool(args.versions), args.last is not None, args.since is not None]
    if sum(chosen) > 1:
        return usage("name releases, or --last N, or --since V: one of them")
    if args.last is not None and args.last < 1:
        return usage("--last takes a positive number of releases")
    if args.since is not None and not is_release(args.since):
        return usage(f"--since {args.since}: not a release; write MAJOR.MINOR.PATCH")
    releases = list(args.versions)
    if not releases:
        try:
            served = registry_releases(args.name, root)
        except AdapterError as exc:
            return usage(str(exc))
        if args.since is not None:
            releases = [r for r in served if release_key(r) >= release_key(args.since)]
        else:
            releases = served[-(args.last or LAST) :]
    releases = sorted(dict.fromkeys(releases), key=release_key)
    if args.shard is not None:
        try:
            k, n = parse_shard(args.shard)
        except ValueError as exc:
            return usage(str(exc))
        releases = releases[k - 1 :: n]
    if not releases:
        return usage("no release to run: the registry serves none that was asked for")
    return releases


def _scenarios(args: argparse.Namespace) -> tuple[list[Any], list[str]] | int:
    """The corpus (every id the known-failures file may name), and the ids to run."""
    from harness.cli._selection import load_corpus

    corpus = load_corpus(args)
    if isinstance(corpus, int):
        return corpus
    ids = [s.id for s in corpus]
    unknown = [i for i in args.scenario or () if i not in ids]
    if unknown:
        return usage(f"--scenario {unknown[0]}: no scenario has this id; `harness list` shows them")
    return corpus, list(dict.fromkeys(args.scenario)) if args.scenario else ids


def _column(
    args: argparse.Namespace, release: str, scenarios: tuple[list[Any], list[str]]
) -> dict[str, Any] | int:
    """One release's column: the scenarios on NAME@RELEASE, judged as `harness run` does."""
    from harness.cli._history import column
    from harness.cli._options import API_NAMES, DEFAULT_GUARD
    from harness.cli.matrix import run_column

    options = argparse.Namespace(
        scenarios=args.scenarios, adapter=f"{args.name}@{release}", ids=scenarios[1],
        expectations=None,
        snapshots=None, shard=None, backstop=None, guard=DEFAULT_GUARD, api=API_NAMES[0],
        level="upstream", stream=False, chunk=None,
    )  # fmt: skip
    ran = run_column(options, scenarios[0])
    if isinstance(ran, int):
        return ran
    print(f"history: {args.name}@{release}: done", file=sys.stderr, flush=True)
    return column(release, ran[1], ran[2])


def _history(args: argparse.Namespace, releases: list[str]) -> int:
    from concurrent.futures import ThreadPoolExecutor

    from harness.cli._history import markdown, table

    scenarios = _scenarios(args)
    if isinstance(scenarios, int):
        return scenarios
    if args.jobs < 1:
        return usage("--jobs takes a positive number of releases to run at once")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        made = list(pool.map(lambda r: _column(args, r, scenarios), releases))
    failed = next((m for m in made if isinstance(m, int)), None)
    if failed is not None:
        return failed
    columns = [m for m in made if not isinstance(m, int)]
    doc = table(args.name, _command(args), scenarios[1], columns)
    if args.shard is not None:
        doc["shard"] = args.shard
    return _show(args, doc, markdown)


def _command(args: argparse.Namespace) -> str:
    """The command a shard is part of: what a merge of every shard says it ran."""
    words = ["harness history", args.name, *args.versions]
    words += [f"--last {args.last}"] if args.last is not None else []
    words += [f"--since {args.since}"] if args.since is not None else []
    words += [f"--scenario {s}" for s in args.scenario or ()]
    return " ".join(words)


def _show(args: argparse.Namespace, doc: dict[str, Any], markdown: Any) -> int:
    shown = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n" if args.format == "json"
             else markdown(doc))  # fmt: skip
    if args.output is not None:
        args.output.write_text(shown, encoding="utf-8")
    else:
        print(shown, end="")
    if args.json is not None:
        args.json.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return EXIT_OK


def _bisect(args: argparse.Namespace, root: Path) -> int:
    """Binary search over the registry's releases from GOOD to BAD for the first whose
    cell differs from GOOD's, one scenario a run."""
    from harness.adapters._expectations import release_key
    from harness.adapters._npm import registry_releases
    from harness.contract import AdapterError

    sid, good, bad = args.bisect
    if args.versions or args.last or args.since or args.shard:
        return usage("--bisect takes its releases as GOOD and BAD; drop VERSION, --last, "
                     "--since and --shard")  # fmt: skip
    try:
        served = registry_releases(args.name, root)
        span = [r for r in served if release_key(good) <= release_key(r) <= release_key(bad)]
    except (AdapterError, ValueError) as exc:
        return usage(f"--bisect: {exc}")
    if good not in span or bad not in span or good == bad:
        return usage(f"--bisect {sid} {good} {bad}: GOOD and BAD must be two releases the "
                     "registry serves, GOOD the older")  # fmt: skip
    args.scenario = [sid]
    scenarios = _scenarios(args)
    if isinstance(scenarios, int):
        return scenarios
    runs: dict[str, str] = {}

    def at(release: str) -> str | int:
        made = _column(args, release, scenarios)
        if isinstance(made, int):
            return made
        runs[release] = made["cells"][sid]
        print(f"bisect: {sid} on {release}: {runs[release]}", file=sys.stderr, flush=True)
        return runs[release]

    low, high = 0, len(span) - 1
    before, after = at(span[low]), at(span[high])
    if isinstance(before, int) or isinstance(after, int):
        return before if isinstance(before, int) else int(after)
    if before == after:
        print(f"{sid}: {before} on {good} and on {bad}; no change to find "
              f"({len(runs)} runs)")  # fmt: skip
        return EXIT_OK
    while high - low > 1:  # span[low] has GOOD's cell, span[high] another
        middle = (low + high) // 2
        got = at(span[middle])
        if isinstance(got, int):
            return got
        low, high = (middle, high) if got == before else (low, middle)
    print(f"{sid}: first changed at {span[high]} ({before} → {runs[span[high]]}), after "
          f"{span[low]}; {len(runs)} runs over {len(span)} releases")  # fmt: skip
    return EXIT_OK
