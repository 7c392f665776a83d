"""Bring the graph index and DVC back in line with the committed partitions (run at start).

The partitions are the truth: a committed partition whose rows are missing from the index is
upserted, index rows of a partition that no longer exists are deleted, a partition DVC does not
track yet is recorded, and staging leftovers are removed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from enrich_rag.index.embeddings import save_index
from enrich_rag.storage.atomic import recover
from enrich_rag.index.graph_index import partition_documents
from enrich_rag.storage.partitions import committed_partitions, partition_dir, remove_uncommitted
from enrich_rag.storage.schema import SEED_PARTITION

MAX_IDS = 10_000_000


@dataclass
class Reconciliation:
    removed_leftovers: list[str] = field(default_factory=list)
    reindexed: dict[str, int] = field(default_factory=dict)
    deindexed: dict[str, int] = field(default_factory=dict)
    recorded: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.removed_leftovers or self.reindexed or self.deindexed or self.recorded)


def indexed_ids_by_partition(graph_index) -> dict[str, set[str]]:
    rows = graph_index.search("SELECT id, partition FROM txtai WHERE partition != 'seed'", limit=MAX_IDS)
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(row["partition"], set()).add(row["id"])
    return out


def reconcile(resources, force_record: bool = False) -> Reconciliation:
    config = resources.config
    graph_root = Path(config.paths.graph)
    report = Reconciliation()
    with resources.write_lock():
        # Before the index is opened: an interrupted save may have left it swapped out.
        report.removed_leftovers = recover(config.paths.graph_index) + remove_uncommitted(graph_root)
        committed = set(committed_partitions(graph_root))
        index = resources.graph_index
        indexed = indexed_ids_by_partition(index)
        dirty = False
        for partition in sorted(committed - {SEED_PARTITION}):
            docs = partition_documents(resources.store, partition)
            missing = [d for d in docs if d["id"] not in indexed.get(partition, set())]
            if missing:
                index.upsert(missing)
                report.reindexed[partition] = len(missing)
                dirty = True
        for partition, ids in indexed.items():
            if partition not in committed:
                index.delete(sorted(ids))
                report.deindexed[partition] = len(ids)
                dirty = True
        if dirty:
            save_index(index, config.paths.graph_index)
        enrichments = sorted(committed - {SEED_PARTITION})
        if resources.dvc.exists() and enrichments:
            tracked = [partition_dir(graph_root, t, p) for p in enrichments for t in ("nodes", "edges")]
            index_path = Path(config.paths.graph_index)
            if force_record or dirty or not resources.dvc.is_current(tracked + [index_path]):
                report.recorded = resources.dvc.record(tracked + [index_path])
        elif resources.dvc.exists() and force_record:
            report.recorded = resources.dvc.record([Path(config.paths.graph_index)])
    return report
