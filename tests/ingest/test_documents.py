import dataclasses
import json

import pytest

from enrich_rag.errors import InputDataError
from enrich_rag.ingest.documents import read_benchmark_passages, read_corpus, read_folder_documents
from enrich_rag.stages.corpus import prepare_corpus
from tests.conftest import write_jsonl


def test_benchmark_corpus_pools_contexts_one_passage_per_title(tmp_path):
    rows = [
        {
            "id": "q1",
            "contexts": [{"title": "A", "sentences": ["A is a city.", " It is old."]}, {"title": "B", "sentences": ["B is a river."]}],
        },
        {
            "id": "q2",
            "contexts": [{"title": "A", "sentences": ["A is a city.", " It is old."]}, {"title": "C", "sentences": ["C is a band."]}],
        },
    ]
    docs = read_benchmark_passages(write_jsonl(tmp_path / "b.jsonl", rows))
    assert [d.title for d in docs] == ["A", "B", "C"]
    assert docs[0].text == "A is a city. It is old."


def test_bundled_hotpotqa_sample_has_about_3000_passages():
    from tests.conftest import PROJECT_ROOT

    docs = read_corpus(PROJECT_ROOT / "data/benchmarks/hotpotqa_distractor/dev.jsonl", "benchmark")
    assert 2900 <= len(docs) <= 3000
    assert len({d.doc_id for d in docs}) == len(docs)


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "x", "title": "T"}', "field 'text' is missing"),
        ('{"id": "x", "title": "T", "text": 5}', "field 'text' is not a non-empty string"),
        ('{"id": "a", "title": "T", "text": "dup"}', "duplicate id 'a' (first on line 1)"),
        ('{"id": "x", "title": "T", "text": "broken"', "invalid JSON"),
        ('["not", "an", "object"]', "expected a JSON object"),
    ],
)
def test_malformed_jsonl_names_file_and_line_and_writes_nothing(small_config, tmp_path, line, message):
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps({"id": "a", "title": "T", "text": "Fine."}) + "\n" + line + "\n")
    config = dataclasses.replace(small_config, corpus=dataclasses.replace(small_config.corpus, source=str(source)))
    with pytest.raises(InputDataError) as err:
        prepare_corpus(config)
    assert str(err.value).startswith(f"{source}:2: {message}")
    assert "\n" not in str(err.value)
    assert not (tmp_path / "data").exists()


def test_bad_utf8_is_reported_with_line(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(b'{"id": "a", "title": "T", "text": "ok"}\n{"id": "b", "title": "T", "text": "\xff\xfe"}\n')
    with pytest.raises(InputDataError, match=r"bad.jsonl:2: not valid UTF-8"):
        read_corpus(source, "jsonl")


def test_folder_of_txt_and_md_keeps_markdown_sections(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/notes.txt").write_text("Plain text here. Second sentence.")
    (tmp_path / "docs/guide.md").write_text("# Guide\n\nIntro text.\n\n## Install\n\nRun the script.\n")
    docs = {d.doc_id: d for d in read_folder_documents(tmp_path / "docs")}
    assert docs["guide.md"].title == "Guide"
    assert [(s.heading, s.text) for s in docs["guide.md"].sections] == [("Guide", "Intro text."), ("Install", "Run the script.")]
    assert docs["notes.txt"].title == "notes"


def test_unknown_format_and_missing_source_are_one_line_errors(tmp_path):
    with pytest.raises(InputDataError, match="corpus source not found"):
        read_corpus(tmp_path / "nope.jsonl", "jsonl")
    (tmp_path / "x.jsonl").write_text("")
    with pytest.raises(InputDataError, match="unknown corpus format 'csv'"):
        read_corpus(tmp_path / "x.jsonl", "csv")
