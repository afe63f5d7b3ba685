"""The benchmark suite: `python -m benchmarks` measures every figure of issue 8 in one run
and writes benchmarks/RESULTS.md. Not collected by pytest (testpaths is tests/)."""
