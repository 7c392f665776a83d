"""The peers benchmark's corpus (benchmarks/peers/sets.py), without the peers installed: what
LightRAG is handed must be the questions' own paragraphs, each once."""

import json
import logging

from benchmarks.peers.compare import side_by_side, table_lines, where_others_do_better
from benchmarks.peers.sets import (
    ROOT,
    checkpoint,
    corpus,
    documents,
    fold_interrupted,
    folder_path,
    gold_held,
    gold_in_read,
    gold_paragraphs,
    logged_run,
    paragraphs,
    questions,
    warnings_logged,
)
from enrich_rag.eval.datasets import QAItem


def test_each_question_is_one_document_of_its_titled_paragraphs_each_paragraph_once():
    first = QAItem("q1", "Who?", ("A",), contexts=(("Nolan", "Nolan directed Inception."), ("Paris", "Paris is in France.")))
    second = QAItem("q2", "Where?", ("B",), contexts=(("Paris", "Paris is in France."), ("Rome", "Rome is in Italy.")))
    alone = QAItem("q3", "Again?", ("C",), contexts=(("Nolan", "Nolan directed Inception."),))
    assert documents(paragraphs([first, second, alone])) == [
        ("q1", "Nolan\nNolan directed Inception.\n\nParis\nParis is in France."),
        ("q2", "Rome\nRome is in Italy."),
    ]


def test_each_paragraph_is_given_once_with_the_question_that_brought_it():
    first = QAItem("q1", "Who?", ("A",), contexts=(("Nolan", "Nolan directed Inception."), ("Paris", "Paris is in France.")))
    second = QAItem("q2", "Where?", ("B",), contexts=(("Paris", "Paris is in France."), ("Rome", "Rome is in Italy.")))
    assert paragraphs([first, second]) == [
        ("q1", "Nolan", "Nolan directed Inception."),
        ("q1", "Paris", "Paris is in France."),
        ("q2", "Rome", "Rome is in Italy."),
    ]


def test_a_documentation_folder_is_its_every_page_one_document_each_whatever_the_questions():
    asked = questions("npm", 3)
    assert [q.id for q in asked] == ["npm-0", "npm-1", "npm-2"] and asked[0].answers == ("package-lock.json",)
    pages = corpus("npm", asked)
    assert len(pages) == 20 and corpus("npm", asked[:1]) == pages
    assert [name for name, _ in documents(pages)][:2] == ["folders", "logging"]
    page = ROOT / "data" / "own_documents" / "npm-docs" / "docs" / "npm-ci.md"
    assert documents(pages)[2] == ("npm-ci", page.read_text(encoding="utf-8"))  # the page unchanged, untitled again


def _files(root, system, index, rows, n=2):
    (root / "bench_results").mkdir(exist_ok=True)
    (root / "bench_results" / f"peers_{system}_toy_{n}q_index.json").write_text(json.dumps({"system": system, "index": index}))
    (root / "bench_results" / f"peers_{system}_toy_{n}q_answer.json").write_text(json.dumps({"system": system, "answers": rows}))


def _index(seconds, prompt, generated):
    tokens = {"prefill_tokens": prompt, "cached_tokens": 0, "generated_tokens": generated}
    return {"seconds_all_runs": seconds, "runs": 1, "reader_calls_all_runs": 1 if prompt else 0, "reader_tokens_all_runs": tokens,
            "peak_rss_mb": 1, "bytes_on_disk": 1}  # fmt: skip


def _row(qid, mode, em):
    return {
        "id": qid,
        "mode": mode,
        "em": em,
        "f1": em,
        "contained": em,
        "seconds": 1.0,
        "reader_calls": 1,
        "tokens": {"prefill_tokens": 10},
        "answer": f"{mode} says {qid}",
        "gold": [f"gold {qid}"],
    }


def test_side_by_side_pairs_enrichrag_default_with_each_peer_mode_and_says_what_is_missing(tmp_path):
    _files(tmp_path, "enrichrag", _index(10.0, 0, 0), [_row("a", "default", 1.0), _row("b", "default", 1.0)])
    _files(tmp_path, "lightrag", _index(400.0, 900, 100), [_row("a", "mix", 1.0), _row("b", "mix", 0.0), _row("a", "naive", 0.0)])
    result = side_by_side(tmp_path, "toy", 2)
    assert result["summary"]["lightrag:mix"]["em"][0] == 0.5 and result["summary"]["enrichrag:default"]["n"] == 2
    assert result["paired"]["enrichrag:default - lightrag:mix"]["em"] == 0.5
    assert result["paired"]["enrichrag:default - lightrag:mix"]["contained"] == 0.5  # the gold answer inside it, paired too
    assert result["paired"]["enrichrag:default - lightrag:naive"]["n"] == 1  # only the question both answered
    assert result["paired"]["enrichrag:default - lightrag:mix"]["default_only"] == ["b"]
    assert result["paired"]["enrichrag:default - lightrag:naive"]["peer_only"] == []
    lightrag = result["systems"]["lightrag"]
    assert lightrag["index"]["reader_prompt_tokens"] == 900 and lightrag["index_seconds_over_enrichrag"] == 40.0
    assert lightrag["index_tokens_over_enrichrag"] is None  # EnrichRAG's index made no reader call: no finite ratio
    assert result["systems"]["minirag"]["missing"] == ["index", "answer"]
    page = "\n".join(table_lines(result, "`x`"))
    assert "| lightrag:mix | 0.500 [" in page and "| minirag |" in page and "| index, answer |" in page
    assert ", gold contained 0.500 [" in page
    assert "- enrichrag:default - lightrag:mix: EM 0.500 [" in page and "only with the default 1, only with the other 0)" in page


def test_what_a_peer_does_better_is_listed_with_its_numbers_and_the_answers_where_it_was_right(tmp_path):
    own = [_row("a", "default", 0.0), _row("b", "default", 1.0), _row("a", "oracle", 1.0), _row("b", "oracle", 1.0)]
    _files(tmp_path, "enrichrag", _index(10.0, 0, 0) | {"bytes_on_disk": 4000}, own)
    _files(tmp_path, "lightrag", _index(400.0, 900, 100) | {"bytes_on_disk": 700}, [_row("a", "mix", 1.0), _row("b", "mix", 1.0)])
    _files(tmp_path, "hipporag", _index(900.0, 900, 100) | {"bytes_on_disk": 9000}, [_row("a", "dense", 0.0), _row("b", "dense", 0.0)])
    better = where_others_do_better(side_by_side(tmp_path, "toy", 2))
    assert better == [
        "- lightrag:mix: EM 1.000 vs 0.500; gold contained 1.000 vs 0.500",
        "- lightrag: index bytes on disk 700 vs 4,000",
        "- lightrag:mix right where the default was not (a): 'mix says a', the default 'default says a' (gold 'gold a')",
    ]  # hipporag is worse on every count, and the oracle a ceiling, so neither is listed


def test_a_peer_missing_at_a_size_says_what_its_measured_smaller_index_projects(tmp_path):
    def chars(name, n):
        return {"toy": 1000, "docs": 500}[name] * n

    _files(tmp_path, "enrichrag", _index(10.0, 0, 0), [_row("a", "default", 1.0)], n=30)
    _files(tmp_path, "hipporag", _index(1800.0, 900, 100), [_row("a", "hipporag", 0.0)], n=5)
    _files(tmp_path, "hipporag", _index(90.0, 90, 10), [], n=1)
    _files(tmp_path, "hipporag", _index(1e6, 9, 9), [], n=60)  # a larger size says nothing about 30
    result = side_by_side(tmp_path, "toy", 30, chars)
    hippo = result["systems"]["hipporag"]
    assert hippo["missing"] == ["index", "answer"]
    assert hippo["not_run"] == (
        "toy 5q (5,000 characters) took 1,800 s to index: toy 30q (30,000 characters) would take about 3.0 h of this machine's 2 cores"
    )
    assert "not_run" not in result["systems"]["lightrag"]  # never indexed at any size: nothing measured to say
    assert "| index, answer (toy 5q (5,000 characters) took 1,800 s" in "\n".join(table_lines(result, "`x`"))
    other = side_by_side(tmp_path, "docs", 20, chars)["systems"]["hipporag"]["not_run"]
    assert other.startswith("toy 60q (60,000 characters)") and "docs 20q (10,000 characters)" in other  # its largest index
    # an index started at this size and not finished says what it has spent so far, before the projection
    work = folder_path("hipporag", "toy", 30, tmp_path)
    work.mkdir(parents=True)
    spent = {"seconds_this_run": 1200.0, "reader_calls_this_run": 40, "reader_tokens_this_run": {}, "interrupted": True}
    (work / "index_runs.jsonl").write_text(json.dumps(spent) + "\n")
    checkpoint(work, spent | {"seconds_this_run": 600.0, "reader_calls_this_run": 14})  # the run still going
    under_way = side_by_side(tmp_path, "toy", 30, chars)["systems"]["hipporag"]["not_run"]
    assert under_way == "index under way: 2 runs, 0.5 h and 54 reader calls so far; " + hippo["not_run"]


def test_the_warnings_a_peer_logs_while_it_works_are_counted_by_package_and_only_then():
    with warnings_logged(("lightrag", "hipporag")) as warned:
        logging.getLogger("lightrag").warning("chunk-000: Complete delimiter can not be found in extraction result")
        logging.getLogger("lightrag").error("chunk-001: LLM output format error; found 4/5 fields on RELATION")
        logging.getLogger("hipporag.information_extraction").warning("could not parse the triples")
        logging.getLogger("lightrag").info("saving the cache")  # not a warning
        logging.getLogger("elsewhere").warning("not a peer")
    logging.getLogger("lightrag").warning("after the run")
    assert warned == {"lightrag": 2, "hipporag": 1}


def test_the_oracle_row_reads_the_questions_gold_paragraphs_once_and_nothing_else():
    # What the reader answers is not asserted, what it was handed and counted is: the scripted reader, which
    # also keeps the prompt it was handed.
    from benchmarks.peers.enrichrag_run import gold_read
    from enrich_rag.eval.methods import CountingLLM
    from enrich_rag.ingest.sections import stable_doc_id
    from tests.scripted_llm import ScriptedLLM

    gold, distractor = ("Nolan", "Nolan directed Inception."), ("Paris", "Paris is in France.")
    item = QAItem("q1", "Who directed Inception?", ("Nolan",), contexts=(distractor, gold), gold_docs=(stable_doc_id(*gold),))
    scripted = ScriptedLLM([("Nolan", 1.1)])
    reader = CountingLLM(scripted)
    prediction = gold_read(reader, 8)(item)
    assert prediction.context == ["Nolan: Nolan directed Inception."] and prediction.docs == [stable_doc_id(*gold)]
    assert prediction.llm_calls == 1 == reader.calls and prediction.seconds > 0
    assert "Nolan directed Inception." in scripted.prompts[0] and "Paris is in France." not in scripted.prompts[0]


def test_an_index_run_killed_mid_way_is_still_counted_from_its_last_checkpoint(tmp_path):
    def run(seconds, prompt, peak):
        tokens = {"prefill_tokens": prompt, "cached_tokens": 0, "generated_tokens": 1}
        cpu = seconds / 2
        return {
            "seconds_this_run": seconds,
            "cpu_seconds_this_run": cpu,
            "reader_calls_this_run": 1,
            "reader_tokens_this_run": tokens,
            "peak_rss_mb": peak,
        }

    # a run checkpoints as it goes, and is killed after its second checkpoint
    checkpoint(tmp_path, run(30.0, 100, 900))
    checkpoint(tmp_path, run(60.0, 200, 1000))  # the run so far, not a second run
    # the next run folds that in as it starts, checkpoints as it goes, and finishes
    fold_interrupted(tmp_path)
    checkpoint(tmp_path, run(30.0, 100, 700))  # its own checkpoint is never counted beside its finished run
    total = logged_run(tmp_path, run(90.0, 300, 800))
    assert total["runs"] == 2 and total["seconds_all_runs"] == 150.0 and total["peak_rss_mb_all_runs"] == 1000
    assert total["cpu_seconds_all_runs"] == 75.0
    assert total["reader_tokens_all_runs"]["prefill_tokens"] == 500 and total["reader_calls_all_runs"] == 2
    logged = [json.loads(line) for line in (tmp_path / "index_runs.jsonl").read_text().splitlines()]
    assert [r.get("interrupted", False) for r in logged] == [True, False]
    assert list(tmp_path.iterdir()) == [tmp_path / "index_runs.jsonl"]  # no checkpoint or temp file left
    fold_interrupted(tmp_path)  # a finished run leaves nothing to fold
    assert logged_run(tmp_path, run(10.0, 0, 1))["runs"] == 3


def test_a_gold_paragraph_is_in_context_when_its_text_is_not_when_only_its_title_is():
    item = questions("hotpotqa", 1)[0]  # a real dev question: two gold paragraphs among ten
    gold = gold_paragraphs(item)
    assert len(gold) == 2 and len(item.contexts) == 10
    (title_a, text_a), (title_b, text_b) = gold
    distractor = next(f"{t}\n{x}" for t, x in item.contexts if (t, x) not in gold)
    # LightRAG hands its chunks as JSON lines (escaped line breaks and quotes), the paragraphs run together
    chunk = json.dumps({"content": f"{distractor}\n\n{title_a}\n{text_a}\n\n{title_b}\n{text_b}"}, ensure_ascii=False)
    assert gold_held(item, "---Context---\n" + chunk) == [title_a, title_b]
    assert gold_held(item, f"Entities: {title_a}; {title_b}\n{distractor}") == []  # named, never read
    words_b = text_b.split()
    cut = f"{title_a}\n{text_a.upper()}\n{' '.join(words_b[: len(words_b) // 4])}"  # a chunk edge cuts b early
    assert gold_held(item, cut) == [title_a]
    assert gold_held(item, " ".join(words_b[len(words_b) * 3 // 10 :])) == [title_b]  # b's last 70% is enough


def test_a_peers_reader_log_counts_each_call_and_keeps_what_it_was_handed():
    import asyncio

    from benchmarks.peers.callables import ReaderLog, reader_function
    from tests.scripted_llm import ScriptedLLM

    log = ReaderLog()
    llm = reader_function(ScriptedLLM([("Nolan", 1.1)]), log, lambda kwargs: "stream" in kwargs)
    turns = [{"role": "user", "content": "an example"}, {"role": "assistant", "content": "its reply"}]
    answer = asyncio.run(llm("Who directed Inception?", system_prompt="Nolan directed Inception.", history_messages=turns, stream=False))
    assert answer == "Nolan" and log.calls == 1
    assert log.prompts == ["Nolan directed Inception.\nan example\nits reply\nWho directed Inception?"]


def test_the_side_by_side_says_how_often_each_context_held_every_gold_paragraph(tmp_path):
    def held(row, found):
        return row | {"gold_in_context": found, "gold_paragraphs": 2}

    own = [held(_row("a", "default", 1.0), ["x", "y"]), held(_row("b", "default", 0.0), ["x"])]
    _files(tmp_path, "enrichrag", _index(10.0, 0, 0), own)
    peer = [held(_row("a", "mix", 1.0), ["x"]), held(_row("b", "mix", 0.0), ["x", "y"]), held(_row("c", "mix", 0.0), ["x", "y"])]
    _files(tmp_path, "lightrag", _index(400.0, 900, 100), peer + [_row("a", "naive", 0.0)])
    result = side_by_side(tmp_path, "toy", 2)
    assert result["summary"]["enrichrag:default"]["gold_all_in_context"] == 0.5
    assert result["summary"]["lightrag:mix"]["gold_all_in_context"] == round(2 / 3, 4)
    assert result["summary"]["lightrag:naive"]["gold_all_in_context"] is None  # a row that did not record it
    paired = result["paired"]["enrichrag:default - lightrag:mix"]
    assert paired["n"] == 2 and paired["gold_all"] == 0.0  # a: 1 vs 0, b: 0 vs 1
    assert "gold_all" not in result["paired"]["enrichrag:default - lightrag:naive"]
    page = "\n".join(table_lines(result, "`x`"))
    assert "| enrichrag:default | 0.500 [" in page and "] | 0.500 | 0.500 | 1.0 |" in page  # contained, then held
    assert "every gold paragraph in context 0.000 [" in page
    assert "- lightrag:mix: every gold paragraph in context 0.667 vs 0.500" in page


def test_enrichrags_read_holds_a_gold_paragraph_by_its_folder_name_or_its_stable_id():
    from enrich_rag.ingest.sections import stable_doc_id

    item = questions("hotpotqa", 1)[0]
    (title_a, text_a), (title_b, _) = gold_paragraphs(item)
    assert gold_in_read(item, [f"corpus.jsonl#{title_b}", "corpus.jsonl#Talk to the Press"]) == [title_b]  # the default's read
    assert gold_in_read(item, [stable_doc_id(title_a, text_a)]) == [title_a]  # the gold read's
    assert gold_in_read(item, ["corpus.jsonl#Talk to the Press"]) == []


def test_a_peers_changes_are_its_index_runs_then_what_only_its_answer_run_added_each_once(tmp_path):
    _files(tmp_path, "enrichrag", _index(10.0, 0, 0), [_row("a", "default", 1.0)], n=1)
    out = tmp_path / "bench_results"
    (out / "peers_hipporag_toy_1q_index.json").write_text(json.dumps({"index": _index(9.0, 9, 9), "changes": ["reader", "corpus"]}))
    answers = {"answers": [_row("a", "dense", 0.0)], "changes": ["reader", "corpus", "short answers"]}
    (out / "peers_hipporag_toy_1q_answer.json").write_text(json.dumps(answers))
    assert side_by_side(tmp_path, "toy", 1)["systems"]["hipporag"]["changes"] == ["reader", "corpus", "short answers"]
