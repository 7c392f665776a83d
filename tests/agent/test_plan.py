"""Reading the planner's reply: what is a plan, and what falls back to the question as one hop (and why)."""

from enrich_rag.agent.plan import CHAIN, ONE_HOP, PARALLEL, parse_plan

QUESTION = "Where did the director of Passport to Rio die?"


def test_a_chain_fills_its_slots_with_earlier_answers():
    plan = parse_plan(QUESTION, '{"hops": ["Who directed Passport to Rio?", "Where did #1 die?"]}')
    assert plan.kind == CHAIN and not plan.note
    assert plan.filled(1, ["Jack Bernhard"]) == "Where did Jack Bernhard die?"


def test_independent_hops_are_parallel_and_one_hop_is_the_question_itself():
    both = parse_plan("Was Ann born before Bo?", '{"hops": ["When was Ann born?", "When was Bo born?"]}')
    assert both.kind == PARALLEL
    single = parse_plan(QUESTION, '{"hops": ["Where did the director die?"]}')
    assert single.kind == ONE_HOP and single.hops == (QUESTION,)  # the question as asked, not the rewording


def test_what_cannot_be_a_plan_is_one_hop_with_the_reason():
    cases = {
        "not json": "the plan was not JSON",
        '{"hops": []}': "the plan had no hops",
        '{"steps": ["a"]}': "the plan had no hops",
        '{"hops": ["Where did #2 die?", "Who directed Passport to Rio?"]}': "hop 1 names an answer not known before it",
        '{"hops": ["Who designed the Starling Bridge?", "Where did #1 die?"]}': "hop 1 asks about nothing the question names",
        '{"hops": ["a rio", "b rio", "c rio", "d rio", "e rio"]}': "the plan had 5 hops (at most 4)",
    }
    for reply, note in cases.items():
        plan = parse_plan(QUESTION, reply)
        assert plan.hops == (QUESTION,) and plan.note == note, reply


def test_a_hop_that_reads_back_its_own_subject_is_not_grounded():
    """The reader over a company's page asked when it was dissolved answers with the company's name:
    the passage states it, but it is what the hop asked about, not an answer."""
    from enrich_rag.agent.hops import grounded
    from enrich_rag.agent.sufficiency import Sufficiency
    from enrich_rag.storage.passages import Passage

    page = Passage("b::c0", "b", "BAE Systems", "BAE Systems was formed on 30 November 1999 by a merger.")
    question = "When was BAE Systems formed?"
    assert not grounded(Sufficiency("BAE Systems", 1.1, (page,)), question)
    assert grounded(Sufficiency("30 November 1999", 1.1, (page,)), question)
    assert not grounded(Sufficiency("1 May 1977", 1.1, (page,)), question)  # not what it read
    assert grounded(Sufficiency("yes", 1.1, (page,)), "Was BAE Systems formed by a merger?")


def test_a_yes_or_no_grounds_only_a_question_that_asks_yes_or_no():
    """ "Who is the spouse of X?" -> "No" is a reader that found nothing in the passage, not an answer:
    the hop reads its next passage."""
    from enrich_rag.agent.hops import grounded
    from enrich_rag.agent.sufficiency import Sufficiency
    from enrich_rag.storage.passages import Passage
    from enrich_rag.text import asks_yes_no

    page = Passage("m::c0", "m", "Margarethe von Trotta", "Margarethe von Trotta is a German film director.")
    assert not grounded(Sufficiency("No", 1.1, (page,)), "Who is the spouse of Margarethe von Trotta?")
    assert grounded(Sufficiency("No", 1.1, (page,)), "Is Margarethe von Trotta an actress?")
    assert not grounded(Sufficiency("Yes", 1.1, ()), "Is Margarethe von Trotta an actress?")  # nothing read
    polar = ["Do both films have the same director?", "Are X and Y in one country?", "did she win?", '"Was it built in 1900?"']
    assert all(asks_yes_no(q) for q in polar)
    assert not any(asks_yes_no(q) for q in ["Who is the spouse of X?", "Which film came first?", "Island of Does?"])


def test_a_chain_hop_that_reads_back_an_earlier_answer_is_not_grounded():
    """A plan that lost its slot ("Who was X's mother?" -> "Who is X's spouse?") reads the last answer back
    from the same page; a chain moves on at every hop. Side-by-side hops may share an answer."""
    from enrich_rag.agent.hops import grounded
    from enrich_rag.agent.sufficiency import Sufficiency
    from enrich_rag.storage.passages import Passage

    page = Passage("s::c0", "s", "Suzanne Farrington", "Suzanne Farrington is the daughter of Vivien Leigh and Herbert Leigh Holman.")
    said = Sufficiency("Vivien Leigh", 1.1, (page,))
    assert not grounded(said, "Who is Suzanne Farrington's spouse?", earlier=["Vivien Leigh"])
    assert grounded(said, "Who is Suzanne Farrington's spouse?")  # side by side (no earlier answers passed)


def test_a_plan_that_repeats_a_hop_or_drops_a_condition_is_no_plan():
    """The documentation-folder question planned as one sub-question asked twice, and planned without the
    condition that decides it ("when you git push"), is read as one."""
    question = "Which Git hook installed by dvc install uploads DVC-tracked data to the default remote when you git push?"
    twice = '{"hops": ["What Git hook is installed by dvc install?", "What Git hook is installed by dvc install?"]}'
    repeated = parse_plan(question, twice)
    assert repeated.hops == (question,) and repeated.note == "hops 1 and 2 ask the same thing"
    dropped = parse_plan(question, '{"hops": ["What Git hook is installed by dvc install?", "Which of #1 uploads data?"]}')
    assert dropped.hops == (question,) and dropped.note == "the hops name 58% of what the question says (under 60%)"
    whole = '{"hops": ["Which Git hooks does dvc install install?", "Which of #1 uploads DVC-tracked data to the remote on git push?"]}'
    kept = parse_plan(question, whole)
    assert kept.kind == CHAIN and not kept.note
