"""Markdown's markup read as the text it shows, code and placeholders left as written."""

from enrich_rag.ingest.markdown_text import markdown_as_text
from enrich_rag.ingest.sections import split_markdown_sections


def test_links_tags_and_emphasis_become_the_words_they_show():
    text = "A <abbr>DVC repository</abbr> tracks [metrics](/command-reference/metrics) **always** &amp; ![a plot](/p.png)."
    assert markdown_as_text(text) == "A DVC repository tracks metrics always & a plot."


def test_attributed_tags_comments_and_reference_definitions_go():
    text = '<admon type="tip">\nSee [the guide][1]. <!-- a note -->\n</admon>\n[1]: https://example.com/guide'
    assert markdown_as_text(text).split() == ["See", "the", "guide."]


def test_code_and_placeholders_stay_as_written():
    text = 'Run `npm install <pkg>` or npm install <pkg> with `[x](y)`.\n```html\n<a href="x">[kept](here)</a>\n```'
    assert markdown_as_text(text) == text


def test_a_table_becomes_one_line_a_row_under_its_headers():
    text = "| Option | Meaning |\n| :----- | ------: |\n| `--dry` | show what [would go](/gc) |\n| `-f` | force |\nAfter."
    assert markdown_as_text(text).splitlines() == ["Option: `--dry`; Meaning: show what would go", "Option: `-f`; Meaning: force", "After."]


def test_a_page_still_splits_at_its_headings_and_its_sections_read_as_text():
    title, sections = split_markdown_sections(
        "# [gc](/gc)\n\nRemoves <abbr>unused</abbr> files.\n\n## Options\n\n| Flag | Does |\n|---|---|\n| `--dry` | shows |"
    )
    assert title == "gc"
    assert [(s.heading, s.text) for s in sections] == [("gc", "Removes unused files."), ("Options", "Flag: `--dry`; Does: shows")]
