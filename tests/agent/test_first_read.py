"""The search's first read (`agent.first_read`) and the line an answer came from (`quote`), with a scripted
reader over a real small graph (DuckDB, txtai): the reader is scripted because these tests are about which
read the loop keeps, which a real model cannot be made to answer on demand."""

from __future__ import annotations

import dataclasses

from enrich_rag.evidence.lines import lines_of, near_question
from enrich_rag.evidence.quote import quote
from enrich_rag.storage.passages import Passage
from enrich_rag.storage.schema import Edge
from tests.agent.conftest import CHAIN, QUESTION, loop_agent, step_outputs

ASKED = "Where was Christopher Nolan born?"


def test_a_first_read_that_states_its_answer_is_the_answer(world, tmp_path, spacy_extractor):
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("London", 3.0)], first_read=5)
    answer = agent.answer(ASKED, enrich="never")
    assert answer.trace.step_names() == ["AnalyzeQuery", "GraphRank", "EnrichContext", "CheckSufficiency", "AnalyzeDecide"]
    context = step_outputs(answer, "EnrichContext")[0]
    assert context["selection"] == {"read": "search", "k": 5}  # `agent.first_read`, on every kind of corpus
    assert context["chunk_ids"] == [p.id for p in agent.retriever.retrieve(ASKED, 5)]  # what `EnrichRAG.search` returns
    assert len(resources.llm.prompts) == 1  # one reader call, though the perplexity is over the threshold
    assert answer.answer == "London"
    assert answer.quote is not None and answer.quote.text == "Nolan was born in London in 1970."
    assert answer.to_dict()["quote"]["chunk_id"] == answer.quote.chunk_id
    assert answer.quote.chunk_id in {c.chunk_id for c in answer.citations}


def test_an_unstated_first_read_gives_way_to_the_tree_that_states_its_answer(world, tmp_path, spacy_extractor):
    # "Paris" is in no passage: the tree's rounds read next, and their stated answer is kept
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 1.1), ("London", 5.0)], first_read=5)
    answer = agent.answer(ASKED, enrich="never")
    assert answer.trace.step_names()[:4] == ["AnalyzeQuery", "GraphRank", "EnrichContext", "CheckSufficiency"]
    assert answer.trace.step_names().count("CheckSufficiency") >= 2
    assert answer.trace.step_names().count("GraphRank") == 1  # the tree's round reuses the first read's search and ranking
    assert answer.answer == "London" and answer.quote is not None


def test_a_first_read_is_cut_to_the_passages_its_answer_has_time_for(world, tmp_path, spacy_extractor):
    """`agent.max_answer_s`: at the reader's pace (`Pace`, measured by a llama.cpp backend; set here, as the
    scripted reader times nothing) the first read keeps the search's top passages, in rank order, that fit
    the answer's seconds left, and always the first; with the time to read them all, it reads them all."""
    from enrich_rag.llm.base import Pace

    roomy, roomy_resources = loop_agent(world, tmp_path / "roomy", spacy_extractor, [("London", 3.0)], first_read=5)
    roomy_resources.llm.pace = Pace(prompt_char_s=1e-6, generated_token_s=0.0)
    all_five = step_outputs(roomy.answer(ASKED, enrich="never"), "EnrichContext")[0]
    assert all_five["selection"] == {"read": "search", "k": 5} and len(all_five["chunk_ids"]) == 5

    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("London", 3.0)], first_read=5, max_answer_s=1.0)
    resources.llm.pace = Pace(prompt_char_s=1 / 40, generated_token_s=0.0)  # 40 new prompt characters in the second
    answer = agent.answer(ASKED, enrich="never")
    context = step_outputs(answer, "EnrichContext")[0]
    assert context["selection"] == {"read": "search", "k": 5, "fits_in_time": 1}
    assert context["chunk_ids"] == all_five["chunk_ids"][:1]
    assert len(resources.llm.prompts) == 1 and [c.chunk_id for c in answer.citations] == context["chunk_ids"]


def test_a_later_read_forecast_past_the_answers_seconds_is_not_made(world, tmp_path, spacy_extractor):
    """After a read the question can answer with, a read whose new prompt characters at the reader's pace
    would end past `agent.max_answer_s` is not made: the best read answers, flagged. With the time, the tree
    reads on and its stated answer is kept (the test above)."""
    from enrich_rag.llm.base import Pace

    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Paris", 1.1), ("London", 5.0)], first_read=5, max_answer_s=1.0)
    resources.llm.pace = Pace(prompt_char_s=1 / 40, generated_token_s=0.0)  # the first read keeps one passage; no wider one fits
    answer = agent.answer(ASKED, enrich="never")
    assert len(resources.llm.prompts) == 1 and answer.answer == "Paris"
    assert answer.spent is not None and "s left for a read forecast at" in answer.spent


def test_the_default_first_read_is_the_searchs_first_passage_and_the_page_it_names_on_titled_passages(world, tmp_path, spacy_extractor):
    from enrich_rag.config import AgentConfig
    from enrich_rag.evidence.fusion import PAGES

    defaults = AgentConfig()
    agent, resources = loop_agent(
        world, tmp_path, spacy_extractor, [("London", 3.0)], first_read=defaults.first_read, first_read_named=defaults.first_read_named
    )
    context = step_outputs(agent.answer(ASKED, enrich="never"), "EnrichContext")[0]
    assert resources.corpus_kind != PAGES  # the Wikipedia-style world: the kind that read five before
    assert context["selection"] == {"read": "search", "k": 1, "named": 1}
    assert context["chunk_ids"][:1] == [p.id for p in agent.retriever.retrieve(ASKED, 1)] and len(context["chunk_ids"]) == 2


def test_the_first_read_reads_the_page_its_first_passage_names_with_it(world, tmp_path, spacy_extractor):
    """`agent.first_read_named`: a bridge question's first passage (Inception's, "Christopher Nolan directed
    Inception") names the page of its second hop, and the first read reads that page too; read alone, the
    first passage states only the first hop's entity."""
    alone, _ = loop_agent(world, tmp_path / "alone", spacy_extractor, [("Christopher Nolan", 3.0)], first_read=1, first_read_named=0)
    answer = alone.answer(QUESTION, enrich="never")
    context = step_outputs(answer, "EnrichContext")[0]
    assert context["selection"] == {"read": "search", "k": 1}
    assert answer.answer == "Christopher Nolan"  # the first hop, stated by what was read: the question would end here

    # the search follows the walk's heaviest named page; both of Inception's, so that the director's is read
    follows_two = dataclasses.replace(world, retrieval=dataclasses.replace(world.retrieval, follow_first_passages=2))
    agent, resources = loop_agent(follows_two, tmp_path, spacy_extractor, [("London", 3.0)], first_read=1, first_read_named=2)
    answer = agent.answer(QUESTION, enrich="never")
    context = step_outputs(answer, "EnrichContext")[0]
    assert context["selection"] == {"read": "search", "k": 1, "named": 2}
    first, named = resources.passages.by_ids(context["chunk_ids"][:1]), resources.passages.by_ids(context["chunk_ids"][1:])
    assert context["chunk_ids"][0] == agent.retriever.retrieve(QUESTION, 1)[0].id and first[0].title == "Inception"
    assert {p.title for p in named} == {"Christopher Nolan", "Leonardo DiCaprio"}  # the pages Inception's passage names
    assert len(resources.llm.prompts) == 1 and "Nolan was born in London" in resources.llm.prompts[0]
    assert answer.answer == "London" and answer.quote is not None and answer.quote.text == "Nolan was born in London in 1970."


def test_a_comparison_reads_no_named_page(world, tmp_path, spacy_extractor):
    """A comparison's answer is one of its sides: the page its first passage names is not read with it,
    though the search follows one."""
    from enrich_rag.evidence.query_analysis import COMPARISON, analyze_query

    compared = "Who is older, Leonardo DiCaprio or Christopher Nolan?"
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 3.0)], first_read=1, first_read_named=1)
    analysis = analyze_query(compared, resources.nlp, resources.store)
    hits = agent.retriever.search(compared)
    assert analysis.kind == COMPARISON and agent.retriever.followed(agent.retriever.rank(analysis, hits), hits)
    context = step_outputs(agent.answer(compared, enrich="never"), "EnrichContext")[0]
    assert context["selection"] == {"read": "search", "k": 1} and len(context["chunk_ids"]) == 1


def test_no_first_read_when_off(world, tmp_path, spacy_extractor):
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, [("London", 1.2)], first_read=0)
    answer = agent.answer(ASKED, enrich="never")
    assert "search" not in str(step_outputs(answer, "EnrichContext")[0].get("selection"))


def _passage(text: str) -> Passage:
    return Passage(id="c1", doc_id="d1", title="npm ci", text=text)


def test_lines_keep_list_items_and_code_whole_and_cut_prose_into_sentences():
    text = (
        "npm ci installs a project. It needs\na lockfile.\n\n"
        "* `--omit=dev` skips dev dependencies. Really,\n  it does.\n* The project **must** have a lockfile.\n\n"
        "```bash\n# .travis.yml\nnpm ci --ignore-scripts\n```\n    indented code line"
    )
    assert list(lines_of(text)) == [
        "npm ci installs a project.",
        "It needs a lockfile.",
        "* `--omit=dev` skips dev dependencies. Really, it does.",
        "* The project **must** have a lockfile.",
        "# .travis.yml",
        "npm ci --ignore-scripts",
        "indented code line",
    ]


def test_quote_prefers_the_line_that_shares_the_question_words():
    passage = _passage("The lockfile is package-lock.json.\n\nnpm ci needs package-lock.json or npm-shrinkwrap.json to install.")
    found = quote("package-lock.json", [passage], "Which file must npm ci have to install?")
    assert found is not None and found.text.startswith("npm ci needs") and found.chunk_id == "c1"


def test_no_quote_for_an_answer_no_line_states_nor_for_yes():
    passage = _passage("npm ci needs package-lock.json.")
    assert quote("yarn.lock", [passage], "Which file?") is None
    assert quote("yes", [passage], "Does npm ci need a lockfile?") is None
    assert quote("", [passage], "Which file?") is None


def test_a_fact_line_is_quoted_by_its_sentence():
    fact = Edge("npm ci", "needs", "package-lock.json", "npm ci needs package-lock.json.", "c9", "d9")
    found = quote("package-lock.json", [fact], "What does npm ci need?")
    assert found is not None and (found.text, found.chunk_id) == ("npm ci needs package-lock.json.", "c9")


def test_read_first_a_stated_first_read_needs_no_plan_and_no_bridge_check(world, tmp_path, spacy_extractor):
    """The default (`plan_when: unsure` with `first_read`): the question is read over the search's top
    passages before any Plan call; a read that states its answer is the answer, and no bridge check reads
    past it (on documentation it read on past right answers: bench_results/search_read_npm.json)."""
    options = {"hops": True, "plan_when": "unsure", "first_read": 3, "bridge_check": True}
    agent, resources = loop_agent(world, tmp_path, spacy_extractor, [("Christopher Nolan", 4.0)], **options)
    answer = agent.answer("Who is the director of Inception?", enrich="never")
    assert "Plan" not in answer.trace.step_names() and "Bridge" not in answer.trace.step_names()
    assert len(resources.llm.prompts) == 1 and answer.answer == "Christopher Nolan" and answer.quote is not None


def test_read_first_an_unstated_first_read_is_planned(world, tmp_path, spacy_extractor):
    options = {"hops": True, "plan_when": "unsure", "first_read": 3, "max_iterations": 1}
    script = [("Paris", 1.1), ("Paris", 1.1), (CHAIN, 2.0), ("Christopher Nolan", 1.1), ("London", 1.1)]
    agent, _ = loop_agent(world, tmp_path, spacy_extractor, script, **options)
    answer = agent.answer(QUESTION, enrich="never")
    tools = answer.trace.step_names()
    assert tools.index("Plan") > tools.index("CheckSufficiency")  # read first, planned after
    assert answer.answer == "London" and [h["answer"] for h in answer.chain] == ["Christopher Nolan", "London"]


def test_a_passage_is_cut_to_the_units_near_the_question_and_the_one_after_each():
    passage = _passage("npm ci needs a lockfile.\n\nThe weather is fine.\n\n* `--omit=dev`\n* skips dev dependencies.\n* unrelated item.")
    cut = near_question(passage, "What does --omit do?", 1)
    assert cut.text == "* `--omit=dev`\n* skips dev dependencies." and cut.title == passage.title
    assert near_question(passage, "What is the weather?", 0).text == "The weather is fine."
    assert near_question(passage, "Who won in 1970?", 1) == passage  # no unit shares a word: whole
    assert near_question(passage, "What does --omit do?", -1) == passage
