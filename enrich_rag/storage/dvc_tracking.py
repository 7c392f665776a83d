"""Record data versions with DVC through its CLI (`dvc.api` has no add/commit).

Enrichment partitions are `dvc add`-ed one folder each; a path that is a stage output in dvc.yaml
(the graph index) is re-recorded with `dvc commit -f <stage>` instead, because DVC forbids
overlapping outputs. Lock contention with another DVC process is retried.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from enrich_rag.errors import StorageError

LOCK_RETRIES = 5
FORGET_BATCH = 300


def _dvc_executable() -> str:
    sibling = Path(sys.executable).with_name("dvc")
    return str(sibling) if sibling.exists() else (shutil.which("dvc") or "dvc")


class DvcRepo:
    def __init__(self, root: Path | str):
        self.root = Path(root).resolve()

    def exists(self) -> bool:
        return (self.root / ".dvc").is_dir()

    def run(self, *args: str) -> str:
        for attempt in range(LOCK_RETRIES):
            result = subprocess.run([_dvc_executable(), *args], cwd=self.root, capture_output=True, text=True)
            output = result.stdout + result.stderr
            if result.returncode == 0:
                return result.stdout
            if "Unable to acquire lock" not in output:
                break
            time.sleep(0.2 * 2**attempt)
        last = next((line for line in reversed(output.splitlines()) if line.strip()), "no output")
        raise StorageError(f"dvc {' '.join(args[:2])} failed in {self.root}: {last.strip()}")

    def init(self) -> None:
        """A real DVC repo; without git around it, `--no-scm`."""
        if self.exists():
            return
        args = ["init", "-q"] if (self.root / ".git").exists() else ["init", "--no-scm", "-q"]
        self.run(*args)

    def _stage_outputs(self) -> dict[Path, str]:
        dvc_yaml = self.root / "dvc.yaml"
        if not dvc_yaml.is_file():
            return {}
        stages = (yaml.safe_load(dvc_yaml.read_text()) or {}).get("stages", {})
        outs: dict[Path, str] = {}
        for name, stage in stages.items():
            for out in stage.get("outs", []) or []:
                path = next(iter(out)) if isinstance(out, dict) else out
                outs[(self.root / path).resolve()] = name
        return outs

    def record(self, paths: list[Path]) -> list[str]:
        """Version `paths`; returns the DVC commands run (for the trace)."""
        if not self.exists():
            raise StorageError(f"no DVC repository at {self.root} (run `dvc init`, or `dvc init --no-scm` without git)")
        stage_outs = self._stage_outputs()
        rel = [str(Path(p).resolve().relative_to(self.root)) for p in paths if Path(p).resolve() not in stage_outs]
        stages = sorted({stage_outs[Path(p).resolve()] for p in paths if Path(p).resolve() in stage_outs})
        done = []
        if rel:
            self.run("add", "-q", *rel)
            done.append("dvc add " + " ".join(rel))
        for stage in stages:
            self.run("commit", "-f", "-q", stage)
            done.append(f"dvc commit -f {stage}")
        return done

    def _target(self, path: Path) -> str:
        """What `dvc status` takes for a path: its stage if it is a stage output, else its .dvc file."""
        stage = self._stage_outputs().get(Path(path).resolve())
        return stage or str(Path(str(Path(path).resolve()) + ".dvc").relative_to(self.root))

    def is_current(self, paths: list[Path]) -> bool:
        """True when DVC's record of every path matches what is on disk (and each has a record)."""
        targets = []
        for path in paths:
            target = self._target(path)
            if not target.endswith(".dvc") or (self.root / target).is_file():
                targets.append(target)
            else:
                return False
        if not targets:
            return True
        return json.loads(self.run("status", "--json", *targets) or "{}") == {}

    def forget(self, path: Path) -> None:
        """Stop tracking an added folder (its .dvc file goes; the data is removed by the caller)."""
        self.forget_all([path])

    def forget_all(self, paths: list[Path]) -> None:
        """`forget` for many folders, a few hundred per `dvc remove` (a process each)."""
        pointers = [str(Path(f"{p}.dvc").resolve().relative_to(self.root)) for p in paths if Path(f"{p}.dvc").is_file()]
        for start in range(0, len(pointers), FORGET_BATCH):
            batch = pointers[start : start + FORGET_BATCH]
            for attempt in range(LOCK_RETRIES):
                try:
                    self.run("remove", *batch)
                    break
                except StorageError:
                    # A `dvc remove` of a writer killed mid-way (a rollback, a compaction) outlives it and
                    # removes some of these first; what is gone was meant to go, the rest is removed again.
                    batch = [p for p in batch if (self.root / p).is_file()]
                    if not batch:
                        break
                    if attempt == LOCK_RETRIES - 1:
                        raise
                    time.sleep(0.2 * 2**attempt)

    def restore(self, paths: list[Path]) -> bool:
        """Put the recorded version of `paths` back from DVC's cache; False when DVC has no copy."""
        targets = []
        for path in paths:
            target = self._target(path)
            if target.endswith(".dvc") and not (self.root / target).is_file():
                return False
            targets.append(target)
        try:
            self.run("checkout", "-f", "-q", *dict.fromkeys(targets))
        except StorageError:
            return False
        return True

    def is_tracked(self, path: Path) -> bool:
        return Path(str(path) + ".dvc").is_file()
