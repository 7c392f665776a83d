"""Reading a bridge question a hop at a time against reading it at once, on the gold passages alone,
so the reader is all that differs. Tried for the 1.5B reader and not adopted (docs/guide.md).

"Where was the director of film X born?" becomes "Who is the director of film X?", then "Where was
<that person> born?" over the same context; kinship words of two hops ("paternal grandfather",
"mother-in-law") are spelled out as two relations first. The chained answer stands only when the
first hop's answer is written in the context and the second hop answers; otherwise the reader's own.

Every dev question that `parse_chain` takes apart is answered both ways over its gold passages, by the
project's reader as the baselines read (`read_answer`). The first `--tuned` questions of the file are
those whose answers were looked at while writing the parser (the reader's mistakes on them suggested
it); the rest are reported apart as held out. Held out in outcome only: the parser's patterns were
checked against the wording of every question of the file. Each part gets both EMs and the paired
difference with its 95% interval.

    python -m benchmarks hop_reading --config configs/2wiki.yaml --tuned 100   # -> bench_results/hop_reading_2wiki.json
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from benchmarks.eval_extraction import gold_passages
from enrich_rag.eval.methods import read_answer
from enrich_rag.eval.metrics import exact_match, token_f1
from enrich_rag.eval.runner import load_eval
from enrich_rag.eval.stats import bootstrap, compare
from enrich_rag.llm.base import LLM
from enrich_rag.llm.factory import make_llm
from enrich_rag.llm.models import model_name
from enrich_rag.llm.reader import read

ROLES = (
    "director",
    "composer",
    "performer",
    "author",
    "writer",
    "producer",
    "creator",
    "founder",
    "publisher",
    "father",
    "mother",
    "wife",
    "husband",
    "spouse",
)
# Two relations named by one word, as the second of the first: "paternal grandfather of X" is
# "the father of the father of X".
_KIN = {
    "paternal grandfather": ("father", "father"),
    "paternal grandmother": ("mother", "father"),
    "maternal grandfather": ("father", "mother"),
    "maternal grandmother": ("mother", "mother"),
    "father-in-law": ("father", "spouse"),
    "mother-in-law": ("mother", "spouse"),
}
_ROLE = "|".join(ROLES)
_KINDS = r"(?:(?:film|song|album|novel|book|play|series|show|band|magazine|company)\s+)?"
# What may follow a reference before the question ends: the second hop's verb.
# Lower case only: "Alien From L.A." is a title, "is from" a verb.
_TAIL = (
    r"(?=\s+(?:born|die|died|dies|study|studied|graduate|graduated|work|works|received|receive|earned|earn|is\s+from|from|come)\b"
    r"|'s\s|\s*\?*\s*$)"
)
_OF_START = re.compile(rf"\b(?i:the\s+(?:{_ROLE})\s+of)\s")
_OF_FORM = re.compile(rf"(?i:the\s+(?P<role>{_ROLE})\s+of)\s+(?P<x>(?i:{_KINDS}).+?){_TAIL}")
_POSSESSIVE = re.compile(rf"(?P<x>\S(?:.*?\S)?)\s?'s\s+(?P<role>{_ROLE})\b", re.IGNORECASE)
_NAME_PARTICLES = {"of", "de", "von", "van", "der", "da", "di", "la", "le", "du", "del", "the", "and", "y", "bin", "ibn"}


@dataclass(frozen=True)
class Chain:
    first: str  # the first hop's question: who the reference names
    second: str  # the question with the reference replaced by "{x}"

    def then(self, name: str) -> str:
        return self.second.format(x=name)


def _named(word: str) -> bool:
    return word[:1].isupper() or word[:1] in "(\"'0123456789" or word.lower() in _NAME_PARTICLES


def _name_like(text: str) -> bool:
    """Every word capitalised or a name particle: a title or a name, not a clause ("Off the Beaten Path, what artist")."""
    words = re.sub(rf"^(?i:{_KINDS})", "", text).split()
    return bool(words) and (words[0][:1].isupper() or words[0][:1] in "(\"'0123456789") and all(_named(w) for w in words)


def _name_before(text: str) -> str:
    """The name that ends `text`: the trailing run of capitalised words (with name particles inside)."""
    words = text.split()
    start = len(words)
    while start > 0 and _named(words[start - 1]):
        start -= 1
    while start < len(words) and words[start].lower() in _NAME_PARTICLES:  # "of Austria": the particle leads no name
        start += 1
    return " ".join(words[start:])


def _spelled_out(question: str) -> str:
    for kin, (outer, inner) in _KIN.items():
        question = re.sub(rf"\b{kin}\s+of\s+", f"{outer} of the {inner} of ", question, flags=re.IGNORECASE)
        question = re.sub(rf"'s\s+{kin}\b", f"'s {inner}'s {outer}", question, flags=re.IGNORECASE)
    return question


def parse_chain(question: str) -> Chain | None:
    """A question about something named through one relation of a named thing, or None."""
    text = _spelled_out(re.sub(r"\s+'s\b", "'s", " ".join(question.split())))
    # The innermost reference: a possessive ("the father of Empress Wang's husband": her husband first),
    # else the "of" form that starts last ("the spouse of the director of film X").
    possessive = _POSSESSIVE.search(text)
    starts = [s.start() for s in _OF_START.finditer(text) if s.start() > 0]
    if possessive and (name := _name_before(possessive["x"])):
        start, end = possessive.start("x") + len(possessive["x"]) - len(name), possessive.end()
        reference = f"the {possessive['role'].lower()} of {name}"
    elif starts and (m := _OF_FORM.match(text, starts[-1])) and _name_like(m["x"]):
        reference, start, end = f"the {m['role'].lower()} of {m['x']}", m.start(), m.end()
    else:
        return None
    rest = (text[:start] + "{x}" + text[end:]).strip()
    if re.fullmatch(r"(?i)who\s+(?:is|was)\s+\{x\}\s*\?*", rest):
        return None  # the whole question is the reference: one hop
    return Chain(f"Who is {reference.rstrip('?').strip()}?", rest)


@dataclass
class Chained:
    answer: str | None  # the second hop's answer, or None: the reader's own answer stands
    asked: dict[str, str] = field(default_factory=dict)  # sub-question -> the reader's reply

    def record(self) -> dict[str, Any]:
        return {"answer": self.answer, "asked": self.asked}


def _written_in(name: str, lines: list[str]) -> bool:
    words = " ".join(name.split()).casefold()
    return bool(words) and any(words in " ".join(line.split()).casefold() for line in lines)


def follow(llm: LLM, chain: Chain, lines: list[str], max_new_tokens: int) -> Chained:
    """Read the first hop, then the second over the same context with the first hop's answer in it."""
    bridge = read(llm, chain.first, lines, max_new_tokens).text.strip().rstrip(".")
    asked = {chain.first: bridge}
    if not _written_in(bridge, lines):
        return Chained(None, asked)
    second = chain.then(bridge)
    answer = read(llm, second, lines, max_new_tokens).text.strip()
    asked[second] = answer
    return Chained(answer or None, asked)


def scored(row: dict, method: str, answer: str, index: int, tuned: int) -> dict[str, Any]:
    golds = list(row["answers"])
    return {
        "id": row["id"],
        "method": method,
        "part": "tuned" if index < tuned else "held_out",
        "type": row.get("type", ""),
        "prediction": answer,
        "gold": golds,
        "em": exact_match(answer, golds),
        "f1": round(token_f1(answer, golds), 4),
    }


def summarise(rows: list[dict], part: str, seed: int) -> dict[str, Any]:
    mine = {m: [r for r in rows if r["method"] == m and (part == "all" or r["part"] == part)] for m in ("at_once", "by_hops")}
    if not mine["at_once"]:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(mine["at_once"])}
    for method, values in mine.items():
        em = bootstrap([r["em"] for r in values], seed=seed)
        out[method] = {"em": round(em.value, 4), "em_ci": em.to_list(), "f1": round(sum(r["f1"] for r in values) / len(values), 4)}
    out["by_hops - at_once"] = compare(mine["by_hops"], mine["at_once"], ("em", "f1"), seed=seed)
    out["changed"] = sum(1 for a, b in zip(mine["at_once"], mine["by_hops"]) if a["prediction"] != b["prediction"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/2wiki.yaml")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--tuned", type=int, default=100, help="the first N questions had their answers looked at while writing the parser")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions of the file (0: all)")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    config, ev = load_eval(args.params, args.config)
    questions = [json.loads(line) for line in Path(ev.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = questions[: args.limit] if args.limit else questions
    chosen = [(i, row, chain) for i, row in enumerate(questions) if (chain := parse_chain(row["question"])) and row.get("contexts")]
    llm, tokens = make_llm(config.llm), config.llm.max_new_tokens
    rows, reads = [], []
    for index, row, chain in tqdm(chosen, desc="hop reading", unit="question"):
        lines = [p.content for p in gold_passages([row])[0]]  # "title: text", as the oracle reads them
        at_once = read_answer(llm, row["question"], lines, tokens)
        chained = follow(llm, chain, lines, tokens)
        rows += [scored(row, "at_once", at_once, index, args.tuned), scored(row, "by_hops", chained.answer or at_once, index, args.tuned)]
        reads.append({"id": row["id"], "question": row["question"]} | chained.record())
    parts = {part: summarise(rows, part, ev.seed) for part in ("tuned", "held_out", "all")}
    result = {
        "dataset": ev.dataset,
        "reader": model_name(config.llm),
        "questions_in_file": len(questions),
        "taken_apart": len(chosen),
        "tuned_on_first": args.tuned,
        "parts": parts,
        "rows": rows,
        "reads": reads,
    }
    reader = model_name(config.llm)
    table = Table(title=f"{ev.dataset}: bridge questions over their gold passages, read at once vs a hop at a time ({reader})")
    for col in ("part", "n", "EM at once [95%]", "EM by hops [95%]", "paired diff [95%]", "McNemar p", "answers changed"):
        table.add_column(col, justify="right")
    for part, s in parts.items():
        if s["n"]:
            d = s["by_hops - at_once"]
            table.add_row(
                part,
                str(s["n"]),
                f"{s['at_once']['em']:.3f} {s['at_once']['em_ci']}",
                f"{s['by_hops']['em']:.3f} {s['by_hops']['em_ci']}",
                f"{d['em']:+.3f} {d['em_ci']}",
                str(d["em_mcnemar_p"]),
                str(s["changed"]),
            )
    Console().print(table)
    out = Path(args.out or f"bench_results/hop_reading_{ev.dataset}.json")
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"-> {out}")


if __name__ == "__main__":
    main()
