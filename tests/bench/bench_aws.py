"""Numbers for the AWS shape, rerunnable: `.venv/bin/python -m tests.bench.bench_aws`.

1. The synthesized template's resource counts (CDK app, bundling skipped).
2. The Lambda layer's unzipped size: the layer is built exactly as `cdk synth` builds it
   (pip wheels for the Lambda platform, bytecode for the runtime) into a temporary folder;
   target 150 MB (Lambda's limit is 250 MB).
3. Import time of each handler module, importing from the built layer as Lambda does (the
   layer first on the path, no bytecode written): `python -X importtime`, median of several
   runs in fresh interpreters; once for the module alone (target 0.5 s) and once with what
   its first invocation imports (the app and the adapters).

Options: --skip-layer (imports from the source tree instead), --runs N.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))

HANDLERS = {
    "api": REPO_ROOT / "functions" / "api" / "handler.py",
    "stream": REPO_ROOT / "functions" / "stream" / "main.py",
    "ingest": REPO_ROOT / "functions" / "ingest" / "handler.py",
    "search_index": REPO_ROOT / "functions" / "search_index" / "handler.py",
    "sources": REPO_ROOT / "functions" / "sources" / "handler.py",
}
LAYER_TARGET = 150 * 1000 * 1000
IMPORT_TARGET_MS = 500
# What the first invocation imports on top of the handler module (the app and the AWS
# adapters are built lazily): counted too, since a cold start pays for it either way.
_ADAPTERS = [
    "bunko.adapters.aws.clients",
    "bunko.adapters.aws.dynamodb.store",
    "bunko.adapters.aws.opensearch.index",
    "bunko.adapters.aws.s3.blobs",
    "bunko.adapters.aws.bedrock_embedder",
    "bunko.adapters.aws.sqs_queue",
]
_APP = ["bunko.bootstrap", "bunko.server_app", "bunko.http.routes.uploads", *_ADAPTERS]
FIRST_CALL = {
    "api": _APP,
    "stream": ["uvicorn", *_APP],
    "ingest": ["bunko.bootstrap", "bunko.drops.s3_events", *_ADAPTERS],
    "search_index": [],
    # a due Git source: the wing, its website fetcher and dulwich (tests/infra/test_layer_build)
    "sources": [
        "bunko.bootstrap",
        "bunko.adapters.web_fetcher",
        "bunko.adapters.git_dulwich",
        *_ADAPTERS,
    ],
}


def resource_counts() -> Counter:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "1")
    import aws_cdk as cdk

    from infra.app import build_app

    with tempfile.TemporaryDirectory() as out:
        app = cdk.App(context={"aws:cdk:bundling-stacks": []}, outdir=out)
        app, stack = build_app(app)
        template = app.synth().get_stack_by_name(stack.stack_name).template
    return Counter(r["Type"] for r in template["Resources"].values())


def layer_size(out: Path, python_version: str) -> tuple[Path, int, int, list[tuple[str, int]]]:
    from infra.constructs.layer_bundling import build_layer, tree_size

    target = build_layer(out, repo_root=REPO_ROOT, python_version=python_version)
    total = tree_size(target)
    files = sum(1 for p in target.rglob("*") if p.is_file())
    biggest = sorted(
        ((p.name, tree_size(p)) for p in target.iterdir() if p.is_dir()),
        key=lambda item: -item[1],
    )[:8]
    return target, total, files, biggest


def import_time_ms(
    module_path: Path | None,
    *,
    runs: int,
    cold: bool,
    also: list[str] = (),
    layer: Path | None = None,
) -> float:
    """Median import time of the module in ms: the cumulative times -X importtime reports for
    the top-level imports it triggers (`None` measures an empty program: the interpreter's
    own start-up imports, subtracted by the caller)."""
    env = dict(
        os.environ,
        BUNKO_BACKEND="aws",
        AWS_REGION="us-east-1",
        POWERTOOLS_TRACE_DISABLED="1",
        POWERTOOLS_METRICS_NAMESPACE="Bench",
    )
    code = "import importlib.util, sys\n"
    if module_path is not None:
        code += (
            f"sys.path.insert(0, {str(module_path.parent)!r})\n"
            f"spec = importlib.util.spec_from_file_location('under_test', {str(module_path)!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        )
    code += "".join(f"import {name}\n" for name in also)
    if layer is not None:  # the layer alone, as /opt/python on Lambda: only its own bytecode
        env = dict(env, PYTHONPATH=str(layer), PYTHONDONTWRITEBYTECODE="1")
    samples = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            run_env = dict(env, PYTHONPYCACHEPREFIX=cache) if cold else env
            result = subprocess.run(
                # -S: no site-packages, so a module the layer lacks fails instead of being
                # found in the build machine's environment.
                [sys.executable, *(["-S"] if layer else []), "-X", "importtime", "-c", code],
                capture_output=True,
                text=True,
                env=run_env,
                check=False,
            )
        if result.returncode != 0:
            raise RuntimeError(result.stderr[-2000:])
        total = 0
        for line in result.stderr.splitlines():
            if not line.startswith("import time:") or "|" not in line:
                continue
            parts = line.split("|")
            name = parts[2][1:].rstrip()  # nested imports are indented past the first space
            if name and not name.startswith(" ") and parts[1].strip().isdigit():
                total += int(parts[1])  # cumulative µs of each top-level import
        samples.append(total / 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--python-version", default=f"{sys.version_info.major}.{sys.version_info.minor}"
    )
    parser.add_argument("--skip-layer", action="store_true")
    args = parser.parse_args()
    report: dict = {}

    counts = resource_counts()
    report["resources_total"] = sum(counts.values())
    report["resources"] = dict(sorted(counts.items()))
    print(f"template resources: {report['resources_total']}")
    for kind, n in sorted(counts.items()):
        print(f"  {n:3d}  {kind}")

    layer = None
    workdir = tempfile.TemporaryDirectory()
    if not args.skip_layer:
        layer, total, files, biggest = layer_size(Path(workdir.name), args.python_version)
        report["layer_unzipped_bytes"] = total
        print(
            f"layer (python{args.python_version}, unzipped): {total / 1e6:.1f} MB "
            f"({total / 2**20:.1f} MiB) in {files} files; target 150 MB → "
            f"{'met' if total <= LAYER_TARGET else 'NOT MET'}"
        )
        for name, size in biggest:
            print(f"  {size / 2**20:7.1f} MiB  {name}")

    report["import_ms"] = {}
    print(
        f"handler import time, median of {args.runs} (python "
        f"{sys.version_info.major}.{sys.version_info.minor}, -X importtime):"
    )
    print(f"  (importing from {'the built layer' if layer else 'the source tree'})")
    base_warm = import_time_ms(None, runs=args.runs, cold=False, layer=layer)
    base_cold = import_time_ms(None, runs=args.runs, cold=True, layer=layer)
    print(f"  (interpreter start-up imports subtracted: {base_warm:.1f} ms / {base_cold:.1f} ms)")
    for name, path in HANDLERS.items():
        row = {}
        for label, also in (("module", []), ("with_first_call", FIRST_CALL[name])):
            if label == "with_first_call" and not also:
                continue
            warm = import_time_ms(path, runs=args.runs, cold=False, also=also, layer=layer)
            warm -= base_warm
            row[label] = {"with_bytecode_ms": round(warm, 1)}
            verdict = ""
            if label == "module":
                verdict = "met" if warm <= IMPORT_TARGET_MS else "NOT MET"
                verdict = f"  target {IMPORT_TARGET_MS} ms → {verdict}"
            if layer is None:  # the source tree: also what no shipped bytecode would cost
                cold = import_time_ms(path, runs=args.runs, cold=True, also=also) - base_cold
                row[label]["compiling_ms"] = round(cold, 1)
                verdict += f"  ({cold:.1f} ms compiling from source)"
            print(f"  {name:13s} {label:16s} {warm:7.1f} ms with bytecode{verdict}")
        report["import_ms"][name] = row
    print(json.dumps(report))
    workdir.cleanup()


if __name__ == "__main__":
    main()
