"""The commit protocol, in one place: partition -> graph index (-> corpus index) -> DVC, under one lock.

Enrichments, documents added or removed (`enrich-rag add` / `remove`) and compactions all write
through here. Order of writes, each atomic: (1) the partition (its nodes folder rename is the commit
point), (2) the graph index upsert + save, (2b) for added or removed documents the corpus index
(`corpus_changes.py`), (3) the DVC record. The committed partitions are the truth:
a crash after (1) leaves a partition that `reconcile` upserts and records on the next start; a
crash before it leaves only a hidden staging folder that `reconcile` removes. A rollback uncommits
first (the partition disappears for readers), then deletes its index rows, then its DVC record,
under an intent record written before any of it: a crash at any point leaves the intent, and
`reconcile` finishes the rollback. `verify` checks all of it, DVC records included.

Several processes may write (the server beside a CLI, two CLIs): the file lock serialises them, and
each index reloads a copy another process saved over before it is written (`saved_index.py`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from filelock import FileLock

from enrich_rag.errors import StorageError
from enrich_rag.storage.atomic import atomic_file, recover
from enrich_rag.storage.compaction import merged_tables
from enrich_rag.storage.corpus_changes import CorpusSync
from enrich_rag.storage.dvc_tracking import DvcRepo
from enrich_rag.storage.graph_store import GraphStore
from enrich_rag.storage.partitions import (
    ALL_TABLES,
    COMPACT_PREFIX,
    PART_FILE,
    TABLES,
    GraphTables,
    bump_version,
    chunks_file,
    committed_partitions,
    on_disk,
    partition_dir,
    partition_forgets,
    partition_removes,
    partition_replaces,
    remove_partition,
    remove_uncommitted,
    replaced_by,
    write_tables,
)
from enrich_rag.storage.saved_index import SavedIndex
from enrich_rag.storage.schema import EDGES, LINKS, NODES, SEED_PARTITION, check_partition_id

WRITE_LOCK = ".enrich.lock"
ROLLBACK_INTENT = ".rollback-{partition}.json"  # in the graph root, one per rollback under way
COMPACT_INTENT = ".compact-{partition}.json"  # in the graph root, one per compaction under way
# Where a compaction keeps the DVC pointers (.dvc files) of the partitions it replaced: rolling the
# compaction back puts them back and checks those versions out of the DVC cache.
COMPACTED = ".compacted"
MAX_INDEX_IDS = 10_000_000


@dataclass
class Commit:
    partition: str
    nodes: int
    edges: int
    links: int = 0
    indexed: int = 0
    dvc: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    compacted: str | None = None  # the compaction this commit set off (storage.compact_after)


@dataclass
class Reconciliation:
    removed_leftovers: list[str] = field(default_factory=list)
    reindexed: dict[str, int] = field(default_factory=dict)
    deindexed: dict[str, int] = field(default_factory=dict)
    recorded: list[str] = field(default_factory=list)
    finished_rollbacks: list[str] = field(default_factory=list)
    finished_compactions: list[str] = field(default_factory=list)
    corpus: dict[str, int] = field(default_factory=dict)  # chunks upserted / deleted to bring the corpus index in line

    @property
    def changed(self) -> bool:
        return bool(
            self.removed_leftovers
            or self.reindexed
            or self.deindexed
            or self.recorded
            or self.finished_rollbacks
            or self.finished_compactions
            or self.corpus
        )


class GraphWriter:
    """Every write to the graph, its index and their DVC records goes through here."""

    def __init__(
        self,
        graph_root: Path | str,
        index_path: Path | str,
        store: GraphStore,
        dvc: DvcRepo,
        open_index: Callable[[], Any],
        compact_after: int = 0,
        corpus: CorpusSync | None = None,
    ):
        self.root = Path(graph_root)
        self.compact_after = compact_after  # storage.compact_after: 0 = only when asked
        self.index_path = Path(index_path)
        self.store = store
        self.dvc = dvc
        self.graph_index = SavedIndex(index_path, open_index)
        self.corpus = corpus  # the corpus index and chunks that `enrich-rag add` / `remove` change
        self.root.mkdir(parents=True, exist_ok=True)
        # One reentrant lock object per writer: a rollback runs reconcile while holding it.
        self.lock = FileLock(str(self.root / WRITE_LOCK))
        # Called between the partition commit and the index upsert; tests inject crashes here.
        self.after_partition_write: Callable[[str], None] = lambda partition: None

    @property
    def index(self) -> Any:
        return self.graph_index.get()

    def reload_index(self) -> None:
        self.graph_index.reload()
        if self.corpus:
            self.corpus.index.reload()

    def _sync_index(self) -> None:
        """Under the write lock: drop loaded indexes that another process has saved over since."""
        self.graph_index.sync()
        if self.corpus:
            self.corpus.index.sync()

    def _save_index(self) -> None:
        self.graph_index.save()

    def _tracked(self, partitions: list[str]) -> list[Path]:
        """Each partition's folders DVC records: nodes, edges, links, and its chunks where it has them."""
        folders = [partition_dir(self.root, t, p) for p in partitions for t in ALL_TABLES]
        return [f for f in folders if f.parent.name in TABLES or f.exists() or Path(f"{f}.dvc").is_file()]

    def _corpus_index(self) -> list[Path]:
        """The corpus index among what DVC records, once documents were added or removed here (its
        state file is written with every change, so it says so)."""
        return [self.corpus.index.path] if self.corpus and self.corpus.touched() else []

    def new_partition_id(self, prefix: str = "enrich") -> str:
        n = sum(p.startswith(f"{prefix}-") for p in committed_partitions(self.root)) + 1
        return f"{prefix}-{datetime.now(UTC):%Y%m%dT%H%M%S%f}-{n}"

    def require_dvc(self) -> None:
        """Checked before anything is written: an enrichment DVC cannot record is not made at all."""
        if not self.dvc.exists():
            raise StorageError(f"no DVC repository at {self.dvc.root}; run `dvc init` there (or set paths.dvc_root)")

    def commit(self, tables: GraphTables, prefix: str = "enrich") -> Commit | None:
        """Write a new partition (`prefix`: enrich, add, remove) with what of `tables` the graph lacks,
        index it, record both with DVC; None when nothing is new (no row, no chunk newly read, nothing
        removed). The filter runs under the lock: two writers that read the same chunk at once commit its
        facts once, so no index row is ever claimed by two partitions. Added and removed chunks go to the
        corpus index after the graph index (a kill in between is found and fixed by `reconcile`)."""
        self.require_dvc()
        if tables.changes_corpus and self.corpus is None:
            raise StorageError("this writer has no corpus index to add documents to")
        with self.lock:
            self._sync_index()
            tables = self.store.only_new(tables)
            if not tables.rows and not tables.reads and not tables.removes and not tables.forgets:
                return None
            t0 = time.perf_counter()
            partition = self.new_partition_id(prefix)
            write_tables(self.root, partition, tables)
            result = Commit(partition, tables.nodes.num_rows, tables.edges.num_rows, links=tables.links.num_rows)
            result.seconds["write_partition"] = time.perf_counter() - t0
            self.after_partition_write(partition)

            t0 = time.perf_counter()
            docs = self.store.index_documents(partition)
            if docs:
                self.index.upsert(docs)
                self._save_index()
            result.indexed = len(docs)
            result.seconds["upsert"] = time.perf_counter() - t0
            if tables.changes_corpus and self.corpus:
                t0 = time.perf_counter()
                self.corpus.apply(tables.chunks, tables.removes)
                result.seconds["corpus_index"] = time.perf_counter() - t0

            t0 = time.perf_counter()
            result.dvc = self.dvc.record(self._tracked([partition]) + [self.index_path] + self._corpus_index())
            result.seconds["dvc"] = time.perf_counter() - t0
            if self.compact_after and sum(p != SEED_PARTITION for p in committed_partitions(self.root)) > self.compact_after:
                t0 = time.perf_counter()
                result.compacted = (self.compact() or {}).get("partition")
                result.seconds["compact"] = time.perf_counter() - t0
        return result

    def forget(self, edge_ids: list[str]) -> Commit:
        """Hide facts from every reader from now on: a partition that names them (a tombstone), so the
        forgetting is committed, versioned and undone like any write (roll the partition back)."""
        wanted = list(dict.fromkeys(edge_ids))
        known = {r["id"] for r in self.store.edges_by_ids(wanted)}
        if missing := [i for i in wanted if i not in known]:
            raise StorageError(f"no fact {missing[0]!r} in the graph (ids are listed by `enrich-rag graph learned`)")
        commit = self.commit(GraphTables(NODES.empty_table(), EDGES.empty_table(), LINKS.empty_table(), forgets=tuple(wanted)), "forget")
        if commit is None:  # unreachable: a forget always writes its tombstone
            raise StorageError("nothing was forgotten")
        return commit

    def compact(self) -> dict[str, Any] | None:
        """Merge every enrichment partition (earlier compactions included) into one; None when there are
        fewer than two. Intent first, then the merged partition, whose nodes rename is the commit point
        (it names what it replaces, so readers switch over at once), then the replaced partitions go,
        their DVC pointers kept under .compacted/ so that rolling the compaction back restores them."""
        self.require_dvc()
        with self.lock:
            self._sync_index()
            damaged = set(self.store.quarantined())
            merged = [p for p in committed_partitions(self.root) if p != SEED_PARTITION and p not in damaged]
            if len(merged) < 2:
                return None
            t0 = time.perf_counter()
            corpus_current = self.corpus is not None and self.corpus.touched() and self.corpus.is_current()
            partition = f"{COMPACT_PREFIX}{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
            with atomic_file(self._compact_intent(partition)) as tmp:
                tmp.write_text(json.dumps({"compact": partition, "replaces": merged, "started": datetime.now(UTC).isoformat()}))
            tables = merged_tables(self.root, merged)
            write_tables(self.root, partition, tables, replaces=merged)
            self.after_partition_write(partition)
            dvc = self._finish_compaction(partition)
            if corpus_current and self.corpus:  # the same chunks, under the merged partition's name
                self.corpus.write_state()
        return {
            "partition": partition,
            "replaced": len(merged),
            "rows": tables.rows,
            "dvc": dvc,
            "seconds": round(time.perf_counter() - t0, 3),
        }

    def _compact_intent(self, partition: str) -> Path:
        return self.root / COMPACT_INTENT.format(partition=check_partition_id(partition))

    def _finish_compaction(self, partition: str) -> list[str]:
        """Safe to repeat: keep each replaced partition's DVC pointers, drop its files, record the
        merged partition. Before the commit point there is nothing to finish: the intent just goes."""
        done: list[str] = []
        if partition in on_disk(self.root):
            kept = self.root / COMPACTED / partition
            replaced = partition_replaces(self.root, partition)
            pointers = [p for p in (Path(f"{f}.dvc") for f in self._tracked(replaced)) if p.is_file()]
            for pointer in pointers:
                target = kept / pointer.parent.name / pointer.name
                target.parent.mkdir(parents=True, exist_ok=True)
                with atomic_file(target) as tmp:
                    tmp.write_bytes(pointer.read_bytes())
            self.dvc.forget_all([p.with_suffix("") for p in pointers])
            for old in replaced:
                remove_partition(self.root, old)
            if self.dvc.exists():
                done = self.dvc.record(self._tracked([partition]))
        self._compact_intent(partition).unlink(missing_ok=True)
        return done

    def _remove_staged_pointers(self) -> list[str]:
        """DVC pointer copies a killed compaction left half-written (never the kept ones: those are renamed in whole)."""
        leftovers = sorted((self.root / COMPACTED).glob("*/*/.tmp-*"))
        for path in leftovers:
            path.unlink()
        return [str(p.relative_to(self.root)) for p in leftovers]

    def pending_compactions(self) -> list[str]:
        return sorted(p.name[len(".compact-") : -len(".json")] for p in self.root.glob(COMPACT_INTENT.format(partition="*")))

    def _restore_compacted(self, partition: str) -> None:
        """Put back what a compaction replaced, from the DVC cache (the first step of rolling it back)."""
        kept = self.root / COMPACTED / partition
        pointers = sorted(kept.glob("*/partition=*.dvc"))
        for pointer in pointers:
            target = self.root / pointer.parent.name / pointer.name
            if not target.is_file():
                with atomic_file(target) as tmp:
                    tmp.write_bytes(pointer.read_bytes())
        folders = [(self.root / p.parent.name / p.name).with_suffix("") for p in pointers]
        if folders and not self.dvc.restore(folders):
            raise StorageError(f"the DVC cache has no copy of what {partition} replaced: it cannot be rolled back")
        if kept.exists():
            for pointer in pointers:
                pointer.unlink()

    def rollback(self, partition: str) -> dict[str, Any]:
        """Remove one enrichment partition: its rows, its index entries and its DVC record."""
        check_partition_id(partition)
        if partition == SEED_PARTITION:
            raise StorageError("the seed partition is a build output; rebuild with `dvc repro` instead of rolling it back")
        with self.lock:
            if partition not in committed_partitions(self.root):
                if owner := replaced_by(self.root).get(partition):
                    raise StorageError(f"'{partition}' was compacted into '{owner}': roll that back first (it restores '{partition}')")
                raise StorageError(f"no partition '{partition}' (see `enrich-rag graph partitions`)")
            deleted = self._rollback(partition, "rollback")
            # Nodes it introduced that a later partition also mentions are re-indexed under that one;
            # the repair also records the new index version with DVC.
            repair = self.reconcile(force_record=True)
        return {"partition": partition, "index_rows_deleted": deleted, "reindexed": repair.reindexed, "dvc": repair.recorded}

    def _intent(self, partition: str) -> Path:
        return self.root / ROLLBACK_INTENT.format(partition=check_partition_id(partition))

    def _rollback(self, partition: str, reason: str) -> int:
        """Record the intent, then remove; under the lock."""
        self._sync_index()
        with atomic_file(self._intent(partition)) as tmp:
            tmp.write_text(json.dumps({"rollback": partition, "reason": reason, "started": datetime.now(UTC).isoformat()}))
        return self._finish_rollback(partition)

    def _finish_rollback(self, partition: str) -> int:
        """Every step is safe to repeat, so a rollback cut short is finished by running it again. A
        compaction's rollback first restores what it replaced, so its rows stay (the replaced
        partitions' index rows were never changed and become theirs again)."""
        if partition.startswith(COMPACT_PREFIX) and partition in on_disk(self.root):
            self._restore_compacted(partition)
        if self.corpus and chunks_file(self.root, partition):
            self.corpus.mark_dirty()  # its documents come back or go: reconcile brings the corpus index along
        remove_partition(self.root, partition)
        ids = sorted(self.indexed_ids().get(partition, set()))
        if ids:
            self.index.delete(ids)
            self._save_index()
        if self.dvc.exists():
            for path in self._tracked([partition]):
                self.dvc.forget(path)
        self._intent(partition).unlink(missing_ok=True)
        return len(ids)

    def repair(self) -> dict[str, str]:
        """Damaged or lost partitions come back from the DVC cache when it has them; otherwise a damaged
        enrichment is rolled back and a lost one's records dropped (a damaged seed needs `dvc repro`).
        Returns what was done per partition."""
        actions: dict[str, str] = {}
        with self.lock:
            for partition in self.store.quarantined():
                if self.dvc.exists() and self.dvc.restore(self._tracked([partition])) and partition not in self.store.quarantined():
                    actions[partition] = "restored from the DVC cache"
                elif partition == SEED_PARTITION:
                    raise StorageError("the seed partition is damaged and the DVC cache cannot restore it: rebuild it with `dvc repro`")
                else:
                    self._rollback(partition, "damaged, no DVC copy")
                    actions[partition] = "removed with its index rows (no DVC copy)"
            for partition in self.unbacked_records():  # committed once (a record comes last), then lost on disk
                if self.dvc.exists() and self.dvc.restore(self._tracked([partition])):
                    actions[partition] = "missing on disk: restored from the DVC cache"
                else:
                    for path in self._tracked([partition]):
                        self.dvc.forget(path)
                    actions[partition] = "missing on disk, no DVC copy: its records dropped"
            if actions:
                self.reconcile(force_record=True)
                bump_version(self.root)  # partitions rewritten in place: readers look again
        return actions

    def pending_rollbacks(self) -> list[str]:
        return sorted(p.name[len(".rollback-") : -len(".json")] for p in self.root.glob(ROLLBACK_INTENT.format(partition="*")))

    def indexed_ids(self) -> dict[str, set[str]]:
        """Index row ids per enrichment partition. A compaction leaves the rows it took over as they were
        indexed (no text changes, so nothing is embedded again): they count as the compaction's."""
        rows = self.index.search("SELECT id, partition FROM txtai WHERE partition != 'seed'", limit=MAX_INDEX_IDS)
        owner = replaced_by(self.root)
        out: dict[str, set[str]] = {}
        for row in rows:
            out.setdefault(owner.get(row["partition"], row["partition"]), set()).add(row["id"])
        return out

    def reconcile(self, force_record: bool = False) -> Reconciliation:
        """Bring the index and DVC back in line with the committed partitions (run at every start)."""
        report = Reconciliation()
        with self.lock:
            # Before the index is opened: an interrupted save may have left it swapped out.
            saved = [self.index_path] + ([self.corpus.index.path] if self.corpus else [])
            recovered = [action for path in saved for action in recover(path)]
            report.removed_leftovers = recovered + remove_uncommitted(self.root) + self._remove_staged_pointers()
            self._sync_index()
            for partition in self.pending_compactions():
                self._finish_compaction(partition)
                report.finished_compactions.append(partition)
            for partition in self.pending_rollbacks():
                self._finish_rollback(partition)
                report.finished_rollbacks.append(partition)
            damaged = set(self.store.quarantined())  # left as they are for `repair`: never re-recorded over their good copy
            committed = set(committed_partitions(self.root))
            indexed = self.indexed_ids()
            dirty, upserted = False, set()
            for partition in sorted(committed - {SEED_PARTITION} - damaged):
                missing = [d for d in self.store.index_documents(partition) if d["id"] not in indexed.get(partition, set())]
                if missing:
                    self.index.upsert(missing)
                    report.reindexed[partition] = len(missing)
                    upserted |= {d["id"] for d in missing}
                    dirty = True
            for partition, ids in indexed.items():
                if partition not in committed and (orphans := ids - upserted):  # an upserted row is the new owner's
                    self.index.delete(sorted(orphans))
                    report.deindexed[partition] = len(orphans)
                    dirty = True
            if dirty:
                self._save_index()
            if self.corpus:
                report.corpus = self.corpus.reconcile()
            enrichments = sorted(committed - {SEED_PARTITION} - damaged)
            if self.dvc.exists() and enrichments:
                tracked = self._tracked(enrichments) + [self.index_path] + self._corpus_index()
                if force_record or dirty or not self.dvc.is_current(tracked):
                    report.recorded = self.dvc.record(tracked)
            elif self.dvc.exists() and (force_record or report.corpus):
                report.recorded = self.dvc.record([self.index_path] + self._corpus_index())
        return report

    def verify(self) -> list[str]:
        """What is inconsistent between partitions, index and DVC, one line each (empty: consistent)."""
        problems = []
        leftovers = [str(p) for p in self.root.rglob(".tmp-*")] + [str(p) for p in self.index_path.parent.glob(".tmp-*")]
        if leftovers:
            problems.append(f"leftovers: {leftovers[:2]}")
        damaged = self.store.quarantined()
        problems += [f"damaged partition {p}: {why} (run `enrich-rag graph repair`)" for p, why in damaged.items()]
        committed = committed_partitions(self.root)
        indexed = self.indexed_ids()
        for partition in committed:
            if partition == SEED_PARTITION or partition in damaged:
                continue
            expected = {d["id"] for d in self.store.index_documents(partition)}
            if indexed.get(partition, set()) != expected:
                problems.append(f"index rows of {partition}: {len(indexed.get(partition, set()))} != {len(expected)}")
        orphans = set(indexed) - set(committed)
        if orphans:
            problems.append(f"index rows of missing partitions {sorted(orphans)}")
        if self.corpus:
            problems += self.corpus.problems()
        tracked = self._tracked([p for p in committed if p != SEED_PARTITION and p not in damaged])
        if tracked and not self.dvc.is_current(tracked + [self.index_path] + self._corpus_index()):
            problems.append("dvc records stale")
        pending = self.pending_rollbacks()
        if pending:
            problems.append(f"rollbacks cut short: {pending} (`enrich-rag graph verify --repair` finishes removing them)")
        unbacked = self.unbacked_records()
        if unbacked:
            problems.append(
                f"dvc records of partitions not on disk: {unbacked} (`enrich-rag graph verify --repair` "
                "restores them from the DVC cache, or drops the records when it has no copy)"
            )
        return problems

    def unbacked_records(self) -> list[str]:
        """Partitions DVC records but the disk lacks, other than those a rollback is removing."""
        recorded = {p.name[len("partition=") : -len(".dvc")] for t in TABLES for p in (self.root / t).glob("partition=*.dvc")}
        return sorted(recorded - set(committed_partitions(self.root)) - set(self.pending_rollbacks()))

    def partitions(self) -> list[dict[str, Any]]:
        """Committed partitions with counts, documents added and removed, and how DVC versions each
        (seed: stage output); a partition with no rows of its own (a removal) is listed too."""
        counted = {row["partition"]: row for row in self.store.counts()["partitions"]}
        rows = []
        for partition in committed_partitions(self.root):
            row = counted.get(partition) or {"partition": partition, "nodes": 0, "edges": 0, "extractors": {}}
            if corpus := chunks_file(self.root, partition):
                row["chunks_added"] = pq.read_metadata(corpus).num_rows
                row["chunks_removed"] = len(partition_removes(corpus))
            if forgets := partition_forgets(partition_dir(self.root, "nodes", partition) / PART_FILE):
                row["facts_forgotten"] = len(forgets)
            row["dvc"] = (
                "stage output"
                if partition == SEED_PARTITION
                else ("dvc add" if self.dvc.is_tracked(partition_dir(self.root, "nodes", partition)) else "untracked")
            )
            rows.append(row)
        return rows
