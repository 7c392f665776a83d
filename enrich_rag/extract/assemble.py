"""Reduce extraction rows to graph rows: one node per normalised name, one edge per fact+provenance,
one link per (entity, passage) that mentions it."""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Iterable

import pyarrow as pa

from enrich_rag.extract.base import Extraction
from enrich_rag.storage.ids import edge_id, node_id, normalize_name
from enrich_rag.storage.partitions import GraphTables
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import EDGES, LINKS, NODES
from enrich_rag.text import first_sentence, title_surfaces

_WEAK_TYPES = {"TOPIC", "MISC", "ENTITY"}
DESCRIPTION_CHARS = 300


def _pick_type(types: Counter) -> str:
    strong = [(n, t) for t, n in types.items() if t not in _WEAK_TYPES]
    if strong:
        return max(strong)[1]
    return max((n, t) for t, n in types.items())[1] if types else "ENTITY"


def _pick_description(name: str, aliases: set[str], sentences: list[str]) -> str:
    """Prefer a sentence that opens with the entity ("X is a ..."): a Wikipedia-style definition."""
    keys = {normalize_name(a) for a in aliases | {name}}
    for sentence in sentences:
        words = normalize_name(sentence).split()
        if any(words[: len(k.split())] == k.split() for k in keys if k):
            return sentence[:DESCRIPTION_CHARS]
    return sentences[0][:DESCRIPTION_CHARS] if sentences else ""


def graph_tables(extraction: Extraction, titled: Iterable[Passage] = ()) -> GraphTables:
    """`titled`: passages whose title becomes a node linked to them without extraction (the build
    passes every chunk, so every passage is reachable in the graph through its title)."""
    names: dict[str, str] = {}
    types: dict[str, Counter] = defaultdict(Counter)
    aliases: dict[str, set[str]] = defaultdict(set)
    sentences: dict[str, list[str]] = defaultdict(list)

    def see(name: str, type_: str, alias: str, sentence: str) -> str:
        nid = node_id(name)
        names.setdefault(nid, name)
        types[nid][type_] += 1
        aliases[nid].add(alias)
        if sentence and len(sentences[nid]) < 8:
            sentences[nid].append(sentence)
        return nid

    links: Counter = Counter()
    docs: dict[str, str] = {}
    titles: dict[str, set[str]] = defaultdict(set)
    for passage in titled:
        # "Robert Palmer (singer)" is the page about "Robert Palmer" too: other passages write the bare name.
        for title in title_surfaces(passage.title):
            if normalize_name(title):
                nid = see(title, "TOPIC", title, sentence=first_sentence(passage.text, DESCRIPTION_CHARS))
                links[(nid, passage.id)] += 1
                docs[passage.id] = passage.doc_id
                titles[passage.id].add(nid)
    # Chunk by chunk in chunk-id order (stable: within a chunk, the extractor's order), so the rows do
    # not depend on the batch order or the number of workers that extracted them.
    mentions = sorted(extraction.mentions, key=lambda m: m.chunk_id)
    facts = sorted(extraction.edges, key=lambda e: e.chunk_id)
    for m in mentions:
        nid = see(m.name, m.type, m.alias, sentence=m.sentence)
        links[(nid, m.chunk_id)] += 1
        docs.setdefault(m.chunk_id, m.doc_id)

    edges: dict[str, dict] = {}
    for t in facts:
        if not normalize_name(t.subject) or not normalize_name(t.object):
            continue
        src = see(t.subject, "ENTITY", t.subject, sentence=t.evidence) if node_id(t.subject) not in names else node_id(t.subject)
        dst = see(t.object, "ENTITY", t.object, sentence=t.evidence) if node_id(t.object) not in names else node_id(t.object)
        if src == dst:
            continue
        eid = edge_id(src, t.relation, dst, chunk_id=t.chunk_id, sentence=t.sentence_index)
        if eid not in edges:
            edges[eid] = dataclasses.replace(t, subject=names[src], object=names[dst], id=eid, src=src, dst=dst).to_row()

    node_rows = [
        {
            "id": nid,
            "name": name,
            "type": _pick_type(types[nid]),
            "description": _pick_description(name, aliases[nid], sentences[nid]),
            "aliases": sorted(aliases[nid] - {name}),
        }
        for nid, name in names.items()
    ]
    link_rows = [
        {"node": nid, "chunk_id": chunk, "doc_id": docs.get(chunk, ""), "count": n, "is_title": nid in titles.get(chunk, ())}
        for (nid, chunk), n in sorted(links.items())
    ]
    return GraphTables(
        pa.Table.from_pylist(node_rows, schema=NODES),
        pa.Table.from_pylist(list(edges.values()), schema=EDGES),
        pa.Table.from_pylist(link_rows, schema=LINKS),
    )
