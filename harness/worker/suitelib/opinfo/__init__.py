"""PyTorch's OpInfo database as the suites use it: the table by subject (database), the samples and
the comparison of a case's device runs with the CPU's (runs), and the variants made of a sample
(sample_variants, argument_variants). The ops, compile, aten and sizes suites share it."""

from .database import by_subject, foreach_by_subject, subject

__all__ = ["by_subject", "foreach_by_subject", "subject"]
