"""The compiled artifacts of torch.compile on neuron: each graph's StableHLO module, kept in
memory and on disk (NEURONSIM_CACHE_DIR/graphs/, off with NEURONSIM_DISABLE_CACHE=1), as the
eager engine keeps its executables: keyed by what decides the compilation, versioned,
checksummed, written atomically; an entry that does not verify is warned about and recompiled,
never trusted. Processes and hosts sharing the directory lower each graph once: the first
claims it (claim()), the others wait for its entry.

A graph torch-mlir refused is kept too, as its refusal (the message and the op it names), as
Neuron's compile cache keeps a failed compilation: a refusal is as deterministic as a lowering
(the key holds the versions of torch and torch-mlir), and some take half a minute to reach."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import torch
import torch_mlir

from .. import _C

FORMAT = 2  # 2: refusals kept as well


@dataclass(frozen=True)
class Refusal:
    """torch-mlir's refusal of a graph: its message and the op it names. A value, not the
    CompileError raised: that one's traceback holds the frames of the call that compiled the
    graph, and with them its tensors, device memory included, for as long as the cache lives."""

    message: str
    op: str | None


# A graph's StableHLO text, or torch-mlir's refusal of it.
Artifact = Union[str, Refusal]
_memory: dict[str, Artifact] = {}


def _signature(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return [str(value.dtype), list(value.shape), list(value.stride()), value.device.type]
    return repr(value)


def key(gm: torch.fx.GraphModule, example_inputs: list[Any], kind: str) -> str:
    """What decides a graph's compilation: its structure (the code FX generates, and the values
    of tensor constants), every input's dtype, shape and strides, the engine's modes, and the
    versions of torch and torch-mlir."""
    digest = hashlib.sha256()
    parts = {
        "format": FORMAT, "kind": kind, "code": gm.code,
        "inputs": [_signature(v) for v in example_inputs],
        "modes": [_C.get_fallback_mode(), _C.get_64bit_mode(), _C.get_matmul_mode()],
        "versions": [torch.__version__, getattr(torch_mlir, "__version__", "?")],
    }
    digest.update(json.dumps(parts, sort_keys=True).encode())
    for name, buffer in sorted(gm.named_buffers()) + sorted(gm.named_parameters()):
        digest.update(name.encode())
        digest.update(buffer.detach().cpu().reshape(-1).contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def _directory() -> Path | None:
    root = _C._compile_cache_dir()  # empty when the on-disk cache is off
    return Path(root) / "graphs" if root else None


def _path(cache_key: str) -> Path | None:
    directory = _directory()
    return directory / f"{cache_key}.stablehlo" if directory else None


def lookup(cache_key: str) -> tuple[Artifact | None, str]:
    """(StableHLO text or the refusal, where: "memory", "disk", "rejected" or "miss")."""
    if cache_key in _memory:
        return _memory[cache_key], "memory"
    path = _path(cache_key)
    if path is None or not path.is_file():
        return None, "miss"
    try:
        header, _, body = path.read_text().partition("\n")
        meta = json.loads(header)
        ok = (meta.get("format") == FORMAT and meta.get("key") == cache_key
              and meta.get("sha256") == hashlib.sha256(body.encode()).hexdigest())
        refused = meta.get("refused")
        if ok and refused is not None:
            ok = isinstance(refused.get("message"), str) and not body
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        ok = False
    if not ok:
        warnings.warn(f"torch_neuronsim: compiled graph {path} is corrupt or of another format; recompiling it")
        return None, "rejected"
    artifact: Artifact = Refusal(refused["message"], refused.get("op")) if refused is not None else body
    _memory[cache_key] = artifact
    return artifact, "disk"


def store(cache_key: str, artifact: Artifact) -> None:
    _memory[cache_key] = artifact
    path = _path(cache_key)
    if path is None:
        return
    body = "" if isinstance(artifact, Refusal) else artifact
    meta: dict[str, Any] = {"format": FORMAT, "key": cache_key, "sha256": hashlib.sha256(body.encode()).hexdigest()}
    if isinstance(artifact, Refusal):
        meta["refused"] = {"message": artifact.message, "op": artifact.op}
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written next to its final name, then renamed: a reader sees all of it or nothing.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{cache_key}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(meta) + "\n" + body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class Claim:
    compile: bool  # this process lowers the graph (False: another published it meanwhile)
    waited: bool = False  # another process held the claim
    broken: bool = False  # a claim of a dead or expired process was removed


# A lowering takes torch-mlir's time and the emulated latency; a claim older than this was left.
CLAIM_EXPIRY_SECONDS = 600.0


@contextmanager
def claim(cache_key: str) -> Iterator[Claim]:
    """Holds the claim on lowering the graph while the caller lowers and stores it, as the eager
    engine's cache does for its executables (<entry>.claim, exclusive, naming host and pid)."""
    path = _path(cache_key)
    if path is None:
        yield Claim(compile=True)
        return
    compile, held, waited, broken = _C._claim_entry(str(path), CLAIM_EXPIRY_SECONDS)
    try:
        yield Claim(compile, waited, broken)
    finally:
        if held:
            _C._release_claim(held)


def clear_memory() -> None:
    _memory.clear()
