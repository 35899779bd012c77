#!/usr/bin/env bash
# Benchmark of the harness: the full forward sweep of the operator suite (every OpInfo at every
# CPU dtype) with -j 2. Targets on a 2-core machine: under 10 minutes, overhead ratio <= 1.10
# (the worker start-up is printed in the run's summary: a zygote once, then a fork per worker).
exec "$(dirname "$0")/bench-suite.sh" ops 600 1.10 --checks forward
