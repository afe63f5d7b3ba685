"""The process family: a runtime in any language, in a process of its own, speaking the
JSON-lines protocol (scenarios/INTERPRETING.md, line by line scenarios/protocol.json).

A member provides a command that says hello, runs each scenario it is sent and answers
with raw facts. The family gives it `jsonl.JsonLinesAdapter` (`--adapter jsonl:COMMAND`):
the process started and restarted, every line checked, the fake served on loopback for
each scenario, and a process that breaks or shows no progress costing one scenario. Upstream's
published runtime is one member (`node_dsh.py`, `--adapter node-dsh`), installed from its
lockfiles.
"""
