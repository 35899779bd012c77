"""Lowering an ATen graph to StableHLO through torch-mlir, as TorchNeuron's compile path does
(torch_mlir.fx.stateless_fx_import's import and pipelines, output_type="stablehlo"). A graph
torch-mlir cannot lower is a CompileError naming the op, as on the real device.

One MLIR context serves many lowerings: making one (its dialect registry, its thread pool) cost
more than the lowering of a small graph, and stateless_fx_import makes one per call even when
given an importer, so this module calls the importer and torch-mlir's pipelines itself."""

from __future__ import annotations

import copy
import os
import re
import threading

import torch
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_dialect
from torch_mlir.extras.fx_importer import FxImporter
from torch_mlir.fx import OutputType, _module_lowering

# How torch-mlir's diagnostics name an op it could not convert: an operator it has no definition
# for ('torch.operator' ... name = "torch.aten.cummax"), or one it could not legalize
# ('torch.aten.foo').
_OPERATOR = re.compile(r'name = "torch\.(\w+)\.([\w.]+)"')
_LEGALIZE = re.compile(r"failed to legalize operation 'torch\.(aten|prims)\.(\w+)'")

# A context keeps every type and attribute it has uniqued (a graph's constants among them) for
# its lifetime: a new one after this many lowerings bounds that.
_LOWERINGS_PER_CONTEXT = 1000


class CompileError(RuntimeError):
    """torch.compile on neuron could not compile a graph; `op` is the ATen op to blame, if known."""

    def __init__(self, message: str, op: str | None = None) -> None:
        super().__init__(message)
        self.op = op


def _without_none_outputs(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """A copy whose outputs leave out None (a backward graph's gradients of inputs that need none):
    StableHLO functions return tensors only."""
    lowered = copy.deepcopy(gm)
    output = next(node for node in lowered.graph.nodes if node.op == "output")
    values = output.args[0]
    if isinstance(values, (list, tuple)):
        output.args = (type(values)(v for v in values if v is not None),)
        lowered.recompile()
    return lowered


def _data_dependent(gm: torch.fx.GraphModule) -> str | None:
    """The first op whose output shape depends on the data (an unbacked size, such as nonzero's)."""
    for node in gm.graph.nodes:
        value = node.meta.get("val")
        if node.op == "call_function" and isinstance(value, torch.Tensor) and any(
                isinstance(s, torch.SymInt) for s in value.shape):
            return str(node.target).removesuffix(".default").replace(".", "::", 1)
    return None


def _refusal(gm: torch.fx.GraphModule, diagnostics: list[str]) -> CompileError:
    text = "\n".join(diagnostics)
    if op := _data_dependent(gm):
        return CompileError(f"neuron: {op} has a data-dependent output shape, and neuron compiles static shapes "
                            f"only (torch-mlir: {diagnostics[0][:300] if diagnostics else 'no diagnostics'})", op)
    match = _OPERATOR.search(text) or _LEGALIZE.search(text)
    op = f"{match.group(1)}::{match.group(2)}" if match else None
    first = diagnostics[0] if diagnostics else "no diagnostics"
    what = f"{op} cannot be lowered" if op else "the graph cannot be lowered"
    return CompileError(f"neuron: {what} to StableHLO by torch-mlir: {first[:400]}", op)


class _SharedContext:
    """The MLIR context lowerings share, renewed every _LOWERINGS_PER_CONTEXT uses and in a forked
    child (whose copy of the context's thread pool has no threads); one lowering at a time (a
    backward graph is compiled on the autograd engine's thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._context: ir.Context | None = None
        self._uses = 0
        self._pid = os.getpid()

    def get(self) -> ir.Context:
        if self._context is None or self._uses >= _LOWERINGS_PER_CONTEXT or self._pid != os.getpid():
            self._context = ir.Context()
            torch_dialect.register_dialect(self._context)
            self._uses = 0
            self._pid = os.getpid()
        self._uses += 1
        return self._context


_shared = _SharedContext()


def lower(gm: torch.fx.GraphModule, name: str) -> str:
    """The graph's StableHLO module, as text. CompileError when torch-mlir cannot lower it."""
    diagnostics: list[str] = []

    def collect(diagnostic) -> bool:  # kept for the error, instead of printed to stderr
        diagnostics.append(str(diagnostic.message))
        return True

    with _shared.lock:
        context = _shared.get()
        handler = context.attach_diagnostic_handler(collect)
        try:
            importer = FxImporter(context=context)
            importer.import_stateless_graph(_without_none_outputs(gm).graph, func_name=name)
            _module_lowering(False, False, OutputType.STABLEHLO, importer.module)
            return str(importer.module)
        except (MemoryError, RecursionError):
            raise  # this process's limits, not torch-mlir's refusal: not a CompileError, never cached
        except Exception as exc:
            raise _refusal(gm, diagnostics or [str(exc).strip().splitlines()[0]]) from exc
        finally:
            handler.detach()
