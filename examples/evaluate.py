"""A short benchmark run: the first 5 sampled HotpotQA dev questions, two methods, scores with intervals.
It writes under its own run id (`example-5q`), so the committed full runs are left as they are. The run
opens the dataset's own build through the project's door (`EnrichRAG`), one per method that writes.

    .venv/bin/python examples/evaluate.py configs/hotpotqa.yaml
"""

import sys
import tempfile
from pathlib import Path

import yaml

from enrich_rag.eval.runner import run_evaluation

config = yaml.safe_load(Path(sys.argv[1] if len(sys.argv) > 1 else "configs/hotpotqa.yaml").read_text())
config["eval"]["run_id"] = "example-5q"
with tempfile.TemporaryDirectory() as tmp:
    overlay = Path(tmp) / "example.yaml"
    overlay.write_text(yaml.safe_dump(config))
    run = run_evaluation("params.yaml", overlay, limit=5, only=("naive_rag", "enrichrag_no_enrich"))
print((run / "table.md").read_text())
