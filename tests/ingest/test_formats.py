"""HTML, .docx and .rst files read through their libraries: real files (the .docx written by
python-docx itself, as Word would save one), their headings as sections, furniture and markup left out."""

from __future__ import annotations

import pytest

from enrich_rag.errors import InputDataError
from enrich_rag.ingest.documents import read_document_file, read_folder_documents, text_document

HTML = """<!doctype html>
<html><head><title>Tenet - Film Wiki</title><style>body { color: red }</style>
<script>var tracking = "Tenet is a 1999 film";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/films">Films</a></nav>
<h1>Tenet</h1>
<p>Tenet is a 2020 film directed by <b>Christopher Nolan</b>.</p>
<h2>Cast</h2>
<ul><li>John David Washington</li><li>Robert Pattinson</li></ul>
<footer>Copyright 2026 Film Wiki</footer>
</body></html>
"""

RST = """Kemble
======

Kemble is a village in *Gloucestershire*.

Transport
---------

Kemble railway station is on the Golden Valley line.

.. code-block:: text

   timetable: hourly

.. include:: /etc/passwd

.. raw:: html

   <script>alert(1)</script>
"""


def test_html_keeps_the_text_under_its_headings_and_drops_scripts_and_furniture(tmp_path):
    path = tmp_path / "tenet.html"
    path.write_text(HTML, encoding="utf-8")
    [doc] = read_document_file(path, "tenet.html")
    assert doc.title == "Tenet"
    assert [s.heading for s in doc.sections] == ["Tenet", "Cast"]
    assert doc.sections[0].text == "Tenet is a 2020 film directed by Christopher Nolan."
    assert doc.sections[1].text == "John David Washington\nRobert Pattinson"
    assert "1999" not in doc.text and "color" not in doc.text and "Home" not in doc.text and "Copyright" not in doc.text


def test_html_without_a_heading_takes_its_page_title(tmp_path):
    path = tmp_path / "page.htm"
    path.write_bytes("<html><head><title>Café notes</title></head><body><p>Open at nine.</p></body></html>".encode("latin-1"))
    [doc] = read_document_file(path, "page.htm")
    assert doc.title == "Café notes" and doc.text == "Open at nine."


def test_docx_paragraphs_headings_and_tables_in_reading_order(tmp_path):
    docx = pytest.importorskip("docx")
    word = docx.Document()
    word.core_properties.title = ""
    word.add_heading("Inception", level=0)  # the Title style
    word.add_paragraph("Inception is a 2010 film directed by Christopher Nolan.")
    word.add_heading("Release", level=1)
    word.add_paragraph("It opened in London.")
    table = word.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(0, 1).text = "Country", "Date"
    table.cell(1, 0).text, table.cell(1, 1).text = "UK", "8 July 2010"
    path = tmp_path / "inception.docx"
    word.save(str(path))
    [doc] = read_document_file(path, "inception.docx")
    assert doc.title == "Inception"
    assert [s.heading for s in doc.sections] == ["Inception", "Release"]
    assert doc.sections[1].text == "It opened in London.\nCountry | Date\nUK | 8 July 2010"


def test_a_damaged_docx_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputDataError, match=r"broken.docx: not a readable .docx file"):
        read_document_file(path, "broken.docx")


def test_rst_sections_by_depth_with_no_file_inclusion_or_raw_html(tmp_path):
    path = tmp_path / "kemble.rst"
    path.write_text(RST, encoding="utf-8")
    [doc] = read_document_file(path, "kemble.rst")
    assert doc.title == "Kemble"
    assert [s.heading for s in doc.sections] == ["Kemble", "Transport"]
    assert doc.sections[0].text == "Kemble is a village in Gloucestershire."
    assert doc.sections[1].text.startswith("Kemble railway station is on the Golden Valley line.\ntimetable: hourly")
    assert "root:" not in doc.text and "alert" not in doc.text


def test_a_folder_reads_every_format(tmp_path):
    (tmp_path / "a.html").write_text(HTML, encoding="utf-8")
    (tmp_path / "b.rst").write_text(RST, encoding="utf-8")
    (tmp_path / "c.md").write_text("# C\n\nSee.\n", encoding="utf-8")
    (tmp_path / "skip.css").write_text("body {}", encoding="utf-8")
    assert [d.doc_id for d in read_folder_documents(tmp_path)] == ["a.html", "b.rst", "c.md"]


def test_text_as_a_document():
    doc = text_document("# Tenet\n\nTenet is a 2020 film.\n\n## Cast\n\nJohn David Washington.")
    assert doc.title == "Tenet" and [s.heading for s in doc.sections] == ["Tenet", "Cast"]
    assert doc.doc_id == text_document("# Tenet\n\nTenet is a 2020 film.\n\n## Cast\n\nJohn David Washington.").doc_id
    plain = text_document("Kemble is a village.\nIt has a station.", doc_id="notes/kemble", title="")
    assert plain.doc_id == "notes/kemble" and plain.title == "Kemble is a village."
    with pytest.raises(InputDataError, match="the text to add is empty"):
        text_document("  \n")


SPHINX_TABS = """Completion
==========

Enable it for your shell.

.. tabs::

    .. group-tab:: Zsh

        Add this to ``~/.zshrc``:

        .. code-block:: zsh

            eval "$(_FOO_BAR_COMPLETE=zsh_source foo-bar)"
"""


def test_an_unknown_sphinx_directive_is_read_for_its_body(tmp_path):
    """Sphinx pages keep their shell lines and examples in directives docutils does not know; a disabled
    one (raw, include) stays dropped (the test above)."""
    path = tmp_path / "completion.rst"
    path.write_text(SPHINX_TABS, encoding="utf-8")
    [doc] = read_document_file(path, "completion.rst")
    assert [s.heading for s in doc.sections] == ["Completion"]
    lines = doc.sections[0].text.splitlines()
    assert lines[:4] == ["Enable it for your shell.", "Zsh", "Add this to ~/.zshrc:", 'eval "$(_FOO_BAR_COMPLETE=zsh_source foo-bar)"']
    assert ".. tabs::" not in doc.text
