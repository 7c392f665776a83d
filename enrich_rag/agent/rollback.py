"""Remove one enrichment partition: its rows, its index entries and its DVC record.

Uncommit first (the partition disappears for readers), then the index rows, then DVC; a crash at
any point leaves a state `recovery.reconcile` finishes (orphan index rows of a missing partition
are deleted there).
"""

from __future__ import annotations

from pathlib import Path

from enrich_rag.agent.recovery import reconcile
from enrich_rag.errors import StorageError
from enrich_rag.index.embeddings import save_index
from enrich_rag.index.graph_index import partition_documents
from enrich_rag.storage.partitions import committed_partitions, partition_dir, remove_partition
from enrich_rag.storage.schema import SEED_PARTITION, check_partition_id


def rollback_partition(resources, partition: str) -> dict:
    check_partition_id(partition)
    if partition == SEED_PARTITION:
        raise StorageError("the seed partition is a build output; rebuild with `dvc repro` instead of rolling it back")
    graph_root = Path(resources.config.paths.graph)
    with resources.write_lock():
        if partition not in committed_partitions(graph_root):
            raise StorageError(f"no partition '{partition}' (see `enrich-rag graph partitions`)")
        ids = [d["id"] for d in partition_documents(resources.store, partition)]
        remove_partition(graph_root, partition)
        index = resources.graph_index
        index.delete(ids)
        save_index(index, resources.config.paths.graph_index)
        if resources.dvc.exists():
            for table in ("nodes", "edges"):
                resources.dvc.forget(partition_dir(graph_root, table, partition))
        # Nodes it introduced that a later partition also mentions are re-indexed under that one;
        # the repair also records the new index version with DVC.
        repair = reconcile(resources, force_record=True)
    return {"partition": partition, "index_rows_deleted": len(ids), "reindexed": repair.reindexed, "dvc": repair.recorded}
