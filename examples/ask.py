"""Ask the project's built graph (run `scripts/run.sh demo` or `enrich-rag build` first).

.venv/bin/python examples/ask.py "Who was the first wife of Erica Packer's husband?"
"""

import sys

from enrich_rag import EnrichRAG

question = sys.argv[1] if len(sys.argv) > 1 else "Erica Packer was the second wife of what Australian businessman?"
with EnrichRAG.open("params.yaml") as rag:
    answer = rag.ask(question, enrich="never")
    print(f"{answer.answer}  ({'sure' if answer.sure else 'unsure'}, perplexity {answer.perplexity:.2f})")
    for citation in answer.citations:
        print(f"  [{citation.chunk_id}] {citation.evidence[:100]}")
