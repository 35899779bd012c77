PRAGMA foreign_keys=OFF;
PRAGMA user_version = 2;
BEGIN TRANSACTION;
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted')),
  started_at TEXT NOT NULL,
  ended_at TEXT,
  label TEXT,
  seed INTEGER NOT NULL,
  host TEXT NOT NULL,
  torch_version TEXT NOT NULL,
  backend_module TEXT NOT NULL,
  backend_version TEXT NOT NULL,
  harness_version TEXT NOT NULL,
  device TEXT NOT NULL,
  shard TEXT,
  command TEXT NOT NULL
, backend_info TEXT NOT NULL DEFAULT '{}');
INSERT INTO runs VALUES('20260101-000000-gold','ops','complete','2026-01-01T00:00:00.000Z','2026-01-01T00:00:09.500Z','golden',0,'golden-host','2.13.0+cpu','planted_backend','0.1.0+planted','0.1.0','neuron',NULL,'neuron-conform run --label golden','{"native_ops": ["aten::abs", "aten::add.Tensor", "aten::add.out", "aten::neg", "aten::neg.out", "aten::tan", "aten::mul.Tensor"], "tracking": true, "cpu_overloads": ["aten::abs", "aten::abs.out", "aten::add.Tensor", "aten::add.out", "aten::erfinv", "aten::erfinv.out", "aten::hypot_", "aten::mm", "aten::neg", "aten::quantize_per_tensor", "aten::view"], "device_composite": ["aten::erfinv", "aten::hypot_"]}');
CREATE TABLE cases (
  id TEXT PRIMARY KEY,
  suite TEXT NOT NULL,
  subject TEXT NOT NULL,
  dtype TEXT NOT NULL,
  check_name TEXT NOT NULL
);
INSERT INTO cases VALUES('ops/abs/complex64/forward','ops','abs','complex64','forward');
INSERT INTO cases VALUES('ops/abs/complex64/out','ops','abs','complex64','out');
INSERT INTO cases VALUES('ops/abs/float32/forward','ops','abs','float32','forward');
INSERT INTO cases VALUES('ops/abs/float32/out','ops','abs','float32','out');
INSERT INTO cases VALUES('ops/add/complex64/forward','ops','add','complex64','forward');
INSERT INTO cases VALUES('ops/add/complex64/out','ops','add','complex64','out');
INSERT INTO cases VALUES('ops/add/float32/forward','ops','add','float32','forward');
INSERT INTO cases VALUES('ops/add/float32/out','ops','add','float32','out');
INSERT INTO cases VALUES('ops/cos/complex64/forward','ops','cos','complex64','forward');
INSERT INTO cases VALUES('ops/cos/complex64/out','ops','cos','complex64','out');
INSERT INTO cases VALUES('ops/cos/float32/forward','ops','cos','float32','forward');
INSERT INTO cases VALUES('ops/cos/float32/out','ops','cos','float32','out');
INSERT INTO cases VALUES('ops/erfinv/float32/forward','ops','erfinv','float32','forward');
INSERT INTO cases VALUES('ops/erfinv/float32/out','ops','erfinv','float32','out');
INSERT INTO cases VALUES('ops/neg/complex64/forward','ops','neg','complex64','forward');
INSERT INTO cases VALUES('ops/neg/complex64/out','ops','neg','complex64','out');
INSERT INTO cases VALUES('ops/neg/float32/forward','ops','neg','float32','forward');
INSERT INTO cases VALUES('ops/neg/float32/out','ops','neg','float32','out');
INSERT INTO cases VALUES('ops/nonzero/complex64/forward','ops','nonzero','complex64','forward');
INSERT INTO cases VALUES('ops/nonzero/complex64/out','ops','nonzero','complex64','out');
INSERT INTO cases VALUES('ops/nonzero/float32/forward','ops','nonzero','float32','forward');
INSERT INTO cases VALUES('ops/nonzero/float32/out','ops','nonzero','float32','out');
INSERT INTO cases VALUES('ops/sin/complex64/forward','ops','sin','complex64','forward');
INSERT INTO cases VALUES('ops/sin/complex64/out','ops','sin','complex64','out');
INSERT INTO cases VALUES('ops/sin/float32/forward','ops','sin','float32','forward');
INSERT INTO cases VALUES('ops/sin/float32/out','ops','sin','float32','out');
INSERT INTO cases VALUES('ops/tan/complex64/forward','ops','tan','complex64','forward');
INSERT INTO cases VALUES('ops/tan/complex64/out','ops','tan','complex64','out');
INSERT INTO cases VALUES('ops/tan/float32/forward','ops','tan','float32','forward');
INSERT INTO cases VALUES('ops/tan/float32/out','ops','tan','float32','out');
CREATE TABLE planned (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  position INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO planned VALUES('20260101-000000-gold','ops/abs/complex64/forward',0);
INSERT INTO planned VALUES('20260101-000000-gold','ops/abs/complex64/out',1);
INSERT INTO planned VALUES('20260101-000000-gold','ops/abs/float32/forward',2);
INSERT INTO planned VALUES('20260101-000000-gold','ops/abs/float32/out',3);
INSERT INTO planned VALUES('20260101-000000-gold','ops/add/complex64/forward',4);
INSERT INTO planned VALUES('20260101-000000-gold','ops/add/complex64/out',5);
INSERT INTO planned VALUES('20260101-000000-gold','ops/add/float32/forward',6);
INSERT INTO planned VALUES('20260101-000000-gold','ops/add/float32/out',7);
INSERT INTO planned VALUES('20260101-000000-gold','ops/cos/complex64/forward',8);
INSERT INTO planned VALUES('20260101-000000-gold','ops/cos/complex64/out',9);
INSERT INTO planned VALUES('20260101-000000-gold','ops/cos/float32/forward',10);
INSERT INTO planned VALUES('20260101-000000-gold','ops/cos/float32/out',11);
INSERT INTO planned VALUES('20260101-000000-gold','ops/erfinv/float32/forward',12);
INSERT INTO planned VALUES('20260101-000000-gold','ops/erfinv/float32/out',13);
INSERT INTO planned VALUES('20260101-000000-gold','ops/neg/complex64/forward',14);
INSERT INTO planned VALUES('20260101-000000-gold','ops/neg/complex64/out',15);
INSERT INTO planned VALUES('20260101-000000-gold','ops/neg/float32/forward',16);
INSERT INTO planned VALUES('20260101-000000-gold','ops/neg/float32/out',17);
INSERT INTO planned VALUES('20260101-000000-gold','ops/nonzero/complex64/forward',18);
INSERT INTO planned VALUES('20260101-000000-gold','ops/nonzero/complex64/out',19);
INSERT INTO planned VALUES('20260101-000000-gold','ops/nonzero/float32/forward',20);
INSERT INTO planned VALUES('20260101-000000-gold','ops/nonzero/float32/out',21);
INSERT INTO planned VALUES('20260101-000000-gold','ops/sin/complex64/forward',22);
INSERT INTO planned VALUES('20260101-000000-gold','ops/sin/complex64/out',23);
INSERT INTO planned VALUES('20260101-000000-gold','ops/sin/float32/forward',24);
INSERT INTO planned VALUES('20260101-000000-gold','ops/sin/float32/out',25);
INSERT INTO planned VALUES('20260101-000000-gold','ops/tan/complex64/forward',26);
INSERT INTO planned VALUES('20260101-000000-gold','ops/tan/complex64/out',27);
INSERT INTO planned VALUES('20260101-000000-gold','ops/tan/float32/forward',28);
INSERT INTO planned VALUES('20260101-000000-gold','ops/tan/float32/out',29);
CREATE TABLE results (
  run_id TEXT NOT NULL REFERENCES runs(id),
  case_id TEXT NOT NULL REFERENCES cases(id),
  outcome TEXT NOT NULL CHECK (outcome IN
    ('pass', 'fallback', 'fail', 'error', 'crash', 'timeout', 'skip', 'xfail', 'xpass')),
  duration REAL NOT NULL,
  evidence TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY (run_id, case_id)
);
INSERT INTO results VALUES('20260101-000000-gold','ops/cos/complex64/forward','skip',0.0,'{"skiplist": {"category": "crash", "entry": "skiplists/golden.json:2:2", "mode": "skip", "reason": "planted hang"}}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/cos/complex64/out','skip',0.0,'{"skiplist": {"category": "crash", "entry": "skiplists/golden.json:2:2", "mode": "skip", "reason": "planted hang"}}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/cos/float32/forward','skip',0.0,'{"skiplist": {"category": "crash", "entry": "skiplists/golden.json:2:2", "mode": "skip", "reason": "planted hang"}}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/cos/float32/out','skip',0.0,'{"skiplist": {"category": "crash", "entry": "skiplists/golden.json:2:2", "mode": "skip", "reason": "planted hang"}}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/abs/complex64/forward','error',0.026150424999286769889,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "planted: <script>document.title=\"pwned\"</script> must show as text", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/abs/complex64/out','error',0.016951690000496455468,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::abs: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/abs/float32/forward','pass',0.013178206998418318107,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/abs/float32/out','pass',0.0040782300002319971099,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/add/complex64/forward','error',0.0057011059998330892994,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::add.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[], complex64[])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/add/complex64/out','error',0.0049867640009324532002,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::add.Tensor: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[], complex64[])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/add/float32/forward','pass',0.013635899000291828997,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 11, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/add/float32/out','pass',0.012805833999664173461,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 11, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/erfinv/float32/forward','fallback',0.0048034889987320639193,'{"atol": 0.0001, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "tolerance_source": "OpInfo precisionOverride"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/erfinv/float32/out','fallback',0.0046472940011881291866,'{"atol": 0.0001, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "tolerance_source": "OpInfo precisionOverride"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/neg/complex64/forward','error',0.003559071001291158609,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::neg: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/neg/complex64/out','xfail',0.0035254710001026978716,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::neg: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "observed_outcome": "error", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "skiplist": {"category": "unsupported_op", "entry": "skiplists/golden.json:4:2", "mode": "xfail", "reason": "stale on purpose"}, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/neg/float32/forward','pass',0.0031272230007743928581,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/neg/float32/out','xpass',0.0031779590008227387443,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "observed_outcome": "pass", "rtol": 1.3e-06, "inputs_compared": 1, "inputs_without_reference": 0, "skiplist": {"category": "unsupported_op", "entry": "skiplists/golden.json:4:2", "mode": "xfail", "reason": "stale on purpose"}, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/nonzero/complex64/forward','error',0.0070649530007358407601,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::nonzero: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[], as_tuple=False)", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/nonzero/complex64/out','error',0.0066649630007304949685,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::nonzero: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[], as_tuple=False)", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/nonzero/float32/out','fallback',0.014604488000259152613,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 12, "inputs_without_reference": 12, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/nonzero/float32/forward','fallback',0.017156808999061468057,'{"atol": 1e-05, "max_abs_error": 0.0, "max_rel_error": 0.0, "rtol": 1.3e-06, "inputs_compared": 24, "inputs_without_reference": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/sin/complex64/forward','crash',0.028578268999999999894,'{"log": "runs/20260101-000000-gold/logs/worker.log", "message": "worker killed by signal 11 (Segmentation fault)", "signal": 11, "signal_name": "SIGSEGV", "stderr_tail": "/work/main/.venv/lib/python3.11/site-packages/torch/library.py:505: UserWarning: Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: aten::sin(Tensor self) -> Tensor\n    registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterSchema.cpp:6\n  dispatch key: PrivateUse1\n  previous kernel: registered at /__w/pytorch/pytorch/aten/src/ATen/LegacyBatchingRegistrations.cpp:1076\n       new kernel: registered at /work/main/harness/tests/planted_backend.py:19 (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)\n  self.m.impl(\n", "worker_pid": 32075}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/sin/complex64/out','crash',0.03572879999999999806,'{"log": "runs/20260101-000000-gold/logs/worker.log", "message": "worker killed by signal 11 (Segmentation fault)", "signal": 11, "signal_name": "SIGSEGV", "stderr_tail": "/work/main/.venv/lib/python3.11/site-packages/torch/library.py:505: UserWarning: Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: aten::sin(Tensor self) -> Tensor\n    registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterSchema.cpp:6\n  dispatch key: PrivateUse1\n  previous kernel: registered at /__w/pytorch/pytorch/aten/src/ATen/LegacyBatchingRegistrations.cpp:1076\n       new kernel: registered at /work/main/harness/tests/planted_backend.py:19 (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)\n  self.m.impl(\n", "worker_pid": 32073}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/sin/float32/forward','crash',2.2498182999999998266,'{"log": "runs/20260101-000000-gold/logs/worker.log", "message": "worker killed by signal 11 (Segmentation fault)", "signal": 11, "signal_name": "SIGSEGV", "stderr_tail": "/work/main/.venv/lib/python3.11/site-packages/torch/library.py:505: UserWarning: Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: aten::sin(Tensor self) -> Tensor\n    registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterSchema.cpp:6\n  dispatch key: PrivateUse1\n  previous kernel: registered at /__w/pytorch/pytorch/aten/src/ATen/LegacyBatchingRegistrations.cpp:1076\n       new kernel: registered at /work/main/harness/tests/planted_backend.py:19 (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)\n  self.m.impl(\n", "worker_pid": 32081}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/sin/float32/out','crash',2.2545617990000001995,'{"log": "runs/20260101-000000-gold/logs/worker.log", "message": "worker killed by signal 11 (Segmentation fault)", "signal": 11, "signal_name": "SIGSEGV", "stderr_tail": "/work/main/.venv/lib/python3.11/site-packages/torch/library.py:505: UserWarning: Warning only once for all operators,  other operators may also be overridden.\n  Overriding a previously registered kernel for the same operator and the same dispatch key\n  operator: aten::sin(Tensor self) -> Tensor\n    registered at /__w/pytorch/pytorch/build/aten/src/ATen/RegisterSchema.cpp:6\n  dispatch key: PrivateUse1\n  previous kernel: registered at /__w/pytorch/pytorch/aten/src/ATen/LegacyBatchingRegistrations.cpp:1076\n       new kernel: registered at /work/main/harness/tests/planted_backend.py:19 (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/core/dispatch/OperatorEntry.cpp:208.)\n  self.m.impl(\n", "worker_pid": 32083}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/tan/complex64/forward','error',0.020157109998763189651,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::zero_: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/tan/complex64/out','error',0.020550707000438706018,'{"atol": 1e-05, "exception_type": "NotImplementedError", "message": "aten::zero_: complex64 is not supported on neuron: Trainium has no complex arithmetic. Run this op on the CPU (tensor.cpu()).", "rtol": 1.3e-06, "sample": "(complex64[20, 20])", "sample_index": 0, "tolerance_source": "torch.testing default", "unsupported": true}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/tan/float32/forward','xfail',0.0066501910005172248929,'{"atol": 1e-05, "first_failing_sample": 0, "max_abs_error": 6328.0, "max_rel_error": 1.0, "message": "Tensor-likes are not close!\n\nMismatched elements: 400 / 400 (100.0%)\nGreatest absolute difference: 6328.0 at index (13, 3) (up to 1e-05 allowed)\nGreatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed)", "observed_outcome": "fail", "rtol": 1.3e-06, "sample": "(float32[20, 20])", "inputs_compared": 0, "skiplist": {"category": "precision", "entry": "skiplists/golden.json:3:2", "mode": "xfail", "reason": "planted wrong result"}, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
INSERT INTO results VALUES('20260101-000000-gold','ops/tan/float32/out','fail',0.0064208969997707754373,'{"atol": 1e-05, "first_failing_sample": 0, "max_abs_error": 6328.0, "max_rel_error": 1.0, "message": "Tensor-likes are not close!\n\nMismatched elements: 400 / 400 (100.0%)\nGreatest absolute difference: 6328.0 at index (13, 3) (up to 1e-05 allowed)\nGreatest relative difference: 1.0 at index (0, 0) (up to 1.3e-06 allowed)", "rtol": 1.3e-06, "sample": "(float32[20, 20])", "inputs_compared": 0, "tolerance_source": "torch.testing default"}','2026-01-01T00:00:05.000Z');
CREATE TABLE op_events (
  run_id TEXT NOT NULL,
  case_id TEXT NOT NULL,
  op TEXT NOT NULL,
  route TEXT NOT NULL CHECK (route IN ('native', 'fallback')),
  calls INTEGER NOT NULL,
  PRIMARY KEY (run_id, case_id, op, route),
  FOREIGN KEY (run_id, case_id) REFERENCES results(run_id, case_id)
);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/abs/float32/forward','aten::abs','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/abs/float32/out','aten::abs','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/abs/float32/out','aten::abs.out','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/add/float32/forward','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/add/float32/out','aten::add.Tensor','native',11);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/add/float32/out','aten::add.out','native',11);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/erfinv/float32/forward','aten::erfinv.out','fallback',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/erfinv/float32/out','aten::erfinv.out','fallback',2);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/neg/float32/forward','aten::neg','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/neg/float32/out','aten::neg','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/neg/float32/out','aten::neg.out','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/nonzero/float32/out','aten::nonzero','fallback',12);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/nonzero/float32/out','aten::nonzero.out','fallback',12);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/nonzero/float32/forward','aten::nonzero','fallback',24);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/tan/float32/forward','aten::zero_','native',1);
INSERT INTO op_events VALUES('20260101-000000-gold','ops/tan/float32/out','aten::zero_','native',1);
CREATE TABLE run_digests (
  run_id TEXT PRIMARY KEY REFERENCES runs(id),
  recorded INTEGER NOT NULL,
  digest TEXT NOT NULL
);
CREATE INDEX results_by_case ON results(case_id);
COMMIT;
