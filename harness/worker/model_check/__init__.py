"""check-model's Python side, run by the program harness/worker/check_model.py (what it prints and
its options: cli.py's docstring, docs/check-model.md).

The data flow, one module a step: cli reads the options and refuses those that do not combine;
sources loads the model (--hf, --script or --exported) with its identity; capture records its ops
on meta tensors (or reads an exported graph's) and replays composite ops on the device; placement
finds tensors the setup leaves off the device; shapes runs the tiny model at each shape asked for;
probe runs it for real against the CPU (and its training steps); compiled runs it under
torch.compile against the CPU; cli puts their results in the one JSON document it prints
(protocol.py's stream), or {"fatal": ...} for bad input (fatal.Fatal). calls holds what they all
do with a model: call it with its inputs, find the tensors in its output.
"""
