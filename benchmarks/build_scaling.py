"""Throughput of the offline build's two map steps (extraction, embedding) on the local engine and on
Ray with 1 and 2 workers, from the project's chunks. The first N chunks are copied to a temp file;
the project's build is not touched.

Each figure is the whole step as a user waits for it: model loads, and for Ray its start and the
actors' start, are inside. `overhead_1_worker` is Ray's time at 1 worker over the local time: what
Ray costs before it can win anything. The steps that stay on the driver whatever the engine (the
reduce into graph tables, the txtai index built from given vectors) are timed too: with the
per-worker rates they give the cluster estimate in context/ray_build.md.

    python -m benchmarks build_scaling --chunks 2000    # -> table + bench_results/build_scaling.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
from rich.console import Console
from rich.table import Table

from enrich_rag.config import BuildConfig, Config, load_config
from enrich_rag.extract.factory import make_extractor
from enrich_rag.stages.indexes import corpus_documents
from enrich_rag.stages.seed_graph import extract_all
from enrich_rag.stages.seed_share import in_seed
from enrich_rag.storage.passages import read_chunks, read_passages

RUNS = (("local", 0), ("ray", 1), ("ray", 2))


def local_extraction(config: Config) -> None:
    passages = [p for p in read_passages(config.paths.chunks) if in_seed(p.id, config.extraction.seed_share)]
    extract_all(make_extractor(config.extraction), passages, config.extraction.batch_size)


def ray_extraction(config: Config) -> None:
    from enrich_rag.stages.ray_engine import extract_on_ray

    extract_on_ray(config)


def local_embedding(config: Config) -> None:
    from enrich_rag.index.embeddings import txtai_config
    from enrich_rag.index.txtai_adapter import encode, vectors_model

    texts = [d["text"] for d in corpus_documents(config)]
    model = vectors_model(txtai_config(config.embeddings))
    size = config.embeddings.batch_size
    for start in range(0, len(texts), size):
        encode(model, texts[start : start + size])


def ray_embedding(config: Config) -> None:
    from enrich_rag.stages.ray_engine import embed_on_ray

    embed_on_ray(config, [d["text"] for d in corpus_documents(config)])


def driver_steps(config: Config) -> dict[str, dict[str, float]]:
    """The reduce and the index build from precomputed vectors, each timed alone on this machine."""
    import tempfile as tf

    from enrich_rag.extract.assemble import graph_tables
    from enrich_rag.index.embeddings import build_index, txtai_config
    from enrich_rag.index.txtai_adapter import encode, vectors_model

    every = read_passages(config.paths.chunks)
    extraction = extract_all(
        make_extractor(config.extraction), [p for p in every if in_seed(p.id, config.extraction.seed_share)], config.extraction.batch_size
    )
    reduce_s = timed(lambda _: graph_tables(extraction, titled=every), config)
    docs = corpus_documents(config)
    vectors = encode(vectors_model(txtai_config(config.embeddings)), [d["text"] for d in docs])
    with tf.TemporaryDirectory() as tmp:
        index_s = timed(lambda _: build_index(docs, config.embeddings, Path(tmp) / "index", "index from vectors", vectors), config)
    return {
        "reduce": {"seconds": round(reduce_s, 2), "chunks_per_s": round(len(every) / reduce_s, 1)},
        "index_from_vectors": {"seconds": round(index_s, 2), "chunks_per_s": round(len(docs) / index_s, 1)},
    }


STEPS: dict[str, dict[str, Callable[[Config], None]]] = {
    "extraction": {"local": local_extraction, "ray": ray_extraction},
    "embedding": {"local": local_embedding, "ray": ray_embedding},
}


def timed(step: Callable[[Config], object], config: Config) -> float:
    start = time.perf_counter()
    step(config)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--chunks", type=int, default=2000, help="the first N chunks of the project's corpus")
    parser.add_argument("--out", default="bench_results/build_scaling.json")
    args = parser.parse_args()
    base = load_config(args.params)
    result: dict = {
        "chunks": 0,
        "cores": os.cpu_count(),
        "extractor": base.extraction.extractor,
        "embedder": base.embeddings.model,
        "steps": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "chunks.parquet"
        table = read_chunks(base.paths.chunks)
        pq.write_table(table.slice(0, min(args.chunks, table.num_rows)), subset)
        result["chunks"] = min(args.chunks, table.num_rows)
        for name, engines in STEPS.items():
            rows = {}
            for engine, workers in RUNS:
                config = dataclasses.replace(
                    base,
                    build=BuildConfig(engine=engine),
                    ray=dataclasses.replace(base.ray, workers=max(1, workers)),
                    paths=dataclasses.replace(base.paths, chunks=str(subset)),
                )
                seconds = timed(engines[engine], config)
                label = "local" if engine == "local" else f"ray_{workers}"
                rows[label] = {"seconds": round(seconds, 1), "chunks_per_s": round(result["chunks"] / seconds, 1)}
                Console().print(f"{name} {label}: {seconds:.1f} s")
            rows["overhead_1_worker"] = round(rows["ray_1"]["seconds"] / rows["local"]["seconds"], 2)
            rows["speedup_2_over_1"] = round(rows["ray_1"]["seconds"] / rows["ray_2"]["seconds"], 2)
            result["steps"][name] = rows
        result["driver"] = driver_steps(dataclasses.replace(base, paths=dataclasses.replace(base.paths, chunks=str(subset))))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    view = Table(title=f"offline build map steps, {result['chunks']} chunks, {result['cores']} cores (chunks/s, whole step)")
    for column in ("step", "local", "Ray, 1 worker", "Ray, 2 workers", "Ray 1 / local (time)", "2 vs 1 workers"):
        view.add_column(column, justify="right")
    for name, r in result["steps"].items():
        view.add_row(
            name,
            *(f"{r[k]['chunks_per_s']} ({r[k]['seconds']} s)" for k in ("local", "ray_1", "ray_2")),
            f"{r['overhead_1_worker']}x",
            f"{r['speedup_2_over_1']}x",
        )
    Console().print(view)
    driver = Table(title="steps that stay on the driver (one process, whatever the engine)")
    for column in ("step", "seconds", "chunks/s"):
        driver.add_column(column, justify="right")
    for name, r in result["driver"].items():
        driver.add_row(name, str(r["seconds"]), str(r["chunks_per_s"]))
    Console().print(driver)
    Console().print(f"-> {args.out}")


if __name__ == "__main__":
    main()
