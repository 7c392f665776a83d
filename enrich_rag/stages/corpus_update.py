"""`enrich-rag add` and `remove`: documents into and out of a built corpus, without a rebuild.

Adding reads the files as the build does, chunks them, and compares each document with the live
chunks of the same id: an unchanged one is skipped, a changed one is replaced (its old chunks are
removed in the same partition). New chunks get ids with a version tag (`<doc>::v<tag>::c<n>`), so a
removed version never shares an id with a later one. They are seed-extracted with the build's
extractor (the same `extraction.seed_share`), linked to every page title they write, and every old
chunk that writes a new page's title is linked to it (title links both ways); then one commit writes
the partition (facts, links, chunks, removals), the graph index, the corpus index and the DVC records.
Removing writes a tombstone partition naming the documents' chunks: the store and the passages hide
them and their facts, the corpus index drops them, and a compaction drops their rows for good.

Neither touches the build's inputs or outputs (`corpus.source`, `chunks.parquet`), and the two indexes
are re-recorded as their stages' outputs, so `dvc repro` afterwards has nothing to do; `dvc repro -f`
rebuilds the build's own corpus, and the next start puts the added and removed documents back on it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from enrich_rag.config import Config
from enrich_rag.errors import InputDataError
from enrich_rag.extract.assemble import graph_tables
from enrich_rag.extract.base import Extraction, Extractor
from enrich_rag.extract.title_links import TitleGazetteer
from enrich_rag.ingest.documents import FOLDER_SUFFIXES, Document, folder_files, read_document_file, read_jsonl_documents
from enrich_rag.stages.chunking import chunk_document
from enrich_rag.stages.seed_graph import extract_all
from enrich_rag.stages.seed_share import in_seed
from enrich_rag.storage.graph_writer import GraphWriter
from enrich_rag.storage.partitions import GraphTables
from enrich_rag.storage.passages import Passage, PassageStore
from enrich_rag.storage.schema import CHUNKS, EDGES, LINKS, NODES
from enrich_rag.text import title_surfaces


@dataclass
class CorpusUpdate:
    """What one `add` or `remove` did (doc ids per outcome) and the partition it wrote, if any."""

    partition: str | None = None
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    chunks_added: int = 0
    chunks_removed: int = 0
    nodes: int = 0
    edges: int = 0
    links: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in vars(self).items()} | {
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()}
        }


def _base(path: Path, corpus_folder: Path | None) -> Path:
    """Ids are paths relative to the corpus folder for files inside it (as the build names them), else
    relative to the folder given, or the file's name."""
    if corpus_folder is not None and path.resolve().is_relative_to(corpus_folder):
        return corpus_folder
    return path.resolve() if path.is_dir() else path.resolve().parent


def read_documents(paths: list[Path | str], corpus_format: str, corpus_source: str) -> list[Document]:
    """The documents in these files and folders, ids as the build gives them; a .jsonl file's rows keep
    their own ids in a jsonl or benchmark corpus (whose ids are bare)."""
    corpus_folder = Path(corpus_source).resolve() if corpus_format == "folder" else None
    docs: list[Document] = []
    for given in map(Path, paths):
        if not given.exists():
            raise InputDataError(f"{given}: no such file or folder")
        base = _base(given, corpus_folder)
        files = folder_files(given) if given.is_dir() else [given]
        if not files:
            raise InputDataError(f"{given}: no {', '.join(FOLDER_SUFFIXES)} files found")
        for path in files:
            if path.suffix.lower() == ".jsonl" and corpus_folder is None:
                docs += read_jsonl_documents(path)
            else:
                docs += read_document_file(path, path.resolve().relative_to(base).as_posix())
    seen: set[str] = set()
    for doc in docs:
        if doc.doc_id in seen:
            raise InputDataError(f"document id '{doc.doc_id}' given twice")
        seen.add(doc.doc_id)
    if not docs:
        raise InputDataError("no documents with text in " + ", ".join(map(str, paths)))
    return docs


def versioned_chunks(doc: Document, chunk_size: int) -> list[Passage]:
    tag = uuid.uuid4().hex[:8]
    return [replace(c, id=f"{doc.doc_id}::v{tag}::c{c.position}") for c in chunk_document(doc, chunk_size)]


def _live_by_doc(passages: PassageStore, doc_ids: list[str]) -> dict[str, list[Passage]]:
    out: dict[str, list[Passage]] = {}
    for passage in passages.by_doc_ids(doc_ids):
        out.setdefault(passage.doc_id, []).append(passage)
    return {d: sorted(ps, key=lambda p: p.position) for d, ps in out.items()}


def _empty_tables(**changes: Any) -> GraphTables:
    return GraphTables(NODES.empty_table(), EDGES.empty_table(), LINKS.empty_table(), **changes)


def _commit(writer: GraphWriter, tables: GraphTables, prefix: str, update: CorpusUpdate) -> CorpusUpdate:
    commit = writer.commit(tables, prefix=prefix)
    if commit is not None:
        update.partition, update.nodes, update.edges, update.links = commit.partition, commit.nodes, commit.edges, commit.links
        update.seconds |= commit.seconds
    return update


def add_documents(
    config: Config, passages: PassageStore, writer: GraphWriter, extractor: Callable[[], Extractor], docs: list[Document]
) -> CorpusUpdate:
    """`docs`: read from files (`read_documents`) or given as text; `passages`: the live chunks (built +
    added - removed); `extractor`: the build's, loaded on first need."""
    t0 = time.perf_counter()
    live = _live_by_doc(passages, [d.doc_id for d in docs])
    update = CorpusUpdate()
    new_chunks: list[Passage] = []
    removes: list[str] = []
    for doc in docs:
        chunks = versioned_chunks(doc, config.corpus.chunk_size)
        old = live.get(doc.doc_id, [])
        if old and [(c.title, c.section, c.text) for c in old] == [(c.title, c.section, c.text) for c in chunks]:
            update.unchanged.append(doc.doc_id)
            continue
        (update.changed if old else update.added).append(doc.doc_id)
        removes += [c.id for c in old]
        new_chunks += chunks
    update.seconds["read"] = time.perf_counter() - t0
    if not new_chunks:
        return update

    t0 = time.perf_counter()
    share = config.extraction.seed_share
    inputs = [c for c in new_chunks if in_seed(c.id, share)]
    extraction = extract_all(extractor(), inputs, config.extraction.batch_size, label="extracting added documents")
    if config.extraction.title_links:
        # Forward: the new chunks name pages (old and new); backward: old chunks name the new pages.
        removed = set(removes)
        titles = [*passages.titles(), *(c.title for c in new_chunks)]
        extraction.mentions.extend(TitleGazetteer(titles).mentions(inputs))
        new_titles = sorted({t for c in new_chunks for t in title_surfaces(c.title)})
        old = [c for c in passages.containing(new_titles) if c.id not in removed and in_seed(c.id, share)]
        extraction.extend(Extraction(mentions=TitleGazetteer(c.title for c in new_chunks).mentions(old)))
    tables = graph_tables(extraction, titled=new_chunks)
    chunk_table = pa.Table.from_pylist([c.to_row() for c in new_chunks], schema=CHUNKS)
    update.seconds["extract"] = time.perf_counter() - t0
    update.chunks_added, update.chunks_removed = len(new_chunks), len(removes)
    return _commit(writer, replace(tables, chunks=chunk_table, removes=tuple(removes)), "add", update=update)


def remove_documents(passages: PassageStore, writer: GraphWriter, doc_ids: list[str]) -> CorpusUpdate:
    live = _live_by_doc(passages, list(doc_ids))
    unknown = [d for d in doc_ids if d not in live]
    if unknown:
        raise InputDataError(f"no document {', '.join(map(repr, unknown))} in the corpus (ids as `enrich-rag add` printed them)")
    update = CorpusUpdate(removed=list(dict.fromkeys(doc_ids)))
    removes = tuple(c.id for d in update.removed for c in live[d])
    update.chunks_removed = len(removes)
    return _commit(writer, _empty_tables(removes=removes), "remove", update=update)
