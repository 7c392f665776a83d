"""Where the graph index's build time goes, and what would cut it, on one build's graph documents.

On a sample of `--sample` documents of the built graph (`graph_documents`, as `build_graph_index` indexes
them), quiet: the whole build (`build_index`: txtai encoding, BM25 terms, SQLite, faiss, save) as txtai
encodes in this process (before) and with the vectors encoded first in one-thread processes, one per
core (the candidate "after", below), in documents per second, with how far the two builds' vectors
differ; the encoder's share of the build; then, on
`--probe` of those documents, the encoder alone at other batch sizes, and with its linear layers
quantised to int8 (dynamic), with how far that moves each document's ten nearest neighbours (a cut that
changes what is found is not a speed-up of this index).

    python -m benchmarks.first_hour_graph_index --out bench_results/first_hour_graph_index.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from enrich_rag.config import load_config
from enrich_rag.index.embeddings import build_index, model_path, txtai_config
from enrich_rag.index.graph_index import graph_documents
from enrich_rag.index.txtai_adapter import encode, vectors_model
from enrich_rag.storage.atomic import atomic_file
from enrich_rag.storage.graph_store import GraphStore

ROOT = Path(__file__).resolve().parents[1]


# The candidate measured as "after": vectors encoded first in one-thread processes, one per core, then
# stored by txtai instead of encoding (the path Ray's vectors take). Measured not to pay on 2 cores
# (bench_results/first_hour_graph_index.json), so it stays here rather than in the build.
_model: Any = None


def _load(config) -> None:
    global _model
    import torch

    torch.set_num_threads(1)
    _model = vectors_model(txtai_config(config))


def _encode_share(texts: list[str]) -> np.ndarray:
    return encode(_model, texts)


def encode_in_processes(texts: list[str], config, processes: int) -> np.ndarray:
    """Vectors of `texts`, in their order; texts go to the processes by length in turn."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    by_length = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    shares = [by_length[p::processes] for p in range(processes)]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context, initializer=_load, initargs=(config,)) as pool:
        encoded = list(pool.map(_encode_share, [[texts[i] for i in share] for share in shares]))
    out = np.empty((len(texts), encoded[0].shape[1]), np.float32)
    for share, vectors in zip(shares, encoded):
        out[share] = vectors
    return out


def _encoder(config):
    from transformers import AutoModel, AutoTokenizer

    path = model_path(config.embeddings)
    return AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()


def _encode(tokenizer, model, texts: list[str], batch: int):
    """Mean-pooled, normalised vectors (txtai's pooling for this model) and the seconds they took."""
    import torch

    out, start = [], time.perf_counter()
    with torch.inference_mode():
        for i in range(0, len(texts), batch):
            encoded = tokenizer(texts[i : i + batch], padding=True, truncation=True, return_tensors="pt")
            hidden, mask = model(**encoded).last_hidden_state, encoded["attention_mask"].unsqueeze(-1).float()
            out.append(torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1))
    return torch.cat(out), time.perf_counter() - start


def _neighbour_overlap(a, b, queries: int = 200, k: int = 10) -> float:
    """Mean share of each of `queries` documents' k nearest neighbours that both vector sets agree on."""
    near_a, near_b = (a[:queries] @ a.T).topk(k + 1).indices, (b[:queries] @ b.T).topk(k + 1).indices
    return sum(len(set(x.tolist()) & set(y.tolist())) / (k + 1) for x, y in zip(near_a, near_b)) / queries


def measure(params: Path, sample: int, probe: int, seed: int) -> dict[str, Any]:
    import warnings

    import torch

    warnings.filterwarnings("ignore", category=UserWarning)  # torch's deprecation notes on its int8 path
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    config = load_config(params)
    with GraphStore(config.paths.graph) as store:
        docs = graph_documents(store)
    chosen = random.Random(seed).sample(docs, min(sample, len(docs)))
    texts = sorted((d["text"] for d in chosen[:probe]), key=len)  # as build_index orders them
    processes = max(2, min(4, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory() as tmp:
        build_index(chosen[:32], config.embeddings, Path(tmp) / "warm", "warm-up")  # model load, not counted
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.runcall(build_index, chosen, config.embeddings, Path(tmp) / "index", "graph index")
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        vectors = encode_in_processes([d["text"] for d in chosen], config.embeddings, processes)
        build_index(chosen, config.embeddings, Path(tmp) / "index-processes", "graph index", vectors)
        processes_s = time.perf_counter() - start
    in_process = encode(vectors_model(txtai_config(config.embeddings)), [d["text"] for d in chosen[:probe]])
    differs = np.abs(in_process - vectors[:probe]).max()
    timed = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    encode_s = max(row[3] for (file, _, func), row in timed.items() if func == "encode" and file.endswith("pooling/base.py"))
    tokenizer, model = _encoder(config)
    _encode(tokenizer, model, texts[:64], 32)
    exact, _ = _encode(tokenizer, model, texts, config.embeddings.batch_size)
    batches = {b: round(len(texts) / _encode(tokenizer, model, texts, b)[1], 1) for b in (8, 16, 32, 64, 128)}
    quantised = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    int8, int8_s = _encode(tokenizer, quantised, texts, config.embeddings.batch_size)
    tokens = [len(ids) for ids in tokenizer(texts)["input_ids"]]
    return {
        "graph_documents": len(docs),
        "sample": len(chosen),
        "tokens_mean": round(sum(tokens) / len(tokens), 1),
        "threads": torch.get_num_threads(),
        "cpu": platform.processor() or platform.machine(),
        "build_docs_per_s": round(len(chosen) / build_s, 1),
        "build_docs_per_s_processes": round(len(chosen) / processes_s, 1),
        "processes": processes,
        "speedup": round(build_s / processes_s, 2),
        "processes_vs_in_process_max_abs_difference": float(differs),
        "probe": len(texts),
        "encoder_share_of_build": round(encode_s / build_s, 3),  # txtai's encode: tokenizer and forward
        "encoder_docs_per_s_by_batch": batches,
        "configured_batch": config.embeddings.batch_size,
        "int8_docs_per_s": round(len(texts) / int8_s, 1),
        "int8_cosine_mean": round(float((exact * int8).sum(1).mean()), 4),
        "int8_top10_neighbour_overlap": round(_neighbour_overlap(exact, int8), 3),
        "whole_graph_index_s_at_build_rate": round(len(docs) / (len(chosen) / build_s), 1),
        "whole_graph_index_s_at_processes_rate": round(len(docs) / (len(chosen) / processes_s), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--params", type=Path, default=ROOT / "params.yaml", help="the build whose graph is sampled")
    parser.add_argument("--sample", type=int, default=8000, help="documents built both ways")
    parser.add_argument("--probe", type=int, default=2000, help="of those, documents the encoder alone is timed on")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results/first_hour_graph_index.json")
    args = parser.parse_args()
    result = measure(args.params, args.sample, args.probe, args.seed)
    table = Table(title=f"graph index build, {result['sample']} of {result['graph_documents']} documents, {result['threads']} threads")
    table.add_column("what")
    table.add_column("documents / s", justify="right")
    table.add_row("build_index, txtai encoding (before)", str(result["build_docs_per_s"]))
    table.add_row(f"build_index, {result['processes']} one-thread processes (after)", str(result["build_docs_per_s_processes"]))
    for batch, rate in result["encoder_docs_per_s_by_batch"].items():
        table.add_row(f"encoder alone, batch {batch}", str(rate))
    table.add_row(f"encoder int8 (top-10 overlap {result['int8_top10_neighbour_overlap']})", str(result["int8_docs_per_s"]))
    Console().print(table)
    Console().print(f"the encoder (tokenizer and forward): {result['encoder_share_of_build']:.0%} of the build's seconds")
    with atomic_file(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
