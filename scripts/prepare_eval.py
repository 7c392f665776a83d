"""Stage eval_prepare: sample a benchmark's questions and write the corpus the offline stages build."""

from enrich_rag.eval.prepare import prepare_eval
from enrich_rag.stages.stage import run_stage

if __name__ == "__main__":
    run_stage("eval_prepare", lambda config: prepare_eval(config, config.eval))
