"""Codex (`--adapter codex`): its command, config, environment and skips (`adapter.py`), and
its run read back from its JSON events and its rollouts (`observe.py`)."""
