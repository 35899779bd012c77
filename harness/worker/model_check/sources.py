"""The model check-model looks at, from one of its three sources: a transformers architecture
(--hf), the user's function (--script FILE.py:FUNCTION) or a saved torch.export program
(--exported). Each comes with the document's "model" fields and an identity (key and content
hash) that --record and --history file the verdicts under."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import sys
from pathlib import Path

from .fatal import Fatal


def digest(data: bytes) -> str:
    """A model's identity hash (its config, script or exported file): the first 16 hex digits of SHA-256."""
    return hashlib.sha256(data).hexdigest()[:16]


def hf_model(name: str, full_size: bool, dtype):
    """An architecture on meta tensors (tiny, or at its config's real size), and a rebuild of the
    tiny one on the CPU for --probe, built as the hf suite builds it."""
    import torch
    import transformers

    transformers.logging.set_verbosity_error()  # its warnings are not the user's business here
    from suitelib.tiny_models import architecture_of, build, config_class, inputs as hf_inputs, tiny_config

    try:
        arch = architecture_of(name)
    except KeyError as exc:
        raise Fatal(exc.args[0]) from exc
    config = config_class(arch)() if full_size else tiny_config(arch)
    with torch.device("meta"):
        model = getattr(transformers, arch)(config).to(dtype).eval()
    parameters = sum(p.numel() for p in model.parameters())
    inputs = {"input_ids": torch.randint(0, min(99, config.vocab_size), (2, 7))}

    def rebuild_tiny():
        return build(arch, dtype, 0)[0], hf_inputs(0)

    identity = {"key": f"hf:{arch}", "hash": digest(config.to_json_string(use_diff=False).encode())}
    return model, inputs, {"kind": "hf", "architecture": arch, "full_size": full_size,
                           "parameters": parameters, "identity": identity}, rebuild_tiny


def script_model(spec: str, dtype):
    """The model and inputs the user's function returns, and the function itself, which builds
    them afresh for each run (--probe, --compile, --shapes)."""
    path_text, _, function = spec.rpartition(":")
    if not path_text or not function:
        raise Fatal(f"--script {spec}: expected FILE.py:FUNCTION")
    path = Path(path_text)
    if not path.is_file():
        raise Fatal(f"--script: {path} does not exist")
    module_spec = importlib.util.spec_from_file_location(f"user_model_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise Fatal(f"--script: importing {path} raised {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(module, function, None)):
        raise Fatal(f"--script: {path} has no function '{function}'")

    def build():
        try:
            result = getattr(module, function)()
        except Exception as exc:
            raise Fatal(f"--script: {path}:{function}() raised {type(exc).__name__}: {exc}") from exc
        import torch

        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], torch.nn.Module)):
            raise Fatal(f"--script: {path}:{function}() must return (model, inputs) with model a "
                        f"torch.nn.Module, got {type(result).__name__}")
        return result[0].to(dtype), result[1]

    model, inputs = build()
    identity = {"key": f"script:{path.resolve()}:{function}", "hash": digest(path.read_bytes())}
    return model, inputs, {"kind": "script", "script": spec, "identity": identity}, build


def exported_program(path_text: str):
    """The torch.export program saved at `path_text` (its graph's ops are read, nothing runs)."""
    import torch

    path = Path(path_text)
    if not path.is_file():
        raise Fatal(f"--exported: {path} does not exist")
    logging.getLogger("torch.export").setLevel(logging.CRITICAL)  # the one-line Fatal says it all
    try:
        program = torch.export.load(str(path))
    except Exception as exc:
        raise Fatal(f"--exported: {path} cannot be loaded by torch {torch.__version__} "
                    f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                    f"export it again with this torch") from exc
    identity = {"key": f"exported:{path.resolve()}", "hash": digest(path.read_bytes())}
    return program, {"kind": "exported", "exported": path_text, "identity": identity}
