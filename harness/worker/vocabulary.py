"""The project's vocabulary on the Python side: outcomes, skip-list categories, kernels, run
statuses and the evidence values the reports read (`where`, `stage`).

Defined once, in C++ (harness/src/common/Vocabulary.h); harness/vocabulary.json is generated from
it and a test keeps the two equal. Suites and the worker name outcomes through these enums, so a
misspelt outcome fails at import, not in a report.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path

_DATA = json.loads((Path(__file__).resolve().parents[1] / "vocabulary.json").read_text())

Outcome = enum.StrEnum("Outcome", {o["name"].upper(): o["name"] for o in _DATA["outcomes"]})
Category = enum.StrEnum("Category", {c["name"].upper(): c["name"] for c in _DATA["categories"]})
# What runs an op on the device, as check-model's capture sees the dispatcher.
Kernel = enum.StrEnum("Kernel", {k["name"].upper(): k["name"] for k in _DATA["kernels"]})
# What a skip-list entry does with the cases it matches.
Mode = enum.StrEnum("Mode", {m["name"].upper(): m["name"] for m in _DATA["modes"]})
# How an aten op ran in a case: natively or through the backend's CPU fallback.
Route = enum.StrEnum("Route", {r["name"].upper(): r["name"] for r in _DATA["routes"]})
# Where a run stands (the results DB's runs.status).
RunStatus = enum.StrEnum("RunStatus", {s["name"].upper(): s["name"] for s in _DATA["run_statuses"]})
# Evidence the reports read: `where` (whose problem a failure is when not the device's) and
# `stage` (the step that raised, where it means the same to every suite).
Where = enum.StrEnum("Where", {w["name"].upper(): w["name"] for w in _DATA["wheres"]})
Stage = enum.StrEnum("Stage", {s["name"].upper(): s["name"] for s in _DATA["stages"]})
# The evidence's core: the fields every suite fills the same way and the reports read by name,
# each with its JSON type ("string", or "strings": a list of them). Every other field is a detail.
EVIDENCE_CORE: dict[str, str] = {f["name"]: f["type"] for f in _DATA["evidence_core"]}
# Evidence flags (true when set): SUITE_SKIP, a case the suite itself skipped.
EvidenceFlag = enum.StrEnum("EvidenceFlag", {f["name"].upper(): f["name"] for f in _DATA["evidence_flags"]})
# A worker that exits with this code stopped because a case exceeded the worker memory limit.
EXIT_MEMORY_LIMIT: int = _DATA["worker_exit_codes"]["memory_limit"]

# Ran and matched the CPU (pass, fallback, xpass).
MATCHED = frozenset(Outcome(o["name"]) for o in _DATA["outcomes"] if o["kind"] == "matched")
