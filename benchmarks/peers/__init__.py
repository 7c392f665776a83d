"""Peer graph-RAG systems run beside EnrichRAG on the same reader, embeddings, corpus and questions.

Installed apart (`bash benchmarks/peers/setup.sh` makes `.venv-peers`); the package never imports them.
`.venv-peers/bin/python -m benchmarks.peers.run --help`."""
