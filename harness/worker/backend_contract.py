"""What the harness uses from the backend under test (docs/backends.md is the contract): each part
is optional, and a check that needs a part the backend lacks is skipped with the reason, never an
`error` charged to the backend.

The worker fills this in once, after importing the backend module and before configuring a suite;
suites read it through `current()`.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

DYNAMO_GROUP = "torch_dynamo_backends"  # torch.compile's own entry-point group for backends


@dataclass
class Backend:
    """The backend under test, as the harness sees it."""

    module_name: str
    module: ModuleType | None
    device: str
    # The Dynamo backends its distribution declares (entry points of torch_dynamo_backends whose
    # object lives in the backend's package).
    dynamo_backends: list[str] = field(default_factory=list)

    def function(self, name: str) -> Any:
        """An optional function the backend offers (autocast_policy, compile_cache_stats, ...), or
        None."""
        found = getattr(self.module, name, None)
        return found if callable(found) else None

    def why_absent(self, name: str, what: str) -> str | None:
        """The skip reason for a check that needs the function `name` (`what` it declares), or
        None when the backend has it."""
        if self.function(name) is not None:
            return None
        return f"the backend {self.module_name} declares no {what} (no {name}(); docs/backends.md)"


_current: Backend | None = None


def declared_dynamo_backends(module_name: str) -> list[str]:
    """The names of the torch_dynamo_backends entry points whose object is in the backend's
    top-level package: how a backend declares its torch.compile backend."""
    top = module_name.split(".")[0]
    return sorted({entry.name for entry in importlib.metadata.entry_points(group=DYNAMO_GROUP)
                   if entry.value.split(":")[0].split(".")[0] == top})


def declare(module_name: str, module: ModuleType | None, device: str) -> Backend:
    """Records the backend under test (the worker calls it once, after the import)."""
    global _current
    _current = Backend(module_name, module, device, declared_dynamo_backends(module_name))
    return _current


def current() -> Backend:
    """The backend under test; one with no declarations when the worker has not declared it (a
    suite imported by a test)."""
    if _current is None:
        import torch

        return Backend("(none)", None, torch._C._get_privateuse1_backend_name())
    return _current
