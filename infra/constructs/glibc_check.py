"""Check a built Lambda layer against the C library its runtime really has.

Lambda's python3.11 runtime runs on Amazon Linux 2 (glibc 2.26, libstdc++ of GCC 7:
GLIBCXX_3.4.24); python3.12 and later on Amazon Linux 2023 (glibc 2.34, GCC 11:
GLIBCXX_3.4.29). A wheel built for a newer glibc installs fine and fails at `import` there
(numpy 2.3+ needs GLIBC_2.27), which no test on a newer machine sees. Every shared object
in the layer is read for the symbol versions it needs (its ELF `.gnu.version_r`
section, with pyelftools), and the build fails when one needs a newer GLIBC_ or GLIBCXX_
than the runtime provides. A need on a library the layer ships itself (auditwheel puts a
wheel's copies, libstdc++ among them, in a `<name>.libs` folder under a hashed name, and points
the extension at that name) is met by that copy, whose own needs are checked as its file.
"""

from __future__ import annotations

import re
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

# The newest symbol versions each runtime's system libraries provide.
RUNTIME_PROVIDES: dict[str, dict[str, tuple[int, ...]]] = {
    "3.11": {"GLIBC": (2, 26), "GLIBCXX": (3, 4, 24)},
    "3.12": {"GLIBC": (2, 34), "GLIBCXX": (3, 4, 29)},
    "3.13": {"GLIBC": (2, 34), "GLIBCXX": (3, 4, 29)},
    "3.14": {"GLIBC": (2, 34), "GLIBCXX": (3, 4, 29)},
}
_VERSION = re.compile(r"^(GLIBC|GLIBCXX)_(\d+(?:\.\d+)*)$")


def manylinux_platforms(python_version: str) -> list[str]:
    """pip's --platform values for the runtime: every manylinux tag its glibc runs (pip
    matches each tag as given, none older by itself), the legacy aliases included."""
    major, newest = RUNTIME_PROVIDES[python_version]["GLIBC"]
    legacy = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"]
    return legacy + [f"manylinux_{major}_{minor}_x86_64" for minor in range(5, newest + 1)]


def needed_versions(
    path: Path, shipped: frozenset[str] = frozenset()
) -> dict[str, tuple[int, ...]]:
    """The newest GLIBC_ and GLIBCXX_ version a shared object needs from the system, by
    library (needs on a file named in `shipped`, the layer's own copies, left out)."""
    newest: dict[str, tuple[int, ...]] = {}
    with path.open("rb") as f:
        try:
            elf = ELFFile(f)
        except ELFError:
            return {}
        for section in elf.iter_sections():
            if not isinstance(section, GNUVerNeedSection):
                continue
            for needed, auxiliaries in section.iter_versions():
                if needed.name in shipped:
                    continue
                for aux in auxiliaries:
                    match = _VERSION.match(aux.name)
                    if match:
                        lib, version = match[1], tuple(int(p) for p in match[2].split("."))
                        newest[lib] = max(newest.get(lib, version), version)
    return newest


def too_new(layer: Path, python_version: str) -> list[str]:
    """Every shared object under `layer` that needs more than the runtime provides."""
    provides = RUNTIME_PROVIDES[python_version]
    objects = [p for p in sorted(layer.rglob("*.so*")) if p.is_file() and not p.is_symlink()]
    # what wheels ship beside their extensions (`numpy.libs/`, `pillow.libs/`, or the same
    # folder), by the file name the extensions need
    shipped = frozenset(p.name for p in objects if p.parent.name.endswith(".libs"))
    found = []
    for path in objects:
        local = frozenset(p.name for p in path.parent.glob("lib*.so*"))
        for lib, version in needed_versions(path, shipped | local).items():
            if version > provides[lib]:
                need = ".".join(map(str, version))
                have = ".".join(map(str, provides[lib]))
                found.append(f"{path.relative_to(layer)} needs {lib}_{need} (runtime: {have})")
    return found
