"""How soon `enrich-rag mcp` answers an MCP client: seconds from the server's start to its tool list,
and to its first `ask` answer, with the MCP SDK's own stdio client, on a built folder (the demo's by default).

    python -m benchmarks.first_hour_mcp --config workspaces/click-docs/config.yaml \\
        --out bench_results/first_hour_mcp.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from enrich_rag.storage.atomic import atomic_file

ROOT = Path(__file__).resolve().parents[1]
TOOLS_TARGET_S = 2.0  # clients give a server a few seconds to start


def _recorder(progress: list[str]):
    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    return on_progress


async def _session(config: Path, question: str, runs: int) -> list[dict[str, Any]]:
    from mcp import Client, StdioServerParameters

    command = shutil.which("enrich-rag") or str(Path(sys.executable).with_name("enrich-rag"))
    server = StdioServerParameters(command=command, args=["mcp", "--params", str(ROOT / "params.yaml"), "--config", str(config)])
    measured = []
    for _ in range(runs):
        progress: list[str] = []
        on_progress = _recorder(progress)
        start = time.perf_counter()
        async with Client(server, read_timeout_seconds=600) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            listed = time.perf_counter() - start
            result = await client.call_tool("ask", {"question": question}, progress_callback=on_progress)
            answered = time.perf_counter() - start
        answer = result.structured_content or {}
        measured.append(
            {
                "tools": tools,
                "tools_listed_s": round(listed, 2),
                "first_answer_s": round(answered, 2),
                "answer": answer.get("answer"),
                "quote": (answer.get("quote") or {}).get("text"),
                "said_loading": bool(progress) and progress[0].startswith("loading"),
            }
        )
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "workspaces/click-docs/config.yaml", help="a built workspace's overlay")
    parser.add_argument("--question", default="What is the minimum Bash version that Click's shell completion supports?")
    parser.add_argument("--runs", type=int, default=3, help="server starts (the first may read the files from disk)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench_results/first_hour_mcp.json")
    args = parser.parse_args()
    runs = anyio.run(_session, args.config, args.question, args.runs)
    listed = sorted(r["tools_listed_s"] for r in runs)
    result = {
        "config": str(args.config.relative_to(ROOT) if args.config.is_relative_to(ROOT) else args.config),
        "question": args.question,
        "runs": runs,
        "tools_listed_s_median": listed[len(listed) // 2],
        "tools_target_s": TOOLS_TARGET_S,
        "first_answer_s_median": sorted(r["first_answer_s"] for r in runs)[len(runs) // 2],
    }
    for i, r in enumerate(runs, 1):
        print(f"start {i}: tools listed {r['tools_listed_s']:.2f} s, first answer {r['first_answer_s']:.1f} s ({r['answer']!r})")
    with atomic_file(args.out) as tmp:
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
