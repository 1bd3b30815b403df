"""The Lambda layer, built as `cdk synth` builds it (pip wheels for the Lambda platform, the
trims, bytecode for the runtime), then used alone as Lambda uses /opt/python: a fresh
interpreter without site-packages imports every handler with what its first call imports,
and parses a real file of each supported type. This proves the trims removed nothing a
function loads; the size and import times are printed by tests/bench/bench_aws.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from infra.constructs.layer_bundling import build_layer, tree_size
from tests.bench.bench_aws import FIRST_CALL, HANDLERS
from tests.fixtures_files import SAMPLE_KINDS, filename_for, make_file

pytestmark = pytest.mark.slow  # builds the Lambda layer with pip

REPO_ROOT = Path(__file__).resolve().parents[2]
LAMBDA_LIMIT = 250 * 2**20  # a function's code and layers, unzipped
# Imported only when a deployment chooses them: an OpenAI-compatible embeddings endpoint.
PROVIDERS = {"bunko.bootstrap.aws_embedder", "bunko.adapters.openai_embedder", "openai"}
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"

_IN_THE_LAYER = """
import importlib.util, json, sys
from pathlib import Path
layer, samples = sys.argv[1], Path(sys.argv[2])
assert not any("site-packages" in p for p in sys.path), sys.path
for name, path in json.loads(sys.argv[3]).items():
    sys.path.insert(0, str(Path(path).parent))
    spec = importlib.util.spec_from_file_location(f"handler_{name}", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    sys.path.pop(0)
for module in json.loads(sys.argv[4]):
    importlib.import_module(module)
from bunko.parsing import parse
texts = {f.name: parse(f.read_bytes(), filename=f.name).text for f in sorted(samples.iterdir())}
from PIL import features
import numpy
# the chat and rerank clients the composition root builds, from the trimmed botocore
import boto3
from bunko.adapters.aws.bedrock_rerank import BedrockRerank
for service in ("bedrock-runtime", "bedrock-agent-runtime"):
    client = boto3.client(service, region_name="us-east-1")
assert hasattr(client, "rerank")
found = {m: importlib.util.find_spec(m).origin for m in ("bunko", "numpy", "PIL", "pptx", "botocore")}
print(json.dumps({"texts": texts, "png": features.check("zlib"), "jpg": features.check("jpg"), "avif": features.check("avif"),
                  "dot": float(numpy.ones(4, dtype=numpy.float32) @ numpy.ones(4)),
                  "origins": found}))
"""


@pytest.fixture(scope="module")
def layer(tmp_path_factory) -> Path:
    return build_layer(tmp_path_factory.mktemp("layer"), repo_root=REPO_ROOT, python_version=PYTHON)


def test_the_layer_alone_runs_every_handler_and_parses_every_type(layer, tmp_path):
    runs_every_handler(layer, tmp_path, sys.executable)


def python_313() -> str:
    """A python3.13 interpreter's own path (not a shim that needs PATH), or skip."""
    found = shutil.which("python3.13")
    ran = found and subprocess.run([found, "-c", "import sys; print(sys.executable)"],
                                   capture_output=True, text=True, check=False)  # fmt: skip
    if not ran or ran.returncode != 0:  # (a pyenv shim runs only with PYENV_VERSION set)
        pytest.skip("no python3.13 here")
    return ran.stdout.strip()


def test_a_layer_for_python_3_13_runs_every_handler_under_3_13(tmp_path_factory, tmp_path):
    """The move off python3.11 (Amazon Linux 2, end of life 2026-06-30): the layer built for
    python3.13 (Amazon Linux 2023's manylinux_2_34 wheels, bytecode by a 3.13 interpreter)
    runs every handler under 3.13, as -c bunko:pythonVersion=3.13 deploys it."""
    interpreter = python_313()
    built = build_layer(tmp_path_factory.mktemp("layer313"), repo_root=REPO_ROOT,
                        python_version="3.13")  # fmt: skip
    assert (built / "bunko" / "__init__.py").exists()
    assert list((built / "numpy").glob("_core/_multiarray_umath.cpython-313-*.so"))
    runs_every_handler(built, tmp_path, interpreter)


def runs_every_handler(layer: Path, tmp_path: Path, interpreter: str) -> None:
    samples = tmp_path / "samples"
    samples.mkdir()
    for kind in SAMPLE_KINDS:
        (samples / filename_for(kind)).write_bytes(make_file(kind, f"Layer reads {kind} files."))
    first_calls = sorted({m for modules in FIRST_CALL.values() for m in modules} | PROVIDERS)
    handlers = {name: str(path) for name, path in HANDLERS.items()}
    env = {"PYTHONPATH": str(layer), "PYTHONDONTWRITEBYTECODE": "1", "BUNKO_BACKEND": "aws",
           "AWS_REGION": "us-east-1", "POWERTOOLS_TRACE_DISABLED": "1",
           "POWERTOOLS_METRICS_NAMESPACE": "Test", "PATH": "/usr/bin:/bin"}  # fmt: skip
    result = subprocess.run(
        [interpreter, "-S", "-c", _IN_THE_LAYER, str(layer), str(samples),
         json.dumps(handlers), json.dumps(first_calls)],
        capture_output=True, text=True, env=env, check=False, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert all(origin.startswith(str(layer)) for origin in report["origins"].values()), report
    for kind in SAMPLE_KINDS:
        assert f"Layer reads {kind} files." in report["texts"][filename_for(kind)], kind
    assert report["png"] and report["jpg"]  # Pillow's core codecs survived the trims
    assert not report["avif"]  # its optional plugin (5 MB) did not
    assert report["dot"] == 4.0


def test_the_layer_ships_bytecode_without_build_files_and_fits_lambda(layer):
    size = tree_size(layer)
    print(f"\nlayer unzipped: {size / 1e6:.1f} MB")
    assert size < LAMBDA_LIMIT
    leftovers = [p for p in layer.rglob("*") if p.suffix in {".h", ".pyx", ".pxd", ".pyi"}]
    assert leftovers == []
    assert not (layer / "numpy" / "f2py").exists()
    assert (layer / "numpy" / "__init__.pyc").exists()  # sourceless bytecode, not sources
    assert (layer / "bunko" / "__init__.py").exists()
