"""A test-only backend for the compile suite: torch_neuronsim whose Dynamo backend "neuron" has
three planted faults, each on its own op so that the rest compiles right:

  aten::tanh              miscompiled in forward graphs: its result scaled by 1.01
  backward graphs         `1 - y` (sigmoid's derivative y * (1 - y), decomposed) doubled: sigmoid's
                          gradient is wrong, its forward right
  aten::mul               a forward graph with it is not reusable: after each call every
                          compiled graph is dropped (torch._dynamo.reset()), so a repeated shape
                          compiles again
Everything else is torch_neuronsim, including its compile_stats() and op tracking.
"""

import torch
import torch._dynamo
import torch_neuronsim
from torch._dynamo.backends.registry import _COMPILER_FNS
from torch_neuronsim import clear_op_tracking, compile_stats, get_executed_ops, get_fallback_ops  # noqa: F401
from torch_neuronsim.compiler import backend as real

__version__ = torch_neuronsim.__version__ + "+planted-compile"
aten = torch.ops.aten


def _scale_results(gm: torch.fx.GraphModule, target, factor: float, when=lambda node: True) -> None:
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target == target and when(node):
            with gm.graph.inserting_after(node):
                scaled = gm.graph.call_function(aten.mul.Tensor, (node, factor))
            scaled.meta = dict(node.meta)  # same shape and dtype: the lowering reads them
            node.replace_all_uses_with(scaled, delete_user_cb=lambda user: user is not scaled)
    gm.recompile()


def _planted_compiler(kind: str):
    compile_graph = real._compiler(kind)

    def compile_planted(gm: torch.fx.GraphModule, example_inputs):
        forgets = kind == "forward" and any(n.target == aten.mul.Tensor for n in gm.graph.nodes)
        if kind == "forward":
            _scale_results(gm, aten.tanh.default, 1.01)
        else:
            # sigmoid's derivative y * (1 - y), decomposed: the (1 - y) doubled
            _scale_results(gm, aten.sub.Tensor, 2.0, when=lambda node: node.args[0] == 1)
        compiled = compile_graph(gm, example_inputs)
        if not forgets:
            return compiled

        def forgetful(args):
            out = compiled(args)
            torch._dynamo.reset()
            return out

        forgetful._boxed_call = True
        return forgetful

    return compile_planted


def planted_neuron_backend(gm, example_inputs, **kwargs):
    from torch._decomp import core_aten_decompositions
    from torch._dynamo.backends.common import aot_autograd

    return aot_autograd(fw_compiler=_planted_compiler("forward"), bw_compiler=_planted_compiler("backward"),
                        decompositions=core_aten_decompositions())(gm, example_inputs, **kwargs)


planted_neuron_backend._tags = ()  # what torch._dynamo.register_backend would set
_COMPILER_FNS["neuron"] = planted_neuron_backend
