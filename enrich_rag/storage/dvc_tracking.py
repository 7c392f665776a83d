"""Record data versions with DVC through its CLI (`dvc.api` has no add/commit).

Enrichment partitions are `dvc add`-ed one folder each; a path that is a stage output in dvc.yaml
(the graph index) is re-recorded with `dvc commit -f <stage>` instead, because DVC forbids
overlapping outputs. Lock contention with another DVC process is retried.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

from enrich_rag.errors import StorageError

LOCK_RETRIES = 5
FORGET_BATCH = 300


DVCIGNORE = ".dvcignore"
# The project's own DVC calls send no usage report: by default each `dvc` command starts one more
# process (`dvc daemon analytics`) that reports it over the network: a private corpus should not, and
# it is one more process importing DVC beside every call. A user's own `dvc` keeps the user's setting.
NO_ANALYTICS = {"DVC_NO_ANALYTICS": "1"}
_TEMPLATE_LOCK = threading.Lock()


def _no_scm_template() -> Path:
    """A folder where `dvc init --no-scm` ran once, for this process's lifetime."""
    with _TEMPLATE_LOCK:
        return _init_once()


@functools.cache
def _init_once() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="enrich-rag-dvc-init-"))
    atexit.register(shutil.rmtree, folder, True)
    DvcRepo(folder).run("init", "--no-scm", "-q")
    return folder


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
            command = [_dvc_executable(), *args]
            result = subprocess.run(command, cwd=self.root, env=os.environ | NO_ANALYTICS, capture_output=True, text=True)
            output = result.stdout + result.stderr
            if result.returncode == 0:
                return result.stdout
            if "Unable to acquire lock" not in output:
                break
            time.sleep(0.2 * 2**attempt)
        last = next((line for line in reversed(output.splitlines()) if line.strip()), "no output")
        raise StorageError(f"dvc {' '.join(args[:2])} failed in {self.root}: {last.strip()}")

    def init(self) -> None:
        """A real DVC repo; without git around it, `--no-scm`: a copy of the files one `dvc init --no-scm`
        of this process wrote, which are the same for every folder (workspaces, sandboxes and copies each
        want their own repository, and each `dvc` process imports all of DVC)."""
        if self.exists():
            return
        if (self.root / ".git").exists():
            self.run("init", "-q")
            return
        template = _no_scm_template()
        self.root.mkdir(parents=True, exist_ok=True)
        shutil.copy2(template / DVCIGNORE, self.root / DVCIGNORE)
        staging = self.root / f".dvc.tmp-{os.getpid()}-{threading.get_ident()}"
        shutil.copytree(template / ".dvc", staging)
        try:
            os.rename(staging, self.root / ".dvc")  # all or nothing: a half-copied `.dvc` is never a repository
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if not self.exists():
                raise

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
