"""What PyTorch's own tests declare for an OpInfo, ModuleInfo or OptimizerInfo: the decorators
the info applies to a test, and the tolerances those set. Suites take their tolerances from here,
so the device is held to what upstream holds the CPU and CUDA to."""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import torch
from torch.testing._comparison import default_tolerances
from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
from torch.testing._internal.opinfo.core import DecorateInfo


def decorations(info, dtype: torch.dtype, test_class: str, tests: Iterable[str],
                device_types: tuple[str | None, ...] = (None,)) -> Iterator[tuple[Any, str]]:
    """(decorator, where) for each decorator `info` applies to `test_class.<test>` at `dtype` on
    one of `device_types` (None: any device); a bare decorator applies to every test."""
    for test in tests:
        for decorator in info.decorators:
            if not isinstance(decorator, DecorateInfo):
                yield decorator, "every test"
                continue
            if decorator.cls_name not in (None, test_class) or decorator.test_name not in (None, test):
                continue
            if decorator.device_type not in device_types or not decorator.active_if:
                continue
            if decorator.dtypes is not None and dtype not in decorator.dtypes:
                continue
            where = f"{test_class}.{test}" + (f" on {decorator.device_type}" if decorator.device_type else "")
            for inner in decorator.decorators:
                yield inner, where


def tolerance(decorators: Iterable[tuple[Any, str]], dtype: torch.dtype, kind: str) -> tuple[float, float, str]:
    """(rtol, atol, source): torch.testing's defaults for `dtype`, then the last toleranceOverride
    or precisionOverride among `decorators` that names it; `kind` (OpInfo, ...) names the source."""
    rtol, atol = default_tolerances(torch.empty(0, dtype=dtype))
    source = "torch.testing default"
    for decorator, where in decorators:
        if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
            atol, rtol = decorator.d[dtype].atol, decorator.d[dtype].rtol
            source = f"{kind} toleranceOverride ({where})"
        elif isinstance(decorator, precisionOverride) and dtype in decorator.d:
            atol = decorator.d[dtype]
            source = f"{kind} precisionOverride ({where})"
    return rtol, atol, source
