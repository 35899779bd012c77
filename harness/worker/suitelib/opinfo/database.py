"""PyTorch's OpInfo database as the suites name it: an OpInfo's subject in case ids is its name
plus ".variant_test_name" when it has one (`nn.functional.pad.constant`); the table of OpInfos by
subject (by_subject(), the one the suites look OpInfos up in) and the listing rows made of it."""

from __future__ import annotations

from functools import cache
from typing import Any, Callable, Iterable, Iterator

from evidence import dtype_name


def subject(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


@cache
def by_subject() -> dict[str, Any]:
    """Every OpInfo of the installed torch's op_db that upstream tests on a backend of this kind,
    by subject: not those it runs on CUDA alone (`onlyCUDA`: the jiterator test ops, which no CPU
    reference can run either)."""
    from torch.testing._internal.common_device_type import onlyCUDA
    from torch.testing._internal.common_methods_invocations import op_db

    return {subject(op): op for op in op_db if onlyCUDA not in op.decorators}


@cache
def foreach_by_subject() -> dict[str, Any]:
    """Upstream's _foreach_* OpInfos (foreach_unary_op_db, foreach_binary_op_db,
    foreach_pointwise_op_db, foreach_reduce_op_db, foreach_other_op_db), which op_db does not
    hold, by subject."""
    from torch.testing._internal import common_methods_invocations as cmi

    dbs = (cmi.foreach_unary_op_db, cmi.foreach_binary_op_db, cmi.foreach_pointwise_op_db,
           cmi.foreach_reduce_op_db, cmi.foreach_other_op_db)
    return {subject(op): op for db in dbs for op in db}


def case_rows(checks_for: Callable[[Any, Any], Iterable[str]]) -> Iterator[tuple[str, str, str]]:
    """(subject, dtype, check) of every OpInfo of by_subject() at each of its CPU dtypes, for the
    checks `checks_for(op, dtype)` gives: the rows of the ops and compile suites' listings."""
    for subject, op in sorted(by_subject().items()):
        for dtype in sorted(op.supported_dtypes("cpu"), key=dtype_name):
            for check in checks_for(op, dtype):
                yield subject, dtype_name(dtype), check
