"""The Python side of `neuron-conform check-model`: which aten ops a model uses, without running it.

Prints one JSON document on stdout (the C++ side puts verdicts from the results store on it):
  {"model": ..., "ops": [{"op", "calls", "dtypes", "phases", "device_kernel", "reaches"?}], "probe": ...}
or {"fatal": "<one line naming the problem>"} with exit code 3.

The model's ops are captured under a TorchDispatchMode while it runs on meta tensors (a
7B-parameter config costs no memory), forward and, with --train, backward. `device_kernel` says
whether the backend registers a kernel for the op on its dispatch key (PrivateUse1); without one
the op would reach the CPU fallback. A composite op (a kernel for every backend, made of other
ops) is replayed once on the device, with zero-filled inputs of the captured shapes and the
backend's op tracking, so that `reaches` says what the device is really asked to run. --probe
runs the (tiny) model for real, on the device and on the CPU, and reports what fell back or
failed, and how far the outputs are apart. --compile compiles the (tiny) model with the backend's
Dynamo backend and reports the graphs, graph breaks and their reasons, a compile failure (its
stage and op) and how far the compiled output is from the CPU's.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import traceback
from typing import Any

import backend_contract
import suite_api
from case_context import Context
from protocol import emit, protocol_stream

from .capture import capture, exported_ops
from .compiled import compile_check
from .fatal import Fatal
from .placement import tensor_attributes
from .probe import probe, train_probe
from .shapes import Shape, input_maker, parse_shapes, shapes_check
from .sources import exported_program, hf_model, script_model


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--hf")
    source.add_argument("--script")
    source.add_argument("--exported")
    parser.add_argument("--full-size", action="store_true")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--train", action="store_true")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--shapes", help="--script: input shapes to run (2x16,2x32), with --probe and/or --compile")
    parser.add_argument("--seq-lens", help="--hf: sequence lengths to run (16,32,64), with --probe and/or --compile")
    parser.add_argument("--batch-sizes", help="--hf: batch sizes to run with each sequence length (default 2)")
    parser.add_argument("--device-map", choices=["auto"],
                        help="--hf --probe: place the model as transformers' device_map='auto' does")
    parser.add_argument("--backend-module", required=True, help="the backend's Python module (torch_neuronx, ...)")
    parser.add_argument("--device", help="default: the PrivateUse1 device the backend module names")
    return parser


def integers(option: str, text: str) -> list[int]:
    values = [v.strip() for v in text.split(",")]
    if not all(v.isdigit() and int(v) > 0 for v in values):
        raise Fatal(f"{option} {text}: expected positive integers separated by commas (16,32,64)")
    return [int(v) for v in values]


def requested_shapes(args: argparse.Namespace) -> list[Shape]:
    """The shapes --shapes, or --seq-lens with --batch-sizes, ask for (empty: none); Fatal for
    lists that do not parse or options that do not apply."""
    if not (args.shapes or args.seq_lens or args.batch_sizes):
        return []
    if not (args.probe or args.compile):
        raise Fatal("--shapes, --seq-lens and --batch-sizes run the model: add --probe (eager) and/or --compile")
    if args.shapes:
        if not args.script:
            raise Fatal("--shapes applies to --script (for --hf: --seq-lens and --batch-sizes)")
        return parse_shapes(args.shapes)
    if not args.hf:
        raise Fatal("--seq-lens and --batch-sizes apply to --hf (for --script: --shapes)")
    from suitelib.tiny_models import BATCH, SEQ

    seq_lens = integers("--seq-lens", args.seq_lens) if args.seq_lens else [SEQ]
    batches = integers("--batch-sizes", args.batch_sizes) if args.batch_sizes else [BATCH]
    return [(b, s) for b in batches for s in seq_lens]


def refuse_combinations(args: argparse.Namespace) -> None:
    """Fatal for options that do not apply to the others given (after requested_shapes)."""
    if args.device_map and not (args.hf and args.probe):
        raise Fatal("--device-map applies to --hf with --probe (it places the model that the probe runs)")
    if args.exported:
        if args.probe or args.train or args.compile:
            raise Fatal("--exported: --probe, --train and --compile need a model to run; use --script or --hf")
    elif args.full_size and not args.hf:
        raise Fatal("--full-size applies to --hf only")


def model_document(args: argparse.Namespace, backend, dtype, shapes: list[Shape]) -> dict[str, Any]:
    """The document, without its capture_seconds: the model, its ops and what the options ask
    for (shapes, placement, probe, compile)."""
    import torch

    if args.exported:
        program, model_info = exported_program(args.exported)
        ops = exported_ops(program, Context(backend, args.device, 0))
    else:
        model, inputs, model_info, rebuild = (hf_model(args.hf, args.full_size, dtype) if args.hf
                                              else script_model(args.script, dtype))
        ops = capture(model, inputs, args.train, Context(backend, args.device, 0))
        static_findings = tensor_attributes(model)
    document: dict[str, Any] = {"model": {**model_info, "dtype": args.dtype, "train": args.train,
                                          "torch": torch.__version__, "backend_module": args.backend_module,
                                          "backend_version": str(getattr(backend, "__version__", "unknown"))},
                                "ops": ops,
                                # the evidence suite when check-model is given no --suite
                                "default_suite": suite_api.DEFAULT_SUITE}
    if shapes:  # before the probe, so that the first shape's executables are its own
        document["shapes"] = shapes_check(rebuild, input_maker(bool(args.hf), inputs), shapes, backend, args.device,
                                          eager=args.probe, compiled=args.compile)
    if not args.exported:
        document["placement"] = {"findings": static_findings}
    if args.probe:
        document["probe"] = probe(rebuild, backend, args.device, args.device_map)
        # the probe's placement (after the setup, and the forward's CPU ops) adds to the static part
        watched = document["probe"].pop("placement")
        known = {(f["kind"], f["where"]) for f in static_findings}
        document["placement"] = {**watched, "findings": static_findings + [
            f for f in watched["findings"] if (f["kind"], f["where"]) not in known]}
        if args.train:
            document["probe"]["train_step"] = train_probe(rebuild, args.device, bool(args.hf))
    if args.compile:
        document["compile"] = compile_check(rebuild, backend, args.device)
    return document


def main() -> None:
    args = arguments().parse_args()
    started = time.perf_counter()
    out = protocol_stream()  # the model's own prints (a script's, a graph break's) go to stderr
    try:
        import torch

        try:
            backend = importlib.import_module(args.backend_module)
        except Exception as exc:
            raise Fatal(f"cannot import backend module '{args.backend_module}': {type(exc).__name__}: {exc}")
        args.device = args.device or torch._C._get_privateuse1_backend_name()
        backend_contract.declare(args.backend_module, backend, args.device)
        dtype = getattr(torch, args.dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise Fatal(f"--dtype {args.dtype}: not a torch dtype")
        shapes = requested_shapes(args)
        refuse_combinations(args)
        document = model_document(args, backend, dtype, shapes)
        document["capture_seconds"] = time.perf_counter() - started
        emit(out, document)
    except Fatal as fatal:
        emit(out, {"fatal": str(fatal)})
        sys.exit(3)
    except Exception as exc:  # a bug of ours: say so, with the traceback on stderr
        traceback.print_exc()
        emit(out, {"fatal": f"check-model failed: {type(exc).__name__}: {exc}"})
        sys.exit(3)
