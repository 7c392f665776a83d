"""Stage eval_prepare: sample a benchmark's questions and write the corpus the offline stages build."""

from enrich_rag.stages.stage import run_stage, stage_args
from enrich_rag.eval.prepare import prepare_eval
from enrich_rag.eval.runner import load_eval

if __name__ == "__main__":
    args = stage_args("eval_prepare")
    _, ev = load_eval(args.params, args.config or "configs/hotpotqa.yaml")
    run_stage("eval_prepare", lambda config: prepare_eval(config, ev))
