"""Stage prepare_corpus: corpus source -> data/corpus/chunks.parquet."""

from enrich_rag.stages.corpus import prepare_corpus
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("prepare_corpus", prepare_corpus)
