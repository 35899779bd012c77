"""The operator suite: every OpInfo of the installed torch's op_db, at every dtype the op
supports on the CPU, checked on the device against the CPU, with the inputs PyTorch's own tests
use (TestCommon.test_compare_cpu, test_noncontiguous_samples, test_out, and the in-place part of
test_variant_consistency_eager).

Case ids: ops/<subject>/<dtype>/<check>, subject = OpInfo name plus ".variant_test_name".
Checks: each is declared (suite_api.check) in a module beside this file, which says in its
docstring and DESCRIPTION what it compares; importing the modules below in order is the order the
registry lists them in (`neuron-conform suites` prints them with their descriptions, README.md
maps them to their files).
The CPU reference is computed once per sample and reused for its variants; a variant is run on
the CPU itself only when the device disagrees with that reference (an op whose result depends on
the layout, such as as_strided or view, is judged against the CPU at the same layout). Evidence
names the variant that failed first, the sample's index and a description of it.
Tolerances: torch.testing's per-dtype defaults, the OpInfo's own toleranceOverride /
precisionOverride decorators that apply to every test or to TestCommon.test_compare_cpu, then
a skip list's tolerance entry matching the case. The tolerance used and its source are part of
the evidence; what "differs" means is harness/worker/comparison.py's, shared with the other
suites.
"""

from __future__ import annotations

from typing import Any, Iterable

import suite_api
from suitelib import opinfo
from suitelib.opinfo import judge
from suitelib.public_api import opinfo_api

# Each module declares its checks (suite_api.check); importing them in this order lists the checks so.
from . import (ops_forward, ops_out, ops_inplace, ops_autograd, ops_extremal, ops_layout,  # noqa: F401
               ops_errors, ops_gradgrad, ops_random, ops_autocast, ops_sdpa, ops_devices,
               ops_invariance)

opinfo.by_subject()  # op_db imported with the suite: the zygote forks its workers with it

SUITE = suite_api.Suite(__name__, noun="OpInfo", nouns="OpInfos",
                        native_phrase="run natively at every dtype and check", nightly={"shards": 2})
SUITE.makes_cases(judge.cases(opinfo.by_subject))


@SUITE.lists
def list_cases() -> Iterable[tuple[str, str, str]]:
    return opinfo.case_rows(SUITE.checks_for)


@SUITE.declares_api
def public_api() -> dict[str, Any]:
    """The public names each OpInfo tests in eager mode (harness/worker/suitelib/public_api.py)."""
    return opinfo_api("eager", SUITE.api_checks())

