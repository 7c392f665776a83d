"""Stage `build_seed_graph`: extract the seed share of the chunks into partition `seed`, and link every
chunk to its title entity (no extraction needed), so all passages are graph nodes from the start."""

from __future__ import annotations

from collections.abc import Iterable

from tqdm import tqdm

from enrich_rag.config import Config
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.base import Extraction, Extractor
from enrich_rag.extract.factory import make_extractor
from enrich_rag.extract.title_links import TitleGazetteer
from enrich_rag.stages.seed_share import in_seed
from enrich_rag.storage.partitions import write_partition
from enrich_rag.storage.passages import Passage, read_passages
from enrich_rag.storage.schema import SEED_PARTITION


def extract_all(extractor: Extractor, chunks: list[Passage], batch_size: int, label: str = "extracting") -> Extraction:
    """Map the pure `extract` over batches; this loop is what a cluster engine would distribute."""
    out = Extraction()
    with tqdm(total=len(chunks), desc=label, unit="chunk", mininterval=2.0) as bar:
        for start in range(0, len(chunks), batch_size):
            batch = chunks[start : start + batch_size]
            out.extend(extractor.extract(batch))
            bar.update(len(batch))
    return out


def build_seed_graph(config: Config, extractor: Extractor | None = None, chunks: Iterable[Passage] | None = None) -> dict[str, int]:
    """`extractor` and `chunks` (a subset) are for tests; the stage extracts every seed chunk on the
    configured engine."""
    every = list(chunks) if chunks is not None else read_passages(config.paths.chunks)
    inputs = [c for c in every if in_seed(c.id, config.extraction.seed_share)]
    if config.build.engine == "ray" and extractor is None and chunks is None:
        from enrich_rag.stages.ray_engine import extract_on_ray

        extraction = extract_on_ray(config)
    else:
        extraction = extract_all(extractor or make_extractor(config.extraction), inputs, config.extraction.batch_size)
    if config.extraction.title_links:  # on the driver for either engine: a dictionary pass, no model
        extraction.mentions.extend(TitleGazetteer(p.title for p in every).mentions(inputs))
    tables = graph_tables(extraction, titled=every)
    write_partition(config.paths.graph, SEED_PARTITION, tables.nodes, edges=tables.edges, links=tables.links)
    return {"chunks": len(inputs), "nodes": tables.nodes.num_rows, "edges": tables.edges.num_rows, "links": tables.links.num_rows}
