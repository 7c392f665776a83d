"""Stage build_corpus_index: chunks -> hybrid (dense MiniLM + BM25) txtai index."""

from enrich_rag.stages.indexes import build_corpus_index
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("build_corpus_index", build_corpus_index)
