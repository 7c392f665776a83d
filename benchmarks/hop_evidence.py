"""Where a hop's gold paragraph stands in what the hop could read first, under each ranker this machine
has, and how often the reader answers the hop when handed that paragraph alone.

A chain is as strong as its hops: a 2-hop answer is right about as often as hop accuracy squared. A
hop's accuracy is bounded by two things measured here on the loop's own sub-questions (the hops of a
MuSiQue run whose plan has the gold number of hops, each lined up with its gold hop):
- evidence: the share of hops whose gold paragraph comes first, under the hybrid corpus search, PageRank
  over the hop's neighbourhood, the hop's reading order (`hop_selection`, read alone), and with
  `--llm-rerank` the reader's P(Yes) over the search's top 5 (`evidence.rerank: llm`);
- reading: the share of hops the reader answers right (EM against the gold sub-answer) over the gold
  paragraph alone, the hop's first read when its ranking is perfect.
Their product is what one read per hop reaches when the first passage decides; a later passage can add
a little (a hop reads on while no read states its answer).

    python -m benchmarks hop_evidence results/hops/musique/RUN --llm-rerank --out bench_results/hop_evidence_musique.json
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.hop_chains import _chunk_doc, _rate, run_arguments
from enrich_rag.agent.hops import hop_analysis
from enrich_rag.agent.sufficiency import check_sufficiency
from enrich_rag.api import EnrichRAG
from enrich_rag.eval.datasets import QAItem, load_questions
from enrich_rag.eval.metrics import exact_match
from enrich_rag.eval.stats import paired_difference
from enrich_rag.evidence.enrich_context import Subgraph
from enrich_rag.evidence.query_analysis import analyze_query
from enrich_rag.evidence.rerank import llm_reranker
from enrich_rag.llm.models import model_name
from enrich_rag.storage.passages import Passage

RANKERS = ("hybrid_search", "pagerank", "reading_order", "llm_p_yes_top5")
READ_LIMIT = 5  # passages of a hop's reading order looked at


def position(passages: Sequence[Passage], doc: str) -> int | None:
    """Where the gold document's first chunk stands (0: read first), or None when it is not there."""
    return next((i for i, p in enumerate(passages) if _chunk_doc(p.id) == doc), None)


def aligned_hops(rows: list[dict[str, Any]], gold: dict[str, QAItem], method: str) -> list[dict[str, Any]]:
    """Each hop of a chain planned with the gold number of hops: its question as the loop filled it, the
    answers before it, and its gold (sub-answer, document)."""
    hops = []
    for row in rows:
        item = gold.get(row["id"])
        chain = row["trace"].get("chain") or [] if row["method"] == method else []
        if item is None or not chain or len(chain) != len(item.hops):
            continue
        for i, (hop, (_, answer, doc)) in enumerate(zip(chain, item.hops)):
            earlier = [h["answer"] for h in chain[:i]]
            hops.append(
                {
                    "id": row["id"],
                    "hop": i + 1,
                    "question": hop["question"],
                    "earlier": earlier,
                    "run_answer": hop["answer"],
                    "gold_answer": answer,
                    "gold_doc": doc,
                }
            )
    return hops


def reading_order(rag: EnrichRAG, question: str, earlier: Sequence[str]) -> tuple[list[Passage], list[Passage], list[Passage]]:
    """The hop's search hits, PageRank's passages and the passages it would read, in order (as `chain.hop`)."""
    agent, resources = rag.agent(), rag.resources
    sub = hop_analysis(analyze_query(question, resources.nlp, resources.store), earlier)
    hits = agent.retriever.search(question)
    ranking = agent.retriever.rank(sub, hits)
    round_ = agent.steps.hop_choice.round(sub, ranking, hits)
    order: list[Passage] = []
    previous = Subgraph()
    for iteration in range(READ_LIMIT):
        wider = round_.at(iteration, previous)
        new = [e for e in wider.evidence if isinstance(e, Passage) and e.id not in {p.id for p in order}]
        if iteration and not new:
            break
        order, previous = [*order, *new], wider
    return hits, list(ranking.passages), order


def _rates(measured: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"hops": len(measured)}
    for ranker in RANKERS:
        places = [m[ranker] for m in measured if ranker in m]
        if places:
            out[ranker] = {
                "first": _rate([float(p == 0) for p in places]),
                "top3": _rate([float(p is not None and p < 3) for p in places]),
                "absent": _rate([float(p is None) for p in places]),
            }
    if "hybrid_search" in out:  # each ranker against the search it reorders, on the same hops (resampled together)
        out["first_minus_hybrid_search"] = {
            ranker: _difference([float(m[ranker] == 0) for m in measured], [float(m["hybrid_search"] == 0) for m in measured])
            for ranker in RANKERS[1:]
            if ranker in out
        }
    out["reader_on_gold_paragraph"] = _rate([m["gold_read_em"] for m in measured])
    out["hop_em_in_run"] = _rate([m["run_hop_em"] for m in measured])
    out["hop_em_in_run_gold_read_first"] = _rate([m["run_hop_em"] for m in measured if m["reading_order"] == 0])
    out["hop_em_in_run_gold_not_first"] = _rate([m["run_hop_em"] for m in measured if m["reading_order"] != 0])
    return out


def _difference(a: list[float], b: list[float]) -> list[float]:
    interval = paired_difference(a, b)
    return [round(interval.value, 4), *interval.to_list()]


def summary(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """Per ranker: gold first, gold in the top 3, gold absent; the reader over the gold paragraph alone;
    the run's hop EM by where its gold paragraph stood. Apart for first hops and for later ones (a later
    hop's question names what the hop before it answered, right or wrong)."""
    return _rates(measured) | {
        "first_hops": _rates([m for m in measured if m["hop"] == 1]),
        "later_hops": _rates([m for m in measured if m["hop"] > 1]),
    }


def main() -> int:
    parser = run_arguments(__doc__.splitlines()[0])
    parser.add_argument("--llm-rerank", action="store_true", help="also rank the top 5 hits by the reader's P(Yes): 5 reader calls a hop")
    parser.add_argument("--summarise-only", action="store_true", help="recompute the rates from the rows --out already holds")
    args = parser.parse_args()
    if args.summarise_only:
        result = json.loads(Path(args.out).read_text(encoding="utf-8"))
        return _written(Path(args.out), {k: result[k] for k in ("run", "method", "reader")}, result["rows"])
    rag = EnrichRAG.open(args.params, args.config)
    config = rag.resources.config
    gold = {item.id: item for item in load_questions(config.eval.questions, config.eval.format)}
    rows = [json.loads(line) for line in (args.run / "predictions.jsonl").read_text().splitlines() if line.strip()]
    llm = rag.resources.llm
    rerank = llm_reranker(llm) if args.llm_rerank else None
    measured = []
    for hop in tqdm(aligned_hops(rows, gold, args.method), desc="hops"):
        hits, pagerank, order = reading_order(rag, hop["question"], hop["earlier"])
        m = hop | {"hybrid_search": position(hits, hop["gold_doc"]), "pagerank": position(pagerank, hop["gold_doc"])}
        m["reading_order"] = position(order, hop["gold_doc"])
        if rerank is not None:
            top = hits[:5]
            scores = rerank(hop["question"], top, [])
            by_score = [top[i] for i in sorted(range(len(top)), key=lambda i: -scores[i])]
            m["llm_p_yes_top5"] = position(by_score, hop["gold_doc"])
        paragraph = rag.resources.passages.by_doc_ids([hop["gold_doc"]])[:1]
        read = check_sufficiency(llm, hop["question"], list(paragraph), config.llm.max_new_tokens) if paragraph else None
        m["gold_read"] = read.answer if read else ""
        m["gold_read_em"] = exact_match(m["gold_read"], [hop["gold_answer"]])
        m["run_hop_em"] = exact_match(hop["run_answer"], [hop["gold_answer"]])
        measured.append(m)
    return _written(Path(args.out), {"run": str(args.run), "method": args.method, "reader": model_name(config.llm)}, measured)


def _written(out: Path, head: dict[str, Any], measured: list[dict[str, Any]]) -> int:
    result = head | summary(measured) | {"rows": measured}
    table = Table(title=f"{Path(head['run']).name}: where a hop's gold paragraph stands ({len(measured)} hops)")
    for column in ("ranker", "gold first", "gold in top 3", "gold absent"):
        table.add_column(column)
    for ranker in RANKERS:
        if ranker in result:
            table.add_row(ranker, *(json.dumps(result[ranker][k]) for k in ("first", "top3", "absent")))
    for ranker, difference in result.get("first_minus_hybrid_search", {}).items():
        table.add_row(f"{ranker} - hybrid_search, gold first (paired)", json.dumps(difference), "", "")
    for key in ("reader_on_gold_paragraph", "hop_em_in_run", "hop_em_in_run_gold_read_first", "hop_em_in_run_gold_not_first"):
        table.add_row(key, json.dumps(result[key]), "", "")
    for part in ("first_hops", "later_hops"):
        rates = result[part]
        table.add_row(
            f"{part} ({rates['hops']}): reading order first / reader on gold / hop EM",
            json.dumps(rates["reading_order"]["first"]) if "reading_order" in rates else "",
            json.dumps(rates["reader_on_gold_paragraph"]),
            json.dumps(rates["hop_em_in_run"]),
        )
    Console().print(table)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0
