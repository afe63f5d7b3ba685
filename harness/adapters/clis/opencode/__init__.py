"""opencode (`--adapter opencode`): its command, environment and skips (`adapter.py`), and
its run read back from its JSON events and its SQLite store (`observe.py`)."""
