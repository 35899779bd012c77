#!/usr/bin/env bash
# Benchmark of listing the upstream suite over one large device-generic file: a generated
# test file the size of test_torch.py (GENERIC generic tests, most at several dtypes, some
# parametrized, importing the OpInfo database as test_torch.py does), listed through the CLI.
# Prints the instantiated test methods, the listing worker's time and cases per second.
# Target on a 2-core machine: under 30 seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
GENERIC=${GENERIC:-1200}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$DIR/test"
.venv/bin/python - "$DIR/test/test_big_generic.py" "$GENERIC" <<'PY'
import sys
path, generic = sys.argv[1], int(sys.argv[2])
lines = [
    "import torch",
    "from torch.testing._internal.common_device_type import dtypes, instantiate_device_type_tests",
    "from torch.testing._internal.common_methods_invocations import op_db  # noqa: F401",
    "from torch.testing._internal.common_utils import TestCase, parametrize",
    "",
    "",
    "class TestBig(TestCase):",
]
for i in range(generic):
    if i % 3 == 0:
        lines += [f"    @parametrize('n', [1, 2])", f"    def test_p{i}(self, device, n):", "        pass", ""]
    else:
        lines += ["    @dtypes(torch.float32, torch.float16, torch.bfloat16, torch.int64)",
                  f"    def test_t{i}(self, device, dtype):", "        pass", ""]
lines += ["", "instantiate_device_type_tests(TestBig, globals())", ""]
open(path, "w").write("\n".join(lines))
PY
# The listing worker, as `run` starts it: import the backend, configure, import the file, list.
start=$(date +%s.%N)
cases=$(.venv/bin/python harness/worker/worker.py --suite upstream --list \
  --suite-options "{\"pytorch_test_dir\": \"$DIR\"}" 2>"$DIR/stderr.txt" | grep -c '"id"') \
  || { cat "$DIR/stderr.txt"; exit 1; }
end=$(date +%s.%N)
python3 - "$start" "$end" "$cases" <<'PY'
import sys
start, end, cases = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
wall = end - start
print(f"test methods listed  {cases:8d}   (one generated file)")
print(f"listing time         {wall:8.1f} s   (target < 30 s: {'met' if wall < 30 else 'MISSED'}; worker start-up "
      "and the file's import included)")
print(f"cases per second     {cases / wall:8.0f}")
PY
