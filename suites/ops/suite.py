"""The operator suite: every OpInfo of the installed torch's op_db, at every dtype the op
supports on the CPU, checked on the device against the CPU, with the inputs PyTorch's own tests
use (TestCommon.test_compare_cpu, test_noncontiguous_samples, test_out, and the in-place part of
test_variant_consistency_eager).

Case ids: ops/<subject>/<dtype>/<check>, subject = OpInfo name plus ".variant_test_name".
Checks, each declared (suite_api.check) in a module beside this file and described in its
docstring, listed in this order:
  forward     (ops_forward.py) every reference input (op.reference_inputs: the sample inputs plus, where the
              OpInfo has them, upstream's larger set: non-contiguous, broadcasting, extremal
              values), each run as generated and again non-contiguously (upstream's
              SampleInput.noncontiguous(): same values, strided storage), the first samples also
              permuted, at a storage offset, expanded (stride 0) and channels_last
              (suitelib/opinfo/layouts.py), on the device against the CPU; and each sample's edge variants (sample_variants: a zero-size dimension,
              0-dim tensor scalars), which the CPU may refuse: then the device must refuse them
              with the same error type (Case.alike); and the arguments no sample moves off their
              default, at other values (argument_variants)
  extremal    (ops_extremal.py; floating dtypes) the sample inputs with NaN, +inf, -inf and -0.0 planted in every
              floating-point tensor input, and large magnitudes for elementwise ops defined for
              them; NaN positions must match exactly and infinities by sign
  out         (ops_out.py) the out= variant (OpInfos with supports_out), as test_out does: an out= full of
              NaN (or the largest integer), a non-contiguous out= (its strides and storage kept),
              a wrongly sized out= (resized, with the CPU's warning), and an out= dtype the CPU
              rejects (int64 for floating results) rejected on the device too
  inplace     (ops_inplace.py) the in-place variant (OpInfos that have one): it returns self, keeps self's
              storage, computes the CPU's values, leaves the other inputs untouched, and writes
              through views into a larger storage of finite sentinels (interleaved, transposed)
              without touching the rest of it; an expanded self is refused as the CPU refuses it
  backward    (ops_autograd.py) gradients of every input over the reference inputs, as generated and
              non-contiguously, and over the argument variants (OpInfos that support autograd,
              at dtypes with backward support), of the outputs' sum weighted by fixed
              pseudo-random weights, so the gradient the op's backward gets is not all ones
  forward_ad  (ops_autograd.py) forward-mode jvp compared (OpInfos with supports_forward_ad)
  layout      output dtype, shape, device, strides where PyTorch defines them, view-ness
              (ops_layout.py)
  errors      upstream's error_inputs and invalid variants of the samples (ops_errors.py)
  gradgrad    double backward (ops_gradgrad.py)
  random      (ops_random.py; random ops by name or upstream's "non-deterministic", reviewed,
              at their floating dtypes) sub-checks seeded, successive, reseeded, rng_state,
              generator, distribution: the device generator seeded alike reproduces a draw and
              advances, get/set_rng_state and torch.Generator(device) replay it, and 10^4 draws
              match the CPU's (means and variances within 5 standard errors, two-sample KS p >=
              1e-4), and each op's reviewed contract holds (contract: per-element parameters
              drive each element's statistics, bounds, draws without replacement distinct);
              the statistics are recorded
  autocast    (ops_autocast.py; OpInfos whose aten op has a kernel for AutocastPrivateUse1, at
              float32 and bfloat16) under torch.autocast(device_type=<device>, dtype=<the
              backend's autocast dtype>) the result has the dtype the backend's declared policy
              (autocast_policy()) gives and the values the CPU computes on the inputs cast so
  sdpa        (ops_sdpa.py; scaled_dot_product_attention) boolean and float masks, is_causal,
              scale, enable_gqa, dropout 0, against the float64 math reference
  devices     (ops_devices.py; one dtype per OpInfo) a sample on the second device while the first is
              current (outputs on the inputs' device, the CPU's values), and operands left on the
              CPU or placed on the other device, which the device must refuse as CUDA does (a
              0-dim CPU tensor and CPU index tensors may be taken, and must then be right)
  invariance  (ops_invariance.py; the OpInfos of its reviewed RELATIONS, float32) a large common offset
              (softmax, the normalizations), positive scaling, a permuted batch: the device's
              result on the transformed input equals its own result transformed
The CPU reference is computed once per sample and reused for its variants; a variant is run on
the CPU itself only when the device disagrees with that reference (an op whose result depends on
the layout, such as as_strided or view, is judged against the CPU at the same layout). Evidence
names the variant that failed first, the sample's index and a description of it.
Tolerances: torch.testing's per-dtype defaults, the OpInfo's own toleranceOverride /
precisionOverride decorators that apply to every test or to TestCommon.test_compare_cpu, then
harness/worker/suitelib/opinfo/tolerances.json. The tolerance used and its source are part of
the evidence; what "differs" means is harness/worker/comparison.py's, shared with the other
suites.
"""

from __future__ import annotations

from typing import Any, Iterable

import suite_api
from suitelib.public_api import opinfo_api

from suitelib.opinfo import runs
# Each module declares its checks (suite_api.check); importing them in this order lists the checks so.
from . import (ops_forward, ops_out, ops_inplace, ops_autograd, ops_extremal, ops_layout,  # noqa: F401
               ops_errors, ops_gradgrad, ops_random, ops_autocast, ops_sdpa, ops_devices,
               ops_invariance)

SUITE = suite_api.Suite(__name__, noun="OpInfo", nouns="OpInfos",
                        native_phrase="run natively at every dtype and check", nightly={"shards": 2})


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    return runs.case_rows(SUITE.checks_for)


@SUITE.declares_api
def public_api() -> dict[str, Any]:
    """The public names each OpInfo tests in eager mode (harness/worker/suitelib/public_api.py)."""
    return opinfo_api("eager", SUITE.api_checks())


@SUITE.runs
def run_case(case_id: suite_api.CaseId, ctx) -> tuple[str, dict[str, Any]]:
    return runs.run_case(SUITE, case_id, ctx, runs.OPS)
