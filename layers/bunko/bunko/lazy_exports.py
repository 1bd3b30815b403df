"""A package's lazy public face (PEP 562): its names imported from their modules on first use.

A package whose `__init__` would otherwise import heavy modules lists its names and the
module each lives in, and takes its module-level `__getattr__` and `__dir__` from here:

    __all__ = ["Name", ...]
    __getattr__, __dir__ = lazy_face(__name__, {"Name": "module", ...})

(`bunko.adapters.local.engine`, so the AWS shape takes the passage scorer without usearch;
`bunko.bootstrap`, so a Lambda handler's first call does not import every service.)
It imports nothing of Bunko's: every floor may use it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module


def lazy_face(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names `exports` maps to the
    module each lives in (relative to `package`). A name is imported on first access, then
    kept in the package's namespace, so later accesses are plain lookups."""

    def __getattr__(name: str) -> object:
        home = exports.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
