"""Proposes skiplists/ledger/dispositions.json from a ledger of a run (run once, then review).

    build/neuron-conform ledger --db DB --format json > ledger.json
    .venv/bin/python skiplists/ledger/propose.py ledger.json > proposal.json

Only overloads the runs left unreached, without a disposition, are considered; the rules below
group them by what they are (a name test here is only a proposal: the file written lists exact
names, and a reviewer reads every group before it ships). What matches no rule is left out:
it stays "unreached, no disposition" until a suite reaches it.
"""

from __future__ import annotations

import json
import sys

# (disposition, reason, test of the overload's name without "aten::"), first match wins.
RULES = [
    ("not_applicable",
     "quantized tensors and quantization kernels (quantize/dequantize, fake-quantize observers, "
     "quantized RNN cells): a device backend of this kind has no quantized tensor type",
     lambda n: "quantiz" in n or n.startswith(("_make_per_", "_fused_moving_avg_obs_fq_helper"))),
    ("not_applicable",
     "CPU-only packed low-bit weight kernels (int4/int8 weight packing for the CPU's matmul "
     "micro-kernels): their packed layout is the CPU's own",
     lambda n: n.startswith(("_convert_weight_to_int4pack_for_cpu", "_weight_int4pack_mm_for_cpu",
                             "_weight_int8pack_mm", "_dyn_quant_"))),
    ("not_applicable",
     "oneDNN (mkldnn) layout and kernels: a CPU library's opaque tensor layout",
     lambda n: n.startswith(("mkldnn_", "to_mkldnn"))),
    ("not_applicable",
     "sparse layouts (COO, CSR, CSC, BSR, BSC) and their index conversions: the device supports "
     "strided tensors only (skiplists/sparse.json)",
     lambda n: n.startswith(("_to_sparse", "_convert_indices_from_", "_validate_compressed_sparse",
                             "sspaddmm", "_spdiags"))),
    ("not_applicable",
     "nested and jagged tensors: a layout of their own, outside a strided device backend",
     lambda n: n.startswith(("_nested_", "_jagged_to_padded", "_padded_dense_to_jagged"))),
    ("not_applicable",
     "the CPU's own convolution algorithms (slow im2col convolutions) that aten::convolution "
     "picks on the CPU; a device receives aten::convolution (reached) and never these",
     lambda n: n.startswith(("_slow_conv2d_", "slow_conv3d_forward", "slow_conv_dilated",
                             "slow_conv_transpose3d", "slow_conv_transpose2d.out"))),
    ("not_applicable",
     "the CPU's own scaled-dot-product-attention kernel and backend choice: a device gets "
     "aten::scaled_dot_product_attention and its own (or the math) implementation",
     lambda n: n.startswith(("_scaled_dot_product_flash_attention_for_cpu", "_fused_sdp_choice"))),
    ("not_applicable",
     "operators that exist to test the dispatcher and functorch, not to compute",
     lambda n: n.startswith(("_test_", "_foobar"))),
    ("unreached",
     "the backend's minimal kernels (backend/csrc/aten/Minimal.cpp: allocation, views, resizing, "
     "storage swaps, reading a scalar) run natively in nearly every case, but outside the "
     "backend's op tracking, so no op event records them",
     lambda n: n in {"empty.memory_format", "empty_strided", "as_strided", "view", "unfold",
                     "_reshape_alias", "resize_", "_local_scalar_dense", "set_.source_Tensor",
                     "set_.source_Storage", "set_.source_Storage_storage_offset", "set_"}),
]


def main() -> None:
    ledger = json.loads(open(sys.argv[1]).read())
    groups: dict[tuple[str, str], list[str]] = {}
    for row in ledger["rows"]:
        if row["status"] != "unreached, no disposition":
            continue
        short = row["overload"].removeprefix("aten::")
        for disposition, reason, test in RULES:
            if test(short):
                groups.setdefault((disposition, reason), []).append(row["overload"])
                break
    entries = [{"disposition": d, "reason": r, "overloads": sorted(names)} for (d, r), names in groups.items()]
    print(json.dumps({"description": "see skiplists/ledger/README.md", "entries": entries}, indent=2))


if __name__ == "__main__":
    main()
