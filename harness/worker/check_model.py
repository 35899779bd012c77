"""The program `neuron-conform check-model` runs (harness/src/commands/CheckModelCommand.cpp): it
prints one JSON document on stdout. The work is the package model_check (model_check/__init__.py)."""

from __future__ import annotations

from model_check.cli import main
from quick_exit import run_main

if __name__ == "__main__":
    run_main(main)
