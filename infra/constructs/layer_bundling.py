"""Build the `bunko` Lambda layer without Docker: pip installs wheels for the Lambda platform
into `python/`, next to a copy of the `bunko` package.

The layer gets the core dependencies and the `aws` extra from pyproject.toml, plus the web
server the streaming function runs; local-only extras (models, local index, watcher) stay
out. Distributions that a dependency pulls in but Bunko never imports are removed by their
RECORD, so the layer stays far below Lambda's 250 MB.
"""

from __future__ import annotations

import compileall
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsii
from aws_cdk import ILocalBundling

PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")
# Needed by functions/stream (uvicorn under the Lambda Web Adapter); pins from `local`.
STREAM_PACKAGES = ("uvicorn",)
# Extras the functions need at run time: Tracer (tracing ACTIVE) imports aws-xray-sdk.
REQUIRED_EXTRAS = {"aws-lambda-powertools": "tracer"}
# opensearch-py depends on its gRPC protobufs, but its HTTP client never imports them.
UNUSED_DISTRIBUTIONS = ("opensearch_protobufs", "grpcio", "protobuf")


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
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--target", str(target), *platforms, "--implementation", "cp",
        "--python-version", python_version, "--only-binary=:all:", "--no-compile",
        "--upgrade", *pip, *layer_requirements(repo_root / "pyproject.toml"),
    ]  # fmt: skip
    subprocess.run(command, check=True)  # noqa: S603 (fixed argv, no shell)
    for dist in UNUSED_DISTRIBUTIONS:
        _remove_distribution(target, dist)
    shutil.copytree(
        repo_root / "layers" / "bunko" / "bunko", target / "bunko",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True,
    )  # fmt: skip
    for cache in target.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)
    if python_version == f"{sys.version_info.major}.{sys.version_info.minor}":
        # /opt is read-only on Lambda, so bytecode not shipped is compiled on every cold
        # start. It can only be shipped when this interpreter matches the runtime.
        compileall.compile_dir(
            target, quiet=1, workers=0,
            invalidation_mode=compileall.PycInvalidationMode.UNCHECKED_HASH,
        )  # fmt: skip
    return target


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
