"""Where the passages that answer rank, with no reader call, so every set is measured whole.

Per documentation folder (questions labelled with the page, `source`, and the line, `evidence`, that
state the answer) the rank of the first passage of that page holding that line; per dev set (HotpotQA,
2Wiki, MuSiQue, NQ: gold paragraphs by document id) whether all, and whether any, of the gold paragraphs
are among the first k. For each search a user can run: `EnrichRAG.search` (the default), the hybrid alone
(`graph=False`), dense alone and BM25 alone (the same corpus index, its hybrid weight at 1 and 0),
k = 1, 3, 5, 10, 20; each against the hybrid paired, with the questions it won and lost.

    python -m benchmarks find --label start                 # every folder and dev set
    python -m benchmarks find --label start --sets npm hotpotqa --limit 100
    # -> table + bench_results/find_<label>.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from enrich_rag.api import EnrichRAG
from enrich_rag.eval.datasets import load_questions
from enrich_rag.eval.runner import load_eval
from enrich_rag.eval.stats import paired_difference
from enrich_rag.index.embeddings import search
from enrich_rag.storage.passages import Passage

ROOT = Path(__file__).resolve().parents[1]
KS = (1, 3, 5, 10, 20)
DEPTH = max(KS)
FOLDERS = {"click": "data/own_documents/click-docs", "npm": "data/own_documents/npm-docs", "black": "data/own_documents/black-docs"}
HELD_OUT = {"structlog": "data/own_documents/structlog-docs"}  # read once, for the final figure
DEV_SETS = {"hotpotqa": "configs/hotpotqa.yaml", "2wiki": "configs/2wiki.yaml", "musique": "configs/musique.yaml", "nq": "configs/nq.yaml"}
SEARCHES = ("default", "hybrid", "dense", "bm25")
Search = Callable[[str], list[Passage]]


def searches(rag: EnrichRAG) -> dict[str, Search]:
    """The four searches, each returning the first `DEPTH` passages."""
    resources = rag.resources

    def weighted(dense_weight: float) -> Search:
        embeddings = dataclasses.replace(resources.config.embeddings, dense_weight=dense_weight)

        def run(question: str) -> list[Passage]:
            hits = search(resources.corpus_index, question, DEPTH, embeddings, columns=())
            found = {p.id: p for p in resources.passages.by_ids([h["id"] for h in hits])}
            return [found[h["id"]] for h in hits if h["id"] in found]

        return run

    return {
        "default": lambda q: rag.search(q, DEPTH),
        "hybrid": lambda q: rag.search(q, DEPTH, graph=False),
        "dense": weighted(1.0),
        "bm25": weighted(0.0),
    }


def plain(text: str) -> str:
    """Words only, markup gone (HTML tags, link targets, emphasis), so a line matches a passage however
    the chunker or a markup filter rendered it."""
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\]\([^)]*\)", " ", text)
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def evidence_rank(passages: Sequence[Passage], source: str, evidence: str) -> int | None:
    """1-based rank of the first passage of the page `source` that holds the line `evidence`."""
    line = plain(evidence)
    for rank, p in enumerate(passages, 1):
        if p.doc_id == source and line in plain(p.text):
            return rank
    return None


def gold_depth(passages: Sequence[Passage], gold: Sequence[str]) -> tuple[int | None, int | None]:
    """(the rank by which every gold paragraph was found, the rank of the first found), 1-based."""
    wanted, first = set(gold), None
    for rank, p in enumerate(passages, 1):
        if p.doc_id in wanted:
            first = first or rank
            wanted.discard(p.doc_id)
            if not wanted:
                return rank, first
    return None, first


def folder_questions(folder: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    unlabelled = [i for i, r in enumerate(rows) if not r.get("source") or not r.get("evidence")]
    if unlabelled:
        raise SystemExit(f"error: {folder}/questions.jsonl lines {unlabelled} have no `source` and `evidence`")
    return [
        {"id": str(i), "question": r["question"], "answers": r["answers"], "source": r["source"], "evidence": r["evidence"]}
        for i, r in enumerate(rows)
    ]


def measure_set(rag: EnrichRAG, questions: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Per question and search: the rank of the answering passage (docs) or of the last and first gold paragraph."""
    runs = searches(rag)
    rows = []
    for q in tqdm(questions, desc=name, unit="q"):
        row: dict[str, Any] = {"id": q["id"]}
        for search_name, run in runs.items():
            found = run(q["question"])
            if "gold" in q:
                row[search_name] = dict(zip(("all", "any"), gold_depth(found, q["gold"])))
            else:
                row[search_name] = {"all": evidence_rank(found, q["source"], q["evidence"])}
                row[search_name]["any"] = row[search_name]["all"]
        rows.append(row)
    return rows


def within(rank: int | None, k: int) -> float:
    return float(rank is not None and rank <= k)


def summarise(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Per search and k, how many questions had what answers within the first k, and each search minus the
    hybrid, paired (the share's difference with its 95% interval, questions won and lost)."""
    out: dict[str, Any] = {"kind": kind, "questions": len(rows), "searches": {}}
    for name in SEARCHES:
        at: dict[str, Any] = {}
        for measure in ("all", "any") if kind == "dev" else ("all",):
            for k in KS:
                mine = [within(r[name][measure], k) for r in rows]
                base = [within(r["hybrid"][measure], k) for r in rows]
                diff = paired_difference(mine, base)
                at[f"{measure}@{k}"] = {
                    "found": int(sum(mine)),
                    "minus_hybrid": round(diff.value, 4),
                    "ci": diff.to_list(),
                    "won": sum(1 for a, b in zip(mine, base) if a > b),
                    "lost": sum(1 for a, b in zip(mine, base) if a < b),
                }
        out["searches"][name] = at
    return out


def open_folder(name: str, path: str | None = None) -> tuple[EnrichRAG, list[dict[str, Any]]]:
    """A documentation folder (`path`: one not in `FOLDERS`, such as the held-out one), built as a user builds it."""
    folder = ROOT / (path or FOLDERS[name])
    return EnrichRAG.from_folder(folder / "docs", ROOT / "workspaces" / "find" / name), folder_questions(folder)


def open_dev(name: str, limit: int) -> tuple[EnrichRAG, list[dict[str, Any]]]:
    overlay = ROOT / DEV_SETS[name]
    _, evaluation = load_eval(ROOT / "params.yaml", overlay)
    items = [q for q in load_questions(ROOT / evaluation.questions, evaluation.format) if q.has_gold][:limit]
    rag = EnrichRAG.open(ROOT / "params.yaml", overlay)
    return rag, [{"id": q.id, "question": q.question, "answers": list(q.answers), "gold": list(q.gold_docs)} for q in items]


def kind_of(name: str) -> str:
    return "dev" if name in DEV_SETS else "held-out" if name in HELD_OUT else "docs"


def add_set_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sets", nargs="+", default=[*FOLDERS, *DEV_SETS], choices=[*FOLDERS, *DEV_SETS, *HELD_OUT])
    parser.add_argument("--limit", type=int, default=100, help="dev questions per set (the first N with gold)")


def opened(names: list[str], limit: int) -> Iterator[tuple[str, EnrichRAG, list[dict[str, Any]]]]:
    """Each set in turn, open while it is measured: a folder built as a user builds it, a dev set as built."""
    for name in names:
        rag, questions = open_dev(name, limit) if name in DEV_SETS else open_folder(name, HELD_OUT.get(name))
        with rag:
            yield name, rag, questions


def table(results: dict[str, Any]) -> Table:
    out = Table(title="where the answering passages rank: found within k (search minus hybrid, paired)")
    for column in ("set", "measure", "search", *(f"@{k}" for k in KS)):
        out.add_column(column, justify="right" if column.startswith("@") else "left")
    for set_name, data in results["sets"].items():
        for measure in ("all", "any") if data["kind"] == "dev" else ("all",):
            for search_name in SEARCHES:
                cells = []
                for k in KS:
                    cell = data["searches"][search_name][f"{measure}@{k}"]
                    delta = "" if search_name == "hybrid" else f" ({cell['won']:+d}/{-cell['lost']:d})"
                    cells.append(f"{cell['found']}/{data['questions']}{delta}")
                out.add_row(set_name, measure if data["kind"] == "dev" else "answer", search_name, *cells)
    return out


PACKAGE = ("enrich_rag", "params.yaml", "configs")  # what decides an answer; benchmarks and docs do not


def git(*args: str, root: Path = ROOT) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=root).stdout.strip()


def package_state(root: Path = ROOT) -> str:
    """The git trees of what decides an answer, hashed: sets measured at different commits with the same
    state measured the same default, so one scoreboard may span sessions; `+changed` marks uncommitted edits."""
    trees = " ".join(git("rev-parse", f"HEAD:{path}", root=root) for path in PACKAGE)
    changed = git("status", "--porcelain", "--", *PACKAGE, root=root)
    return hashlib.sha1(trees.encode()).hexdigest()[:12] + ("+changed" if changed else "")


def measured_sets(
    argv: list[str] | None,
    description: str,
    prefix: str,
    measure: Callable[[EnrichRAG, list[dict[str, Any]], str], list[dict[str, Any]]],
    summary: Callable[[list[dict[str, Any]], str], dict[str, Any]],
) -> tuple[dict[str, Any], Path]:
    """A benchmark over the sets named on its command line: per set, `measure`'s rows and their `summary`,
    into `bench_results/<prefix><label>.json` (kept up to date set by set; a run of other sets adds to it,
    each set stamped with its commit and package state)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--label", required=True, help=f"names the file: bench_results/{prefix}<label>.json")
    add_set_arguments(parser)
    args = parser.parse_args(argv)
    out_path = ROOT / "bench_results" / f"{prefix}{args.label}.json"
    results: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {"sets": {}, "rows": {}}
    results["commit"] = git("rev-parse", "--short", "HEAD")
    state = package_state()
    for name, rag, questions in opened(args.sets, args.limit):
        rows = measure(rag, questions, name)
        results["sets"][name] = summary(rows, kind_of(name)) | {"commit": results["commit"], "package": state}
        results["rows"][name] = rows
        out_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results, out_path


def main(argv: list[str] | None = None) -> None:
    results, out_path = measured_sets(argv, __doc__ or "", "find_", measure_set, summarise)
    Console(width=200).print(table(results))
    print(f"wrote {out_path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
