"""A throwaway build for the reliability scripts: bundled HotpotQA passages in a temp dir, a shallow
seed graph (so enrichment has gaps to fill), its own DVC repository. Shared by `fault_injection.py`
and `load_test.py`; nothing here touches the project's own data."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from enrich_rag.config import load_config, paths_under

PROJECT = Path(__file__).resolve().parents[1]
BUNDLED = PROJECT / "data/benchmarks/hotpotqa_distractor/dev.jsonl"


def bundled_passages(count: int, skip: int = 0) -> list[dict[str, str]]:
    """Distinct bundled passages in file order as {id, title, text}, ids `p<n>`; `skip` the first ones
    (those a sandbox of that many passages holds: documents to add to it)."""
    seen: set[str] = set()
    docs: list[dict[str, str]] = []
    for line in BUNDLED.read_text().splitlines():
        for ctx in json.loads(line)["contexts"]:
            if ctx["title"] not in seen and len(docs) < skip + count:
                seen.add(ctx["title"])
                docs.append({"id": f"p{len(docs)}", "title": ctx["title"], "text": "".join(ctx["sentences"]).strip()})
    return docs[skip:]


def sandbox_params(root: Path, passages: int, seed_share: float, **sections: dict) -> Path:
    """params.yaml for a build in `root` over the first `passages` distinct bundled passages (whole
    questions' contexts, in file order); `sections` override params.yaml per section."""
    base = yaml.safe_load((PROJECT / "params.yaml").read_text())
    docs = bundled_passages(passages)
    source = root / "corpus.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in docs))
    base["corpus"].update(source=str(source), format="jsonl")
    base["extraction"].update(seed_share=seed_share)
    base["agent"].update(expansion="template", enrich_chunks=3)
    base["paths"] = paths_under(root / "data", dvc_root=root)
    for name, values in sections.items():
        base.setdefault(name, {}).update(values)
    params = root / "params.yaml"
    params.write_text(yaml.safe_dump(base))
    return params


def build_sandbox(params: Path) -> list[str]:
    """Run the offline stages; returns the titles of passages the seed did not read (enrichment topics)."""
    from enrich_rag.stages.corpus import prepare_corpus
    from enrich_rag.stages.indexes import build_corpus_index, build_graph_index
    from enrich_rag.stages.seed_graph import build_seed_graph
    from enrich_rag.stages.seed_share import in_seed
    from enrich_rag.storage.dvc_tracking import DvcRepo
    from enrich_rag.storage.passages import read_passages

    config = load_config(params)
    prepare_corpus(config)
    build_corpus_index(config)
    build_seed_graph(config)
    build_graph_index(config)
    DvcRepo(params.parent).init()
    return [c.title for c in read_passages(config.paths.chunks) if not in_seed(c.id, config.extraction.seed_share)]


def sandbox_questions(params: Path) -> list[str]:
    """Bundled questions whose every passage is in the sandbox corpus."""
    titles = {json.loads(line)["title"] for line in Path(load_config(params).corpus.source).read_text().splitlines()}
    questions = []
    for line in BUNDLED.read_text().splitlines():
        row = json.loads(line)
        if all(ctx["title"] in titles for ctx in row["contexts"]):
            questions.append(row["question"])
    return questions
