"""Build a folder of .txt / .md / .jsonl files into a workspace of its own, ask it, let it enrich.

.venv/bin/python examples/own_documents.py path/to/folder "your question"
"""

import sys

from enrich_rag import EnrichRAG

folder, question = sys.argv[1], sys.argv[2]
with EnrichRAG.from_folder(folder) as rag:  # the build is reused when nothing changed
    answer = rag.ask(question)  # may read the chunks it needs with the LLM and commit what it found
    print(answer.answer, "(sure)" if answer.sufficient else "(unsure)")
    for citation in answer.citations:
        print(f"  {citation.doc_id} [{citation.chunk_id}, partition {citation.partition}]")
    for partition in rag.graph.partitions():
        print(partition["partition"], partition["edges"], "facts", partition.get("extractors", {}))
