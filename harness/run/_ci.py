"""Whether this is CI, where golden snapshots are only ever compared, never written."""

from __future__ import annotations

import os
from collections.abc import Mapping

CI_TRUE = frozenset({"true", "1"})


def ci_refuses_updates(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment says CI (`CI` is true or 1, any case)."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() in CI_TRUE
