"""The walk of one question from `EnrichRAG.ask` to the reader, as it runs: the calls on the stack when the
reader is first asked, and every package function entered before then, with their files.

A reading of the source cannot follow `self.steps.answer(...)` to the method it calls (several classes
define `answer`), so the walk is taken from a real run: the test suite's five-document corpus, built by
the real offline stages of the checkout measured, asked one question with the suite's scripted reader (the
walk before the first reader call does not depend on what the reader says).

    python benchmarks/question_walk.py --root ../old-checkout     # prints the walk as JSON

Run as a script, so that the package imported is the checkout's (`house_metrics` runs it per checkout).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

QUESTION = "Who directed Inception?"


def walk(root: Path) -> dict[str, Any]:
    sys.path[:0] = [str(root), str(root / "tests")]
    import conftest  # the checkout's own test corpus and build
    from scripted_llm import ScriptedLLM

    from enrich_rag.api import EnrichRAG
    from enrich_rag.config import ExtractionConfig
    from enrich_rag.errors import EnrichRagError
    from enrich_rag.extract.spacy_extractor import SpacyExtractor, load_spacy

    config = conftest.small_config_at(Path(tempfile.mkdtemp()))
    conftest.build_small(config, SpacyExtractor(ExtractionConfig(), nlp=load_spacy(ExtractionConfig().spacy_model)))
    reader = ScriptedLLM([("Christopher Nolan", 1.2)])
    rag = EnrichRAG(config, llm=reader)
    package = str(root / "enrich_rag")
    stack: list[CodeType] = []
    entered: list[CodeType] = []
    at_reader: dict[str, list[CodeType]] = {}

    def profile(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        is_reader = code.co_name == "generate" and code.co_filename.endswith("scripted_llm.py")
        if not (code.co_filename.startswith(package) or is_reader):
            return
        if event == "call":
            stack.append(code)
            entered.append(code)
            if is_reader and not at_reader:
                at_reader["stack"], at_reader["entered"] = list(stack), list(entered)
        elif event == "return" and stack and stack[-1] is code:
            stack.pop()

    sys.setprofile(profile)
    try:
        try:
            rag.ask(QUESTION, enrich="never")
        except EnrichRagError:  # a checkout from before `enrich` took one type refuses "never" (QueryError): it took a bool
            rag.ask(QUESTION, enrich=False)  # type: ignore[call-overload]
    finally:
        sys.setprofile(None)
    chain = at_reader["stack"]
    chain = chain[max(i for i, c in enumerate(chain) if c.co_name == "ask") :]
    start = max(i for i, c in enumerate(at_reader["entered"]) if c.co_name == "ask")
    functions = {(c.co_filename, c.co_name, c.co_firstlineno) for c in at_reader["entered"][start:]}

    def name(code: CodeType) -> str:
        return f"{Path(code.co_filename).relative_to(root).as_posix()}:{code.co_name}"

    return {
        "question": QUESTION,
        "stack_at_first_reader_call": [name(c) for c in chain],
        "depth": len(chain),
        "functions_entered": len(functions),
        "files_entered": len({f for f, _, _ in functions}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    print(json.dumps(walk(args.root.resolve())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
