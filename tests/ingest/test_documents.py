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


def test_markdown_front_matter_titles_the_page_and_a_comment_in_fenced_code_is_no_heading(tmp_path):
    """npm's pages: YAML front matter names the page, and a `# .travis.yml` line inside a code block titled
    npm-ci's page `.travis.yml` and cut its section there."""
    (tmp_path / "docs").mkdir()
    page = "---\ntitle: npm-ci\nsection: 1\n---\n\n### Example\n\nRun it in CI:\n\n```yaml\n# .travis.yml\ninstall:\n- npm ci\n```\n"
    (tmp_path / "docs/npm-ci.md").write_text(page)
    (doc,) = read_folder_documents(tmp_path / "docs")
    assert doc.title == "npm-ci"
    assert [s.heading for s in doc.sections] == ["Example"] and "# .travis.yml" in doc.sections[0].text
    assert "section: 1" not in doc.text


def test_unknown_format_and_missing_source_are_one_line_errors(tmp_path):
    with pytest.raises(InputDataError, match="corpus source not found"):
        read_corpus(tmp_path / "nope.jsonl", "jsonl")
    (tmp_path / "x.jsonl").write_text("")
    with pytest.raises(InputDataError, match="unknown corpus format 'csv'"):
        read_corpus(tmp_path / "x.jsonl", "csv")


def _pdf_with_pages(pages: list[str], title: str) -> bytes:
    """A minimal PDF (Helvetica text, one line a page), written by hand so the test needs no PDF writer."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
        page = f"/Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R"
        objects.append(f"<< {page} /Resources << /Font << /F1 FONT 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objects.append(f"<< /Title ({title}) >>")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    objects = [o.replace("FONT", str(len(objects) - 1)) for o in objects]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_folder_pdf_is_a_document_with_a_section_per_page(tmp_path):
    pytest.importorskip("pypdf")  # the pdf extra (installed by scripts/run.sh)
    (tmp_path / "docs").mkdir()
    pages = ["Ada Lovelace wrote the first program.", "She was born in London."]
    (tmp_path / "docs/report.pdf").write_bytes(_pdf_with_pages(pages, "Annual Report"))
    (tmp_path / "docs/blank.pdf").write_bytes(_pdf_with_pages([""], "Scan"))
    docs = {d.doc_id: d for d in read_folder_documents(tmp_path / "docs")}
    assert list(docs) == ["report.pdf"]  # a PDF without a text layer is skipped like an empty file
    assert docs["report.pdf"].title == "Annual Report"
    assert [(s.heading, s.text) for s in docs["report.pdf"].sections] == [
        ("page 1", "Ada Lovelace wrote the first program."),
        ("page 2", "She was born in London."),
    ]
    (tmp_path / "docs/broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    with pytest.raises(InputDataError, match=r"broken.pdf: not a readable PDF"):
        read_folder_documents(tmp_path / "docs")
