"""The layer's C-library check (infra/constructs/glibc_check.py) on real ELF files: a shared
object compiled here against this machine's newer glibc, and a real numpy wheel built for
manylinux_2_28, both refused for the python3.11 runtime (Amazon Linux 2, glibc 2.26)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from infra.constructs.glibc_check import manylinux_platforms, needed_versions, too_new

SOURCE = """
#include <pthread.h>
static void *run(void *arg) { return arg; }
int start(void) { pthread_t t; return pthread_create(&t, 0, run, 0); }
"""


@pytest.fixture
def newer_glibc_object(tmp_path) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler here")
    layer = tmp_path / "layer" / "python" / "mod"
    layer.mkdir(parents=True)
    (tmp_path / "x.c").write_text(SOURCE)
    target = layer / "_ext.cpython-311-x86_64-linux-gnu.so"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", str(tmp_path / "x.c"), "-o", str(target)], check=True
    )
    if needed_versions(target).get("GLIBC", (0,)) <= (2, 26):
        pytest.skip("this machine's glibc is not newer than Amazon Linux 2's")
    return tmp_path / "layer"


def test_an_object_needing_a_newer_glibc_is_refused_for_amazon_linux_2(newer_glibc_object):
    [offender] = too_new(newer_glibc_object, "3.11")
    assert offender.startswith("python/mod/_ext.cpython-311") and "(runtime: 2.26)" in offender


def test_the_platforms_pip_is_given_follow_the_runtime():
    al2 = manylinux_platforms("3.11")
    assert "manylinux2014_x86_64" in al2 and al2[-1] == "manylinux_2_26_x86_64"
    assert "manylinux_2_28_x86_64" not in al2
    assert manylinux_platforms("3.12")[-1] == "manylinux_2_34_x86_64"


def test_a_numpy_wheel_for_manylinux_2_28_is_refused(tmp_path):
    """The failure the issue found: pip took numpy 2.4's manylinux_2_28 wheel for python3.11."""
    download = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
        "--implementation", "cp", "-d", str(tmp_path), "numpy>=2.3",
    ]  # fmt: skip
    if subprocess.run(download, check=False).returncode != 0:
        pytest.skip("no package index reachable")
    [wheel] = tmp_path.glob("numpy-*.whl")
    layer = tmp_path / "layer"
    zipfile.ZipFile(wheel).extractall(layer)
    offenders = too_new(layer, "3.11")
    assert any("numpy/_core/_multiarray_umath" in o and "GLIBC_2.2" in o for o in offenders)
    assert too_new(layer, "3.12") == []  # Amazon Linux 2023 runs it


def test_a_library_the_wheel_ships_in_its_libs_folder_meets_its_extensions_needs(tmp_path):
    """auditwheel's layout: `pkg/_ext.so` needs `libstdc++-<hash>.so.6`, shipped in
    `pkg.libs/`, for a GLIBCXX_ version no runtime has. That need is the copy's to meet;
    the same need on a library the layer does not ship is refused."""
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler here")
    layer = tmp_path / "layer" / "python"
    (layer / "pkg").mkdir(parents=True)
    (layer / "pkg.libs").mkdir()
    shipped = layer / "pkg.libs" / "libstdc++-0a1b2c3d.so.6"
    (tmp_path / "lib.c").write_text("int f(void) { return 1; }\n")
    (tmp_path / "v.map").write_text("GLIBCXX_3.4.99 { global: f; local: *; };\n")
    (tmp_path / "ext.c").write_text("int f(void); int g(void) { return f(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", str(tmp_path / "lib.c"), "-o", str(shipped),
                    f"-Wl,--version-script={tmp_path / 'v.map'}",
                    f"-Wl,-soname,{shipped.name}"], check=True)  # fmt: skip
    ext = layer / "pkg" / "_ext.cpython-313-x86_64-linux-gnu.so"
    subprocess.run(["gcc", "-shared", "-fPIC", str(tmp_path / "ext.c"), str(shipped),
                    "-o", str(ext)], check=True)  # fmt: skip
    assert needed_versions(ext)["GLIBCXX"] == (3, 4, 99)
    assert not any(o.startswith("python/pkg/_ext") for o in too_new(tmp_path / "layer", "3.13"))
    shipped.rename(tmp_path / shipped.name)  # not in the layer: the system would have to
    [offender] = too_new(tmp_path / "layer", "3.14")
    assert offender.startswith("python/pkg/_ext") and "GLIBCXX_3.4.99" in offender
