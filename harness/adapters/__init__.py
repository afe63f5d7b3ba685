"""Adapters: how a runtime under test runs a scenario and hands back an observation.

The reference runtime is one adapter (`reference`). A runtime in any language plugs in as a
process speaking JSON lines (`jsonl:COMMAND`; the protocol is in scenarios/INTERPRETING.md),
as the published upstream seam does (`node-dsh`), and a Python one implements `Adapter`
and is named as `module:factory`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.adapters._expectations import Expectations, ExpectationsError
from harness.adapters._load import FORMS, open_adapter
from harness.adapters.reference import ReferenceAdapter
from harness.contract import (
    Adapter,
    AdapterError,
    RunOptions,
    missing_features,
    runtime_of,
)

if TYPE_CHECKING:
    from harness.adapters._jsonl import PROTOCOL, JsonLinesAdapter


def __getattr__(name: str) -> Any:
    # The process adapters' module is loaded when first named: a run on the reference
    # runtime never needs it.
    if name in ("PROTOCOL", "JsonLinesAdapter"):
        from harness.adapters import _jsonl

        return getattr(_jsonl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMS",
    "PROTOCOL",
    "Adapter",
    "AdapterError",
    "Expectations",
    "ExpectationsError",
    "JsonLinesAdapter",
    "ReferenceAdapter",
    "RunOptions",
    "missing_features",
    "open_adapter",
    "runtime_of",
]
