"""PyTorch's OpInfo database as the suites use it: the table by subject and the listing rows made of
it (database), an OpInfo's samples and their placement on the device (samples), the calls made of
them (calls), the tolerances (tolerances), the judge of a case's device runs against the CPU's
(judge), the value checks more than one suite runs (checks), and the variants made of a sample
(sample_variants, argument_variants, layouts, identity, placements). The ops, compile, aten,
sizes, foreach and fuzz suites share it."""

from .database import by_subject, case_rows, foreach_by_subject, subject

__all__ = ["by_subject", "case_rows", "foreach_by_subject", "subject"]
