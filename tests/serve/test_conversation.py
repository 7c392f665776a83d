from enrich_rag.serve.conversation import Conversations, Turn, resolve_followup


def test_person_pronoun_resolves_to_the_previous_answer():
    previous = Turn("Who directed Inception?", "Christopher Nolan", ("Inception",))
    assert resolve_followup("and where was he born?", previous) == "Where was Christopher Nolan born?"
    assert resolve_followup("What is his nationality?", previous) == "What is Christopher Nolan's nationality?"


def test_thing_pronoun_resolves_to_the_previous_entity():
    previous = Turn("When was Inception released?", "2010", ("Inception",))
    assert resolve_followup("who starred in it?", previous) == "Who starred in Inception?"
    # The answer is not a name, so "he" falls back to the question's entity.
    assert resolve_followup("who directed it?", None) == "who directed it?"


def test_questions_without_pronouns_are_left_alone():
    previous = Turn("Who directed Inception?", "Christopher Nolan", ("Inception",))
    assert resolve_followup("Where is London?", previous) == "Where is London?"


def test_conversations_are_bounded():
    store = Conversations(limit=2)
    ids = [store.record(None, Turn(f"q{i}", "a", ())) for i in range(3)]
    assert store.last(ids[0]) is None and store.last(ids[2]).question == "q2"
