"""`enrich-rag` command line. Human output goes to stderr through rich; `--json` prints JSON on stdout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import nullcontext, suppress
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from enrich_rag.config import Config, load_config
from enrich_rag.errors import EnrichRagError

EVIDENCE_CHARS = 240  # a passage citation is shown as its opening; --json has it whole

app = typer.Typer(help="EnrichRAG: local knowledge-graph RAG over your own documents.", no_args_is_help=True)
graph_app = typer.Typer(help="Inspect the knowledge graph.", no_args_is_help=True)
app.add_typer(graph_app, name="graph")
testset_app = typer.Typer(help="Synthetic test sets over your own corpus.", no_args_is_help=True)
app.add_typer(testset_app, name="testset")
console = Console(stderr=True)

ParamsOption = Annotated[Path, typer.Option("--params", help="params.yaml of the project")]
OverlayOption = Annotated[Path | None, typer.Option("--config", help="configs/<name>.yaml overlay")]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON on stdout")]


def _version(show: bool) -> None:
    if show:
        from importlib.metadata import version

        sys.stdout.write(f"enrich-rag {version('enrich-rag')}\n")
        raise typer.Exit()


@app.callback()
def main(
    show_version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="print the version and exit")] = False,
) -> None:
    """EnrichRAG: local knowledge-graph RAG over your own documents."""


def _config(params: Path, overlay: Path | None) -> Config:
    try:
        return load_config(params, overlay)
    except EnrichRagError as exc:
        _fail(exc)


def _fail(exc: Exception) -> NoReturn:
    # One line whatever the terminal's width (soft wrap), and the message printed as it is, not as markup.
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    console.print(Text.assemble(("error: ", "red"), message), soft_wrap=True)
    raise typer.Exit(1)


def _emit(data, as_json: bool, table: Table | None = None) -> None:
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    elif table is not None:
        Console().print(table)


@app.command()
def build(
    folder: Annotated[
        Path | None, typer.Argument(help="a folder of .txt .md .rst .html .docx .pdf .jsonl files: a corpus of its own")
    ] = None,
    params: ParamsOption = Path("params.yaml"),
    workspace: Path | None = typer.Option(None, "--workspace", help="where its build goes (default: workspaces/<folder name>)"),
    force: bool = typer.Option(False, help="re-run every stage"),
) -> None:
    """Build a folder of your documents into a workspace of its own; without a folder, the project's
    default build (`dvc repro summary`: chunks, corpus index, seed graph, graph index, summary; the
    evaluation stages run with `dvc repro evaluate@<dataset>`)."""
    if folder is not None:
        from enrich_rag.stages.folder import build_folder

        try:
            overlay = build_folder(folder, workspace, params, force=force)
        except EnrichRagError as exc:
            _fail(exc)
        console.print(
            f'built {folder} into {overlay.parent}\nask it:  enrich-rag query "your question" --config {overlay}'
            f"\nor serve it:  enrich-rag serve --config {overlay}"
        )
        return
    root = params.resolve().parent
    dvc = shutil.which("dvc") or str(Path(sys.executable).with_name("dvc"))
    if not (root / "dvc.yaml").is_file():
        _fail(EnrichRagError(f"no dvc.yaml next to {params}"))
    command = [dvc, "repro", "summary"] + (["--force"] if force else [])
    result = subprocess.run(command, cwd=root)
    raise typer.Exit(result.returncode)


@app.command()
def summary(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """What the last offline build wrote: passages, chunks, nodes, edges, partitions, index sizes."""
    from enrich_rag.stages.summary import build_summary, summary_table

    try:
        cfg = _config(params, config)
        with _open(cfg, reconcile=False) as rag:
            data = build_summary(cfg, rag.graph.stats())
    except EnrichRagError as exc:
        _fail(exc)
    _emit(data, as_json, summary_table(data))


def _kv_table(title: str, data: dict) -> Table:
    table = Table(title=title)
    table.add_column("what")
    table.add_column("value")
    for key, value in data.items():
        table.add_row(key, str(value))
    return table


def _open(cfg: Config, reconcile: bool = True):
    """The project through the front door (`EnrichRAG`): every command that reads the graph first
    finishes or undoes what a killed write left (or says it cannot)."""
    from enrich_rag.api import EnrichRAG

    rag = EnrichRAG(cfg, reconcile=reconcile)
    if rag.unreconciled:  # a data folder this user may read but not write; a broken graph is an error of its own
        console.print(
            f"[yellow]cannot reconcile the graph ({rag.unreconciled}); reading it as it is — "
            "`enrich-rag graph verify` says what is wrong[/yellow]"
        )
    elif rag.repaired and rag.repaired.changed:
        console.print(f"[yellow]repaired:[/yellow] {rag.repaired}")
    return rag


def _with_project(cfg: Config, action):
    """Run a command on the opened project; any EnrichRagError becomes one line and exit 1."""
    try:
        with _open(cfg) as rag:
            return action(rag)
    except EnrichRagError as exc:
        _fail(exc)


def _print_answer(answer, as_json: bool, streamed: bool = False) -> None:
    """`streamed`: the answer's text is already on the screen."""
    if as_json:
        _emit(answer.to_dict(), True)
        return
    out = Console()
    status = "[green]sure[/green]" if answer.sure else "[yellow]unsure[/yellow]"
    text = "" if streamed and answer.answer else f"[bold]{answer.answer or '(no answer)'}[/bold]  "
    measured = f"perplexity {answer.perplexity:.2f}"
    if answer.confidence is not None:
        measured = f"confidence: {answer.confidence:.2f}, {measured}"
    out.print(f"{text}{measured} ({status})")
    if answer.spent:
        out.print(f"[yellow]the best read so far: {escape(answer.spent)}[/yellow]")
    if answer.quote:
        out.print(f"[green]stated in {escape(answer.quote.doc_id)}:[/green] “{escape(answer.quote.text)}”")
    else:
        out.print("[yellow]no line of what was read states this answer[/yellow]")
    if answer.queued:
        queued = ", ".join(answer.queued)
        out.print(f"[cyan]Enrichment queued ({queued}): `enrich-rag enrich --pending` runs it; a server runs it when idle.[/cyan]")
    if not answer.sure:
        why = (
            f"confidence {answer.confidence:.2f}: this corpus's model gives it a {1 - answer.confidence:.0%} chance of being wrong"
            if answer.confidence is not None
            else f"the evidence read did not settle it: perplexity {answer.perplexity:.2f}, threshold {answer.threshold:.2f}"
        )
        out.print(f"[yellow]Not sure ({why}). Check the evidence below; --abstain answers nothing instead.[/yellow]")
    cites = Table(title="evidence")
    for column in ("#", "fact", "evidence", "chunk", "partition"):
        cites.add_column(column)
    for i, c in enumerate(answer.citations, 1):
        evidence = c.evidence if len(c.evidence) <= EVIDENCE_CHARS else c.evidence[:EVIDENCE_CHARS] + "…"
        cites.add_row(str(i), c.source, evidence, c.chunk_id, c.partition)
    out.print(cites)
    steps = Table(title=f"trace ({answer.trace.seconds:.2f}s)")
    for column in ("tool", "time", "outputs"):
        steps.add_column(column)
    for row in answer.trace.summary_rows():
        steps.add_row(*row)
    out.print(steps)


@app.command()
def query(
    question: Annotated[str, typer.Argument(help="the question")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    enrich: bool | None = typer.Option(
        None, "--enrich/--no-enrich", help="may write to the graph / never writes (default: agent.allow_enrich)", show_default=False
    ),
    abstain: bool | None = typer.Option(
        None, "--abstain/--guess", help="say 'not found' rather than guess when still unsure (default: agent.abstain)", show_default=False
    ),
    as_json: JsonOption = False,
    trace_file: Path | None = typer.Option(None, "--trace", help="save the full trace as JSON here"),
    server: str | None = typer.Option(None, "--server", help="ask this running server (default: the one serving this data, if up)"),
    local: bool = typer.Option(False, "--local", help="answer in this process even when a server is up"),
) -> None:
    """Answer a question with citations; enrich the graph when the evidence is not enough.

    When `enrich-rag serve` runs over the same data, the question goes to it (models already loaded)."""

    from enrich_rag.agent.answer import Answer, permitted
    from enrich_rag.evidence.query_analysis import validate_question
    from enrich_rag.serve import client

    cfg = _config(params, config)
    try:
        validate_question(question)  # before any index or model is loaded
        url = server or (None if local else client.find_server(cfg.paths.root))
        if url:
            token = client.read_token(cfg.paths.root)
            asked = client.ask(url, question, allow_enrich=enrich, token=token, timeout_s=cfg.serve.query_timeout_s + 5, abstain=abstain)
            reply = _followed(asked, live=not as_json)
            console.print(
                f"[dim]answered by the server at {url} (waited {reply['timing']['waited_s']:.1f} s, "
                f"ran {reply['timing']['ran_s']:.1f} s{'; read-only without its token' if reply.get('read_only') else ''})[/dim]"
            )
        else:
            with _open(cfg) as rag:
                reply = _followed(rag.ask(question, enrich=permitted(enrich, cfg.agent), abstain=abstain, stream=True), live=not as_json)
    except EnrichRagError as exc:
        _fail(exc)
    answer = Answer.from_dict(reply)
    if trace_file:
        trace_file.write_text(answer.trace.to_json(), encoding="utf-8")
    _print_answer(answer, as_json, streamed=True)


def _followed(events: Iterator[dict[str, Any]], live: bool) -> dict[str, Any]:
    """A streamed question shown as it runs: a line per finished step (stderr), then the answer (stdout).
    Returns the whole answer."""
    from enrich_rag.agent.stream import ANSWER, STEP

    with console.status("AnalyzeQuery…", spinner="dots") if live else nullcontext() as status:
        for event in events:
            if event["event"] == ANSWER:
                if live and status is not None:
                    status.stop()
                    sys.stdout.write((event["answer"]["answer"] or "") + "\n")
                    sys.stdout.flush()
                return event["answer"]
            if status is None:
                continue
            if event["event"] == STEP:
                line = Text.assemble(("✓ ", "green"), (event["tool"], "bold"), f" {event['seconds']:.2f}s  ", (event["summary"], "dim"))
                console.print(line)
                status.update(f"after {event['tool']}…")
    raise EnrichRagError("the question ended without an answer")


BUNDLED_DOCS = Path("data/own_documents/click-docs")  # under the project root: docs/ and questions.jsonl


@app.command()
def demo(
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    count: int = typer.Option(5, "--count", min=1, max=100, help="how many questions"),
    folder: Path | None = typer.Option(
        None, "--folder", help="a folder holding docs/ (the documents) and questions.jsonl (default: the bundled Click docs)"
    ),
    questions: Path | None = typer.Option(
        None, "--questions", help="normalised QA JSONL; without --folder, asked over the build of --params/--config"
    ),
    enrichment: bool = typer.Option(
        False, "--enrichment", help="instead: a question the seed graph gets wrong, answered before and after deep enrichment"
    ),
    as_json: JsonOption = False,
) -> None:
    """Build a small folder of documentation into a workspace and answer its first questions (written
    before any answer was seen): answer, the line it is stated in, seconds, reader calls."""
    import time

    from enrich_rag.eval.datasets import load_questions

    if enrichment:
        _enrichment_story(params, config, as_json)
        return
    start = time.perf_counter()
    built_s = None
    try:
        if folder is not None or questions is None:
            folder = folder or params.resolve().parent / BUNDLED_DOCS
            config = _built_folder(folder, params)
            questions = questions or folder / "questions.jsonl"
            built_s = time.perf_counter() - start
        cfg = _config(params, config)
        items = load_questions(questions, "normalized")[:count]
        rag = _open(cfg)
        rag.resources.warm(enrich=False)  # each question's seconds are then its own, not the models' loading
        rag.resources.warm_prompts()
        ready_s = time.perf_counter() - start
        rows = [_demo_row(rag, item, start) for item in items]
    except EnrichRagError as exc:
        _fail(exc)
    reader = rag.resources.llm.name
    rag.close()
    report = {
        "reader": reader,
        "config": str(config) if config else None,
        "built_s": built_s and round(built_s, 1),
        "ready_s": round(ready_s, 1),
        "questions": rows,
    }
    if as_json:
        _emit(report, True)
        return
    _print_demo(report, folder)


def _built_folder(folder: Path, params: Path) -> Path:
    """The folder's docs/ built (or brought up to date) in `workspaces/<folder name>`; its overlay."""
    from enrich_rag.stages.folder import WORKSPACES, build_folder

    if not (folder / "docs").is_dir():
        raise EnrichRagError(f"{folder}: no docs/ folder in it (the demo builds <folder>/docs and asks <folder>/questions.jsonl)")
    console.print(f"building {folder / 'docs'} (once; a rebuild skips what is up to date)")
    return build_folder(folder / "docs", WORKSPACES / folder.resolve().name, params)


def _demo_row(rag, item, start: float) -> dict[str, Any]:
    import time

    from enrich_rag.eval.metrics import exact_match

    asked = time.perf_counter()
    answer = rag.ask(item.question, enrich="never")
    done = time.perf_counter()
    return {
        "question": item.question,
        "answer": answer.answer,
        "gold": list(item.answers),
        "correct": bool(exact_match(answer.answer, list(item.answers))),
        "quote": answer.quote.to_dict() if answer.quote else None,
        "citations": [c.source for c in answer.citations],
        "chain": [f"{h['question']} -> {h['answer'] or '(none)'}" for h in answer.chain],
        "seconds": round(done - asked, 2),
        "answered_at_s": round(done - start, 1),  # since the demo started: its build and loading included
        "reader_calls": answer.trace.reader_calls(),
    }


def _print_demo(report: dict[str, Any], folder: Path | None) -> None:
    """One block per question: readable at 80 columns, where a table wraps each over six lines."""
    rows, out = report["questions"], Console()
    where = f"{folder / 'docs'}" if folder else "the project's build"
    out.print(f"[bold]{len(rows)} questions over {escape(where)}[/bold], reader {report['reader']}, no enrichment")
    built = f"built in {report['built_s']:.1f} s, " if report["built_s"] is not None else ""
    out.print(f"[dim]{built}models loaded and the reader's prompts cached {report['ready_s']:.1f} s after the start[/dim]")
    for i, r in enumerate(rows, 1):
        mark = "[green]✓[/green]" if r["correct"] else "[red]✗[/red]"
        out.print(f"\n{i}. {escape(r['question'])}")
        gold = escape(" / ".join(r["gold"]))
        calls = f"{r['reader_calls']} reader call{'s' * (r['reader_calls'] != 1)}"
        out.print(f"   {mark} {escape(r['answer'] or '(no answer)')}   [dim]gold: {gold}   {r['seconds']:.1f} s, {calls}[/dim]")
        if r["quote"]:
            out.print(f"   [dim]stated in {escape(r['quote']['doc_id'])}:[/dim] “{escape(r['quote']['text'])}”")
        if r["chain"]:  # a planned question's hops: how it got there, not where it read
            out.print(f"   [dim]hops: {escape('; '.join(r['chain']))}[/dim]")
        out.print(f"   [dim]cited: {escape('; '.join(r['citations']))}[/dim]")
    first = f"; the first answer {rows[0]['answered_at_s']:.0f} s after the start" if rows else ""
    out.print(f"\n{sum(r['correct'] for r in rows)} of {len(rows)} exactly right{first}")
    overlay = f" --config {report['config']}" if report["config"] else ""
    console.print(
        f'Ask it your own: [bold]enrich-rag query "your question"{overlay}[/bold]; your documents: [bold]enrich-rag build '
        f"YOUR_FOLDER[/bold]. Web page: [bold]enrich-rag serve{overlay}[/bold], then open http://127.0.0.1:8000"
    )


def _enrichment_story(params: Path, config: Path | None, as_json: bool) -> None:
    """The story is told on the build its question was picked from (its config overlay, beside params.yaml),
    unless --config says otherwise."""
    import tempfile

    from enrich_rag.eval.story import STORY_FILE, load_story, tell

    try:
        story = load_story(params.parent / STORY_FILE)
        cfg = _config(params, config or (params.parent / story["config"] if story.get("config") else None))
        console.print(
            f"[bold]{story['question']}[/bold] (gold: {' / '.join(story['answers'])}); on a copy of the build, yours is untouched"
        )
        with tempfile.TemporaryDirectory(prefix="enrich-rag-demo-") as tmp:
            told = tell(cfg, story, Path(tmp))
    except EnrichRagError as exc:
        _fail(exc)
    if as_json:
        _emit(told, True)
        return
    table = Table(title=f"{told['question']}  (gold: {' / '.join(told['gold'])})")
    for column in ("", "answer", "sure", "perplexity", "evidence cited"):
        table.add_column(column, overflow="fold")
    for label, v in (("seed graph", told["before"]), ("after deep enrichment", told["after"])):
        mark = "[green]✓[/green] " if v["correct"] else "[red]✗[/red] "
        table.add_row(
            label,
            mark + (v["answer"] or "(no answer)"),
            "yes" if v["sure"] else "no",
            f"{v['perplexity']:.2f}",
            "; ".join(v["citations"]),
        )
    facts = Table(title=f"extracted in {told['enrichment']['rounds']} round(s) from {', '.join(told['enrichment']['chunks']) or 'nothing'}")
    for column in ("subject", "relation", "object", "chunk", "extractor"):
        facts.add_column(column)
    for f in told["facts"]:
        facts.add_row(f["src_name"], f["relation"], f["dst_name"], f["chunk_id"], f["extractor"])
    Console().print(table)
    Console().print(facts)


@app.command()
def enrich(
    question: Annotated[str | None, typer.Argument(help="what the graph should learn about")] = None,
    pending: bool = typer.Option(False, "--pending", help="run the enrichments answers queued (oldest first), then stop"),
    limit: int = typer.Option(0, "--limit", min=0, help="with --pending: at most this many (0: all)"),
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run one EnrichGraph round for a question (new partition, upsert, DVC record), or the queued ones."""
    cfg = _config(params, config)
    if pending == (question is not None):
        _fail(EnrichRagError("give a question or --pending, not both and not neither"))
    if pending:
        ran = [j.to_dict() for j in _with_project(cfg, lambda rag: rag.enrich_pending(limit))]
        _emit(ran, as_json, _jobs_table(f"{len(ran)} queued enrichments run", ran))
        return
    result = _with_project(cfg, lambda rag: rag.enrich(str(question)))
    _emit(result.__dict__, as_json, _kv_table(f"enrichment: {result.partition or 'nothing new'}", result.__dict__))


def _jobs_table(title: str, jobs: list[dict[str, Any]]) -> Table:
    table = Table(title=title)
    for column in ("job", "state", "question", "partition", "new chunks", "error"):
        table.add_column(column, overflow="fold")
    for j in jobs:
        result = j.get("result") or {}
        table.add_row(j["id"], j["state"], j["question"], result.get("partition") or "", str(len(result.get("new_chunks", []))), j["error"])
    return table


@app.command()
def jobs(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """The enrichment queue: what answers queued (pending), what a worker is running, what ran (done, failed)."""
    cfg = _config(params, config)
    listed = [j.to_dict() for j in _with_project(cfg, lambda rag: rag.jobs())]
    _emit(listed, as_json, _jobs_table(f"{len(listed)} enrichment jobs", listed))


@app.command()
def add(
    paths: Annotated[
        list[Path],
        typer.Argument(help="files (.txt .md .rst .html .docx .pdf, .jsonl of {id,title,text}) or folders; - reads stdin"),
    ],
    title: str = typer.Option("", "--title", help="with -: the document's title (default: its first # heading or line)"),
    doc_id: str = typer.Option("", "--id", help="with -: the document's id (default: the text's hash); an id given again replaces it"),
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add new or changed documents to the built corpus and graph (no rebuild; unchanged ones are skipped)."""
    cfg = _config(params, config)
    if Path("-") in paths:
        if len(paths) > 1:
            _fail(EnrichRagError("- (text from stdin) is added on its own, not beside files"))
        text = sys.stdin.read()
        result = _with_project(cfg, lambda rag: rag.add_text(text, doc_id, title)).record()
    elif title or doc_id:
        _fail(EnrichRagError("--title and --id name a document read from stdin (add -); files are named by their path"))
    else:
        result = _with_project(cfg, lambda rag: rag.add(*paths)).record()
    _emit(result, as_json, _kv_table(f"added: {result['partition'] or 'nothing new'}", result))


@app.command()
def docs(
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    removed: bool = typer.Option(False, "--removed", help="also list removed documents"),
    as_json: JsonOption = False,
) -> None:
    """The corpus's documents: id (what `remove` takes), title, live chunks, built or added (and when)."""
    cfg = _config(params, config)
    entries = [d.record() for d in _with_project(cfg, lambda rag: rag.documents()) if removed or d.status != "removed"]
    table = Table(title=f"{len(entries)} documents")
    for column in ("id", "title", "chunks", "status", "origin"):
        table.add_column(column, overflow="fold")
    for d in entries:
        table.add_row(d["doc_id"], d["title"], str(d["chunks"]), d["status"], d["origin"])
    _emit(entries, as_json, table)


@app.command()
def search(
    query_text: Annotated[str, typer.Argument(metavar="QUERY", help="what to search for")],
    k: int = typer.Option(5, "-k", min=1, max=100, help="how many passages"),
    no_graph: bool = typer.Option(False, "--no-graph", help="the hybrid search alone (no GraphRank re-ranking)"),
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Passages with scores, no reader: for bringing your own model (or checking what the reader is offered)."""
    cfg = _config(params, config)
    found = [p.to_row() | {"score": round(p.score, 4)} for p in _with_project(cfg, lambda rag: rag.search(query_text, k, not no_graph))]
    table = Table(title=f"{len(found)} passages")
    for column in ("score", "chunk", "title", "text"):
        table.add_column(column, overflow="fold")
    for p in found:
        text = p["text"] if len(p["text"]) <= EVIDENCE_CHARS else p["text"][:EVIDENCE_CHARS] + "…"
        table.add_row(f"{p['score']:.3f}", p["chunk_id"], p["title"], text)
    _emit(found, as_json, table)


@app.command()
def remove(
    doc_ids: Annotated[list[str], typer.Argument(help="document ids (as `enrich-rag add` printed them, or the build's)")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove documents: their passages, facts and links are no longer read or cited (`graph rollback` undoes it)."""
    cfg = _config(params, config)
    result = _with_project(cfg, lambda rag: rag.remove(*doc_ids)).record()
    _emit(result, as_json, _kv_table(f"removed: {result['partition']}", result))


@graph_app.command("rollback")
def graph_rollback(
    partition: Annotated[str, typer.Argument(help="an enrich-* partition id, or a compact-* one (restores what it merged)")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove an enrichment partition, its index entries and its DVC record; a compaction is undone instead."""
    cfg = _config(params, config)
    result = _with_project(cfg, lambda rag: rag.graph.rollback(partition))
    _emit(result, as_json, _kv_table(f"rolled back {partition}", result))


@graph_app.command("learned")
def graph_learned(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """List the facts the loop learned from grounded reads (a later question asking one is answered from it)."""
    cfg = _config(params, config)
    rows = _with_project(cfg, lambda rag: rag.graph.learned())
    table = Table(title=f"{len(rows)} learned facts")
    for column in ("id", "question", "answer", "chunk", "confidence", "partition"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["question"], row["answer"], row["chunk_id"], f"{row['confidence']:.2f}", row["partition"])
    _emit(rows, as_json, table)


@graph_app.command("forget")
def graph_forget(
    fact_ids: Annotated[list[str], typer.Argument(help="fact ids (`enrich-rag graph learned` lists them)")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Hide facts from every later question; `graph rollback` of the forget partition brings them back."""
    cfg = _config(params, config)
    result = _with_project(cfg, lambda rag: rag.graph.forget(*fact_ids))
    _emit(result, as_json, _kv_table(f"forgotten in {result['partition']}", result))


@graph_app.command("compact")
def graph_compact(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """Merge the enrichment partitions into one (same rows; `graph rollback` of it restores them)."""
    cfg = _config(params, config)
    result = _with_project(cfg, lambda rag: rag.graph.compact()) or {}
    title = f"compacted into {result['partition']}" if result else "fewer than two enrichment partitions: nothing to compact"
    _emit(result, as_json, _kv_table(title, result))


@graph_app.command("repair")
def graph_repair(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """Restore damaged partitions from the DVC cache, or remove them with their index rows if it has no copy."""
    cfg = _config(params, config)
    actions = _with_project(cfg, lambda rag: rag.graph.repair())
    _emit(actions, as_json, _kv_table("repaired" if actions else "nothing to repair", actions))


@graph_app.command("verify")
def graph_verify(
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    repair: bool = typer.Option(False, "--repair", help="reconcile and repair, then check again"),
    as_json: JsonOption = False,
) -> None:
    """Check partitions, index and DVC records agree; one line per finding; exit 0 only when consistent."""
    cfg = _config(params, config)
    try:
        graph = _open(cfg, reconcile=False).graph  # the graph as it is: verify must see what a killed write left
        found = graph.verify()
        done: dict = {}
        if repair and found:
            done = {"reconciled": str(graph.reconcile()), "repaired": graph.repair()}
            found = graph.verify()
    except EnrichRagError as exc:
        _fail(exc)
    if as_json:
        _emit({"consistent": not found, "findings": found} | done, True)
    else:
        for key, value in done.items():
            console.print(f"{key}: {value}")
        for line in found:
            console.print(f"[red]inconsistent:[/red] {line}")
        if not found:
            console.print("[green]consistent[/green]: partitions, graph index and DVC records agree")
    raise typer.Exit(1 if found else 0)


@graph_app.command("export")
def graph_export(
    out: Annotated[Path, typer.Argument(help="the GraphML file to write")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    upto: str | None = typer.Option(None, "--upto", help="the version ending at this partition (default: the graph now)"),
    answer: Path | None = typer.Option(None, "--answer", help="an answer saved with `query --json`: export its evidence subgraph"),
) -> None:
    """Write the graph (or a version of it, or one answer's evidence subgraph) as GraphML for networkx, Gephi, Cytoscape."""
    from enrich_rag.storage.export import subgraph_to_networkx, write_graphml

    cfg = _config(params, config)
    try:
        if answer is not None:
            try:
                graph = subgraph_to_networkx(json.loads(answer.read_text(encoding="utf-8"))["subgraph"])
            except (OSError, ValueError, KeyError) as exc:
                raise EnrichRagError(f"{answer}: not an answer saved with `enrich-rag query --json` ({exc})") from None
        else:
            with _open(cfg) as rag:
                graph = rag.graph.networkx(upto)
        write_graphml(graph, out)
    except EnrichRagError as exc:
        _fail(exc)
    console.print(f"wrote {out}: {graph.number_of_nodes():,} nodes, {graph.number_of_edges():,} edges")


@graph_app.command("stats")
def graph_stats(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """Node and edge counts, per partition."""
    cfg = _config(params, config)
    counts = _with_project(cfg, lambda rag: rag.graph.stats())
    table = Table(title=f"graph: {counts['nodes']:,} nodes, {counts['edges']:,} edges")
    for column in ("partition", "nodes", "edges"):
        table.add_column(column, justify="right" if column != "partition" else "left")
    for row in counts["partitions"]:
        table.add_row(row["partition"], f"{row['nodes']:,}", f"{row['edges']:,}")
    _emit(counts, as_json, table)


@graph_app.command("partitions")
def graph_partitions(params: ParamsOption = Path("params.yaml"), config: OverlayOption = None, as_json: JsonOption = False) -> None:
    """List committed partitions (seed first, then enrichments, additions, removals) and their DVC records."""
    cfg = _config(params, config)
    rows = _with_project(cfg, lambda rag: rag.graph.partitions())
    table = Table(title="graph partitions")
    for column in ("partition", "nodes", "edges", "facts by extractor", "chunks added / removed", "dvc"):
        table.add_column(column)
    for row in rows:
        by = ", ".join(f"{name} {n:,}" for name, n in row.get("extractors", {}).items())
        corpus = f"{row['chunks_added']:,} / {row['chunks_removed']:,}" if "chunks_added" in row else ""
        table.add_row(row["partition"], f"{row['nodes']:,}", f"{row['edges']:,}", by, corpus, row["dvc"])
    _emit(rows, as_json, table)


@graph_app.command("show")
def graph_show(
    entity: Annotated[str, typer.Argument(help="entity name (case and punctuation do not matter)")],
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    limit: int = typer.Option(20, help="edges to show"),
    as_json: JsonOption = False,
) -> None:
    """An entity, its description and its strongest 1-hop edges with their evidence."""
    cfg = _config(params, config)
    try:
        with _open(cfg) as rag:
            matches = rag.graph.find(entity)
            if not matches:
                raise EnrichRagError(f"no entity matching '{entity}'")
            node = matches[0]
            edges = rag.graph.neighbors(node["id"], limit=limit)
    except EnrichRagError as exc:
        _fail(exc)
    table = Table(title=f"{node['name']} ({node['type']}): {node['description']}", show_lines=False)
    for column in ("subject", "relation", "object", "chunk", "conf"):
        table.add_column(column)
    for e in edges:
        table.add_row(e["src_name"], e["relation"], e["dst_name"], e["chunk_id"], f"{e['confidence']:.2f}")
    _emit({"node": node, "edges": edges}, as_json, table)


@app.command("serve")
def serve(
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    workspace: Annotated[
        list[str] | None,
        typer.Option(help="a built folder to serve, NAME=PATH (repeatable: one server, one reader, each at /w/NAME/)"),
    ] = None,
    host: Annotated[str, typer.Option(help="bind address; loopback by default")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8000,
    allowed_host: Annotated[list[str] | None, typer.Option(help="another Host name clients use (repeatable)")] = None,
    processes: Annotated[int, typer.Option(min=1, max=64, help="worker processes (they share the graph store and model weights)")] = 1,
) -> None:
    """HTTP API and web page: ask questions, see passages, subgraph and trace (needs the `serve` extra).
    With --workspace, several built folders at once: the page picks one, the API takes /w/NAME/api/...,
    the OpenAI endpoint lists each as model `enrich-rag/NAME`; the first also answers /api/...."""
    try:
        import uvicorn

        from enrich_rag.serve.access import TOKEN_FILE, is_loopback, load_or_create_token
        from enrich_rag.serve.app import SERVE_ENV, WORKSPACE_PREFIX, served_app, warm_server
        from enrich_rag.serve.client import advertise, withdraw
    except ImportError:
        _fail(EnrichRagError("the web service needs FastAPI and uvicorn: pip install 'enrich-rag[serve]'"))
    from enrich_rag.stages.folder import served_workspaces

    try:
        overlays: dict[str, Path | None] = dict(served_workspaces(workspace)) if workspace else {"default": config}
    except EnrichRagError as exc:
        _fail(exc)
    cfg = _config(params, next(iter(overlays.values())))
    target: Any
    if processes == 1:
        try:
            target = served_app(params, overlays, host, allowed_hosts=tuple(allowed_host or ()))
        except EnrichRagError as exc:
            _fail(exc)
        with console.status("loading the indexes and models (once, before the first question)"):
            warm_server(target, enrich=cfg.agent.allow_enrich)
        tokens = [(n, s.token_path, s.token_created) for n, s in target.state.servers.items()]
    else:  # each worker opens and warms its own app (`app_from_environment`); the tokens are made here, once
        tokens = []
        for name, overlay in overlays.items():
            token_path = Path(_config(params, overlay).paths.root) / TOKEN_FILE
            tokens.append((name, token_path, load_or_create_token(token_path)[1]))
        spec = {"params": str(params), "workspaces": {n: str(o) if o else None for n, o in overlays.items()}}
        os.environ[SERVE_ENV] = json.dumps(spec | {"host": host, "allowed_hosts": list(allowed_host or ())})
        target = "enrich_rag.serve.app:app_from_environment"
        console.print(f"{processes} worker processes load the indexes and models before they take questions")
    url = f"http://{host if is_loopback(host) or host not in ('0.0.0.0', '::') else '127.0.0.1'}:{port}"
    console.print(f"EnrichRAG on {url}  (OpenAPI: /docs; health: /api/health)")
    for name, token_path, created in tokens:
        where = f"workspace {name}: " if workspace else ""
        page = f"{url}/#workspace={name}&token=" if workspace else f"{url}/#token="
        if created:
            token = token_path.read_text(encoding="utf-8").strip()
            console.print(
                f"{where}write token (shown once; kept in {token_path}, readable by you only): {token}\n"
                f"open {page}{token} to let the page enrich, roll back and save settings"
            )
        else:
            console.print(f"{where}writes (enrichment, rollback, settings) need the token in {token_path}")
    if not is_loopback(host):
        console.print(f"[yellow]bound to {host}: reachable from the network; every API call needs the token[/yellow]")
    # `enrich-rag query` on a served folder asks this server (`serve/client.py`): each workspace at its own path.
    roots = {Path(t[1]).parent: f"{url}{WORKSPACE_PREFIX}{t[0]}" if workspace else url for t in tokens}
    for root, address in roots.items():
        advertise(root, address)
    try:
        # Connections beyond the queue are refused at once by uvicorn too, never left to pile up.
        uvicorn.run(
            target,
            host=host,
            port=port,
            log_level="warning",
            limit_concurrency=cfg.serve.queue_size + cfg.serve.workers + 8,
            workers=processes if processes > 1 else None,
            factory=processes > 1,
        )
    finally:
        for root in roots:
            withdraw(root)


@app.command()
def mcp(
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    workspace: Annotated[
        list[str] | None, typer.Option(help="a built folder to serve, NAME=PATH (repeatable: each tool then takes `workspace`)")
    ] = None,
    enrich: bool = typer.Option(False, "--enrich", help="let `ask` write to the graph when the evidence is not enough"),
) -> None:
    """A Model Context Protocol server on stdio: `ask`, `search`, `add_text`, `list_documents` (needs the `mcp` extra).

    For an agent's MCP settings: {"command": "enrich-rag", "args": ["mcp", "--params", "/path/to/params.yaml"]}."""
    try:
        import mcp.server.mcpserver  # noqa: F401  (the extra is installed)

        from enrich_rag.serve.mcp_server import Opening, serve_stdio
    except ImportError:
        _fail(EnrichRagError("the MCP server needs the mcp SDK: pip install 'enrich-rag[mcp]'"))
    from enrich_rag.stages.folder import served_workspaces

    try:
        overlays: dict[str, Path | None] = dict(served_workspaces(workspace)) if workspace else {"default": config}
    except EnrichRagError as exc:
        _fail(exc)

    def open_projects() -> dict[str, Any]:  # an EnrichRAG each: its overloaded `ask` is the protocol's
        from enrich_rag.api import open_workspaces  # on the opening thread: the models' libraries load there

        return dict(open_workspaces(params, overlays))

    opening = Opening(open_projects)  # the tools are listed while the projects open
    try:
        serve_stdio(opening, enrich, tuple(overlays) if workspace else ())
    finally:
        for project in opening.projects():
            with suppress(EnrichRagError):
                project.close()


@app.command("eval")
def evaluate(
    config: Annotated[Path, typer.Option("--config", help="configs/<dataset>.yaml")],
    params: ParamsOption = Path("params.yaml"),
    limit: Annotated[int, typer.Option(help="only the first N sampled questions (a smoke run)")] = 0,
    methods: Annotated[
        list[str] | None, typer.Option("--methods", help="run only these of the config's methods now (repeat, or comma-separated)")
    ] = None,
    wide: Annotated[bool, typer.Option("--wide", help="every column on the console (the default fits 80 columns)")] = False,
) -> None:
    """Methods x metrics on one benchmark (`python run_evaluation.py` takes the same flags). An
    interrupted run keeps its finished answers; the same command resumes it."""
    from enrich_rag.eval.runner import run_evaluation

    only = tuple(m for value in methods or () for m in value.split(",") if m)
    try:
        run_evaluation(params, config, limit, only=only, wide=wide)
    except EnrichRagError as exc:
        _fail(exc)
    except KeyboardInterrupt:
        console.print("interrupted: finished answers are saved; rerun the same command to resume")
        raise typer.Exit(130) from None


@testset_app.command("generate")
def testset_generate(
    n: Annotated[int | None, typer.Option("--n", min=1, help="questions to keep (default: testset.n)")] = None,
    multi_hop: Annotated[float | None, typer.Option("--multi-hop", min=0.0, max=1.0, help="share of two-passage questions")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="JSONL to write (default: testset.out)")] = None,
    params: ParamsOption = Path("params.yaml"),
    config: OverlayOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write questions from the graph's facts with the configured LLM, keep those that pass every filter."""
    from enrich_rag.eval.testset.generate import generate_testset
    from enrich_rag.llm.factory import make_llm

    cfg = _config(params, config)
    try:
        path, report = generate_testset(cfg, make_llm(cfg.llm), out, n=n, multi_hop=multi_hop)
    except EnrichRagError as exc:
        _fail(exc)
    if as_json:
        _emit(report, True)
        return
    table = Table(title=f"{report['total']} questions -> {path} (multi-hop share {report['multi_hop_share']})")
    for column in ("type", "filter", "checked", "rejected", "passed"):
        table.add_column(column, justify="left" if column in ("type", "filter") else "right")
    for kind, rows in report["filters"].items():
        for name, row in rows.items():
            table.add_row(kind, name, str(row["checked"]), str(row["rejected"]), f"{row['passed_share']}")
        table.add_row(kind, "[bold]kept[/bold]", "", "", f"{report['kept'].get(kind, 0)} of {report['requested'][kind]}")
    Console().print(table)
    examples = Table(title="sampled questions")
    for column in ("type", "question", "answer"):
        examples.add_column(column)
    for item in report["examples"]:
        examples.add_row(item["type"], item["question"], item["answers"][0])
    Console().print(examples)


if __name__ == "__main__":
    app()
