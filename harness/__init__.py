"""keyless-harness: a keyless, deterministic test harness for the delegated-caller guard."""

__version__ = "0.1.0"
