"""The agent-CLI family's tests (harness/adapters/clis/): each CLI on its real binary
(marked `cli`), and each reader on its recorded output."""
