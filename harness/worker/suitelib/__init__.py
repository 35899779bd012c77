"""What suites share, so that no suite imports another: PyTorch's OpInfo database and what the
OpInfo suites make of it (opinfo/: samples, calls, tolerances, the judge, the shared checks), the
tolerances an OpInfo, ModuleInfo or OptimizerInfo declares (info_decorators), the public API a
subject tests (public_api), tiny transformers models built from configs (tiny_models) and the one
reader of the reviewed JSON documents the suites ship (reviewed). A suite
imports these and the worker's modules, never another suite (harness/tests/test_python_layers.py
keeps it so)."""
