#!/usr/bin/env bash
# Benchmark of the optim suite: a full run (every check, every subject) with -j 2.
# Target on a 2-core machine: under 10 minutes.
exec "$(dirname "$0")/bench-suite.sh" optim 600 -
