"""Build the `bunko` Lambda layer without Docker: pip installs wheels for the Lambda platform
into `python/`, next to a copy of the `bunko` package.

The layer gets the core dependencies and the `aws` extra from pyproject.toml, plus the web
server the streaming function runs; local-only extras (models, local index, watcher) stay
out. Distributions that a dependency pulls in but Bunko never imports are removed by their
RECORD, so the layer stays far below Lambda's 250 MB.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsii
from aws_cdk import ILocalBundling

from infra.constructs.glibc_check import manylinux_platforms, too_new

# Needed by functions/stream (uvicorn under the Lambda Web Adapter); pins from `local`.
STREAM_PACKAGES = ("uvicorn",)
# Extras the functions need at run time. None: the X-Ray SDK (Powertools' Tracer) is left
# out, as importing it costs a cold start most of a second (its global recorder builds a
# botocore client); Lambda's active tracing still records each invocation and its init.
REQUIRED_EXTRAS: dict[str, str] = {}
# opensearch-py depends on its gRPC protobufs, but its HTTP client never imports them; the
# CLI's typer (and rich, which it pulls in with pygments) is never imported by a function.
UNUSED_DISTRIBUTIONS = (
    "opensearch_protobufs", "grpcio", "protobuf",
    "typer", "rich", "pygments", "markdown_it_py", "mdurl", "shellingham",
)  # fmt: skip
# Build-time parts of wheels (see _trim), as globs and folders under the layer's root.
UNUSED_FILES = (
    "**/*.pyi", "**/*.h", "**/*.pyx", "**/*.pxd", "**/*.pxi",
    "numpy/_core/_multiarray_tests.*.so",
    "PIL/_avif.*.so", "pillow.libs/libavif-*", "PIL/_imagingtk.*.so",
)  # fmt: skip
UNUSED_FOLDERS = ("numpy/distutils", "numpy/f2py", "numpy/_pyinstaller", "numpy/_core/include")
# botocore ships models for 400+ services (28 MB); the functions call only these (the
# permission contract test records every call; chat and rerank clients are built per model
# config: bedrock-runtime's ConverseStream, bedrock-agent-runtime's Rerank). STS: credential
# providers may use it.
BOTOCORE_SERVICES = frozenset({
    "s3", "dynamodb", "sqs", "kms", "secretsmanager", "bedrock-runtime",
    "bedrock-agent-runtime", "sts",
})  # fmt: skip


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def layer_requirements(pyproject: Path) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    requirements = list(project["dependencies"]) + list(extras.get("aws", []))
    requirements = [_with_extra(r) for r in requirements]
    names = {_name(r) for r in requirements}
    for wanted in STREAM_PACKAGES:
        if wanted in names:
            continue
        spec = next((r for r in extras.get("local", []) if _name(r) == wanted), wanted)
        # uvicorn[standard] adds uvloop, httptools and watchfiles: not needed behind the adapter.
        requirements.append(re.sub(r"\[[^\]]*\]", "", spec))
    return requirements


def _with_extra(requirement: str) -> str:
    extra = REQUIRED_EXTRAS.get(_name(requirement))
    if not extra or f"[{extra}" in requirement or "[" in requirement.split(";")[0]:
        return requirement
    name = re.split(r"[<>=!~; ]", requirement, maxsplit=1)[0]
    return f"{name}[{extra}]{requirement[len(name) :]}"


def build_layer(
    output_dir: Path, *, repo_root: Path, python_version: str, pip: tuple[str, ...] = ()
) -> Path:
    """Install the layer into `output_dir/python`; returns that folder."""
    target = Path(output_dir) / "python"
    target.mkdir(parents=True, exist_ok=True)
    # Wheels for the runtime's glibc (Amazon Linux 2: 2.26), so pip picks a release that
    # runs there (numpy 2.2, not 2.3+) instead of one that fails at import.
    platforms = [arg for p in manylinux_platforms(python_version) for arg in ("--platform", p)]
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--target", str(target), *platforms, "--implementation", "cp",
        "--python-version", python_version, "--only-binary=:all:", "--no-compile",
        "--upgrade", *pip, *layer_requirements(repo_root / "pyproject.toml"),
    ]  # fmt: skip
    subprocess.run(command, check=True)  # noqa: S603 (fixed argv, no shell)
    if offenders := too_new(target, python_version):
        raise RuntimeError(
            f"the layer needs a newer C library than the python{python_version} runtime has:\n"
            + "\n".join(offenders)
        )
    for dist in UNUSED_DISTRIBUTIONS:
        _remove_distribution(target, dist)
    _trim(target)
    shutil.copytree(
        repo_root / "layers" / "bunko" / "bunko", target / "bunko",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True,
    )  # fmt: skip
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    compile_bytecode(target, python_version)
    drop_dependency_sources(target, python_version, keep=("bunko",))
    return target


def compile_bytecode(target: Path, python_version: str) -> None:
    """Ship .pyc for the runtime: /opt is read-only on Lambda, so bytecode not shipped is
    compiled from source on every cold start. Bytecode is specific to the interpreter's
    minor version, so it is compiled by a matching interpreter (this one, or `pythonX.Y` on
    PATH); without one the build fails instead of shipping a layer that compiles at start-up.
    Unchecked-hash pycs: never revalidated against the sources (they cannot change in /opt).
    """
    current = f"{sys.version_info.major}.{sys.version_info.minor}"
    interpreter = sys.executable if python_version == current else shutil.which(
        f"python{python_version}"
    )  # fmt: skip
    if interpreter is None:
        raise RuntimeError(
            f"no python{python_version} here to compile the layer's bytecode: use the "
            f"bunko:pythonVersion this interpreter has ({current}) or install python{python_version}"
        )
    command = [
        interpreter, "-m", "compileall", "-q", "-j", "0",
        "--invalidation-mode", "unchecked-hash", str(target),
    ]  # fmt: skip
    # Some wheels ship files that are not Python 3 (test data, templates): compileall
    # reports them and exits 1, which is not a reason to fail the layer.
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)  # noqa: S603


def drop_dependency_sources(target: Path, python_version: str, *, keep: tuple[str, ...]) -> None:
    """Dependencies ship as sourceless bytecode (`module.pyc` where `module.py` was): the
    sources would add 28 MB to a layer that must stay small. Tracebacks through them keep
    file and line, not the line's text; Bunko's own package keeps its sources."""
    tag = f"cpython-{python_version.replace('.', '')}"
    for top in target.iterdir():
        if not top.is_dir() or top.name in keep or top.name.endswith(".dist-info"):
            continue
        for source in list(top.rglob("*.py")):
            compiled = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
            if compiled.exists():
                compiled.replace(source.with_suffix(".pyc"))
                source.unlink()
    for cache in target.rglob("__pycache__"):
        if cache.is_dir() and not any(cache.iterdir()):
            cache.rmdir()


def _remove_distribution(target: Path, name: str) -> None:
    for info in target.glob(f"{name}-*.dist-info"):
        record = info / "RECORD"
        if record.exists():
            for line in record.read_text(encoding="utf-8").splitlines():
                path = line.split(",", 1)[0]
                if path:
                    (target / path).unlink(missing_ok=True)
        shutil.rmtree(info, ignore_errors=True)
    for folder in sorted(target.rglob("*"), reverse=True):  # empty folders left behind
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _trim(target: Path) -> None:
    """Leave out what no function loads: other services' botocore models, test suites, type
    stubs, C headers and Cython sources (for building extensions, not running them), numpy's
    build tools, and Pillow's optional AVIF and Tk plugins (Pillow imports each plugin's
    extension lazily and reports the format unsupported when it is missing; python-pptx
    needs Pillow only to read an image's size, and never for text)."""
    data = target / "botocore" / "data"
    if data.is_dir():
        for service in data.iterdir():
            if service.is_dir() and service.name not in BOTOCORE_SERVICES:
                shutil.rmtree(service)
    for tests in [p for p in target.glob("*/**/tests") if p.is_dir()]:
        shutil.rmtree(tests, ignore_errors=True)
    for folder in UNUSED_FOLDERS:
        shutil.rmtree(target / folder, ignore_errors=True)
    for pattern in UNUSED_FILES:
        for unused in target.glob(pattern):
            unused.unlink()


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


@jsii.implements(ILocalBundling)
class LocalLayerBundling:
    """CDK local bundling: runs `build_layer` in the synth process instead of Docker."""

    def __init__(self, *, repo_root: Path, python_version: str) -> None:
        self.repo_root = repo_root
        self.python_version = python_version

    def try_bundle(self, output_dir: str, *_options: object, **_kw: object) -> bool:
        # Never answer False: that would make CDK fall back to Docker.
        build_layer(Path(output_dir), repo_root=self.repo_root, python_version=self.python_version)
        return True
