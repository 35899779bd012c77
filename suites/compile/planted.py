"""The defects the compile suite's checks must catch, planted by harness/tests/defects_backend.py
(suitelib/planting.py says how): faults of the Dynamo backend "neuron", each on its own op so that
the rest compiles right. No kernel carries them: each class is patches, its fault switched on in
_Faults and, in Dynamo's registry of backends, "neuron" replaced by the one planted backend
(AOTAutograd over torch_neuronsim's own graph compiler) that reads them. Opt-in (every other
suite's compiled cases would meet them); harness/tests/test_compile_suite.py plants the three.
Never imported by a real run."""

from __future__ import annotations

from typing import Any, Callable

import torch

from suitelib.planting import Defect

aten = torch.ops.aten
REGISTRY = "torch._dynamo.backends.registry._COMPILER_FNS"  # an import path: Dynamo is imported once planted


class _Faults:
    """What the planted backend gets wrong: each class's patch switches its own fault on."""

    tanh_factor = 1.0  # miscompiles_forward: tanh's result scaled in forward graphs
    one_minus_factor = 1.0  # miscompiles_backward: sigmoid's (1 - y) scaled in backward graphs
    forgets_mul = False  # forgets_graphs: a forward graph with mul dropped after each call


def _scale_results(gm: torch.fx.GraphModule, target, factor: float, when=lambda node: True) -> None:
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target == target and when(node):
            with gm.graph.inserting_after(node):
                scaled = gm.graph.call_function(aten.mul.Tensor, (node, factor))
            scaled.meta = dict(node.meta)  # same shape and dtype: the lowering reads them
            node.replace_all_uses_with(scaled, delete_user_cb=lambda user: user is not scaled)
    gm.recompile()


def _planted_compiler(kind: str) -> Callable[..., Any]:
    import torch._dynamo
    from torch_neuronsim.compiler import backend as real  # the backend planted on, as defects_backend is

    compile_graph = real._compiler(kind)

    def compile_planted(gm: torch.fx.GraphModule, example_inputs):
        forgets = (_Faults.forgets_mul and kind == "forward"
                   and any(n.target == aten.mul.Tensor for n in gm.graph.nodes))
        if kind == "forward":
            if _Faults.tanh_factor != 1.0:
                _scale_results(gm, aten.tanh.default, _Faults.tanh_factor)
        elif _Faults.one_minus_factor != 1.0:
            # sigmoid's derivative y * (1 - y), decomposed: the (1 - y) scaled
            _scale_results(gm, aten.sub.Tensor, _Faults.one_minus_factor, when=lambda node: node.args[0] == 1)
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


def _compiler_fault(fault: str, value: Any) -> dict[tuple[Any, str], Any]:
    """The patches of one class: its fault switched on, and the planted backend registered as "neuron"."""
    return {(REGISTRY, "neuron"): planted_neuron_backend, (_Faults, fault): value}


DEFECTS = {
    "miscompiles_forward": Defect({}, "aten::tanh miscompiled in forward graphs: its result scaled by 1.01",
                                  "forward (and backward: its gradients)", opt_in=True,
                                  patches=_compiler_fault("tanh_factor", 1.01)),
    "miscompiles_backward": Defect({}, "in backward graphs, `1 - y` (sigmoid's derivative y * (1 - y), decomposed) "
                                   "doubled: sigmoid's gradient is wrong, its forward right", "backward",
                                   opt_in=True, patches=_compiler_fault("one_minus_factor", 2.0)),
    "forgets_graphs": Defect({}, "a forward graph with aten::mul is not reusable: after each call every compiled "
                             "graph is dropped (torch._dynamo.reset()), so a repeated shape compiles again",
                             "recompile (first shape again)", opt_in=True,
                             patches=_compiler_fault("forgets_mul", True)),
}
