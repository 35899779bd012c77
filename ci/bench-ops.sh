#!/usr/bin/env bash
# Benchmark of the harness: the full operator suite (every OpInfo at every CPU dtype, every check)
# with -j 2. Targets on a 2-core machine: under 12 minutes, overhead ratio <= 1.10 (the worker
# start-up is printed in the run's summary: a zygote once, then a fork per worker). The in-worker
# time of each check is printed with its share, so the cost of a new check is visible.
exec "$(dirname "$0")/bench-suite.sh" ops 720 1.10
