"""`harness pin NAME VERSION`: move an agent CLI's pin to another release. It writes
adapters/NAME/package.json and its lockfile (made by npm from the registry, integrity
hashes and all; nothing is installed), then says what to regenerate: the matrix, the
recordings, and the expectations entries that name the release."""

from __future__ import annotations

import argparse

from harness.cli._exits import EXIT_OK, usage


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="an agent CLI's adapter, e.g. qwen-code")
    parser.add_argument("version", metavar="VERSION", help="the release to pin, e.g. 0.24.4")


def run(args: argparse.Namespace) -> int:
    from harness.adapters._load import MEMBERS
    from harness.adapters._npm import adapter_dir, pin
    from harness.contract import AdapterError

    clis = sorted(name for name, (family, _, _) in MEMBERS.items() if family == "clis")
    if args.name not in clis:
        return usage(
            f"harness pin {args.name}: not an agent CLI's adapter; one of {', '.join(clis)}"
        )
    try:
        root = adapter_dir(args.name, "package-lock.json", args.scenarios)
        before = pin(args.name, root, args.version)
    except AdapterError as exc:
        return usage(str(exc))
    where = root.relative_to(root.parents[1]) if len(root.parents) > 1 else root
    print(f"{args.name}: pinned at {args.version} (was {before}): {where}/package.json and "
          "package-lock.json written; the next run installs it")  # fmt: skip
    print("then, to regenerate what the pin decides:")
    print(f"  harness run --adapter {args.name}            # new and fixed failures: edit "
          f"{where}/expectations.yaml (an entry may say `releases:`)")  # fmt: skip
    print("  harness matrix --adapter reference --adapter node-dsh --adapter claude-code "
          "--adapter qwen-code --adapter opencode --adapter codex --format json "
          "--output adapters/matrix.json")  # fmt: skip
    print("  (the same command with --format markdown --output adapters/MATRIX.md)")
    print(f"  python -m tests.clis.record {args.name}     # the recordings the fast tests read")
    return EXIT_OK
