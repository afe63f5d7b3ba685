"""The process family's tests (harness/adapters/process/): the JSON-lines protocol, a
Python adapter process speaking it, and upstream's node-dsh on it."""
