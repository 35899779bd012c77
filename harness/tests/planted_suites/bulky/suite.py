"""A planted suite of many quick cases with bulky evidence (16 KB each): enough writes to fill a
small disk quota mid-run, and a run long enough to read while it writes
(harness/tests/test_store_stress.py); a second suite beside the operator suite for the gate over
several suites (test_reports.py). Options: `case_seconds` makes each case take that long,
`failing` names the parcels (comma-separated) that fail."""

from __future__ import annotations

import time

import suite_api
from sides import Verdict
from vocabulary import Outcome

CASES = 300
SETTINGS: dict = {}
SUITE = suite_api.Suite(__name__, noun="parcel", nouns="parcels", options={
    "case_seconds": {"type": "float", "default": 0.0, "help": "how long each case takes"},
    "failing": {"type": "str", "default": "", "help": "parcels that fail, comma-separated"}})
SUITE.makes_cases(suite_api.Case)


@SUITE.configures
def configure(options):
    SETTINGS.update(options)


@SUITE.lists
def list_cases():
    return ((f"parcel{i:03d}", "-", "store") for i in range(CASES))


@suite_api.check("store", "records a bulky result")
def store(case):
    time.sleep(SETTINGS.get("case_seconds", 0.0))
    if case.id.subject in SETTINGS.get("failing", "").split(","):
        raise Verdict(Outcome.FAIL, {"message": f"{case.id.subject} planted to fail"})
    case.evidence["payload"] = case.id.subject * 2000
