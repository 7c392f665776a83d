"""EnrichRAG: a knowledge graph that grows where your questions need it. `from enrich_rag import EnrichRAG`."""


def __getattr__(name: str):
    if name == "EnrichRAG":  # imported on first use: `import enrich_rag` stays light for the CLI's startup
        from enrich_rag.api import EnrichRAG

        return EnrichRAG
    raise AttributeError(f"module 'enrich_rag' has no attribute '{name}'")
