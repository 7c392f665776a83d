"""HTML, Word (.docx) and reStructuredText files as documents, each read by its own well-kept library
(BeautifulSoup, python-docx, docutils), never by a hand-written parser.

Each reader turns its file into blocks (a heading with its level, or body text) in reading order; the
blocks become sections under their headings as a markdown file's do (`sectioned`), and the first
level-1 heading is the title unless the file names one itself.
"""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path

from enrich_rag.errors import InputDataError
from enrich_rag.ingest.sections import Document, sectioned

Block = tuple[int, str]  # (heading level 1-6, or 0 for body text; the text)

_HEADING_TAG = re.compile(r"^h([1-6])$")
_MARK = "\x01"  # a heading's line in the flattened HTML text: \x01<level><text>
_NOT_TEXT = ("script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside", "form")
_BLOCK_TAGS = ("p", "div", "li", "tr", "pre", "blockquote", "dd", "dt", "br", "table", "section", "article", "figcaption")


def _document(path: Path, doc_id: str, blocks: Iterable[Block], named_title: str = "") -> Document | None:
    heading_title, sections = sectioned(blocks)
    if not sections:
        return None
    return Document(doc_id, named_title.strip() or heading_title or path.stem, sections, source=str(path))


def read_html(path: Path, doc_id: str) -> Document | None:
    """Visible text under its headings; scripts, styles and page furniture (nav, header, footer) dropped.
    The title is the page's first <h1>, else its <title>."""
    from bs4 import BeautifulSoup

    try:
        soup = BeautifulSoup(path.read_bytes(), "html.parser")  # bytes: the library finds the encoding
    except OSError as exc:
        raise InputDataError(f"{path}: cannot read ({exc.strerror})") from exc
    page_title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup(_NOT_TEXT):
        tag.decompose()
    body = soup.body or soup
    for heading in body.find_all(_HEADING_TAG):
        heading.replace_with(f"\n{_MARK}{heading.name[1]}{heading.get_text(' ', strip=True)}\n")
    for block in body.find_all(_BLOCK_TAGS):
        block.insert_after("\n")

    def blocks() -> Iterator[Block]:
        for line in body.get_text().split("\n"):
            if line.startswith(_MARK):
                yield int(line[1]), line[2:]
            elif text := " ".join(line.split()):
                yield 0, text

    heading_title, sections = sectioned(blocks())
    if not sections:
        return None
    return Document(doc_id, heading_title or page_title or path.stem, sections, source=str(path))


def read_docx(path: Path, doc_id: str) -> Document | None:
    """Paragraphs and tables in reading order; headings by their Word style (Title, Heading 1-6). The
    title is the file's own (its properties), else its Title or first Heading 1."""
    import docx
    from docx.table import Table

    try:
        word = docx.Document(str(path))
    except Exception as exc:  # python-docx raises zip, XML and package errors alike for a damaged file
        raise InputDataError(f"{path}: not a readable .docx file ({type(exc).__name__})") from exc

    def blocks() -> Iterator[Block]:
        for item in word.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    yield 0, " | ".join(dict.fromkeys(cell.text.strip() for cell in row.cells if cell.text.strip()))
                continue
            style = item.style.name if item.style is not None else ""
            level = 1 if style == "Title" else int(style[8]) if re.fullmatch(r"Heading [1-6]", style) else 0
            if item.text.strip():
                yield level, item.text.strip()

    return _document(path, doc_id, blocks(), named_title=word.core_properties.title or "")


def read_rst(path: Path, doc_id: str, text: str) -> Document | None:
    """The document tree docutils parses (no file inclusion, no raw passthrough); section titles by
    their depth. Markup errors are not fatal: the text is read as docutils recovers it. A directive
    docutils does not know (Sphinx's `tabs`, `click:example`, ...) is read for its body: that is where
    such pages keep their examples and shell lines."""
    titled, blocks = _rst_blocks(text, str(path))
    return _document(path, doc_id, ((min(6, level - 1 + titled) if level else 0, line) for level, line in blocks))


def _rst_blocks(text: str, source: str, nested: int = 0) -> tuple[bool, Iterator[Block]]:
    """(whether docutils promoted a lone top title, the blocks: 1 + a title's section depth, or 0 for body text)."""
    from docutils import nodes
    from docutils.core import publish_doctree

    settings = {
        "report_level": 5,  # quiet: a malformed table or role is read as text, not printed
        "halt_level": 5,
        "warning_stream": io.StringIO(),
        "file_insertion_enabled": False,
        "raw_enabled": False,
    }
    tree = publish_doctree(text, source_path=source, settings_overrides=settings)

    def blocks() -> Iterator[Block]:
        wanted = (nodes.title, nodes.paragraph, nodes.literal_block, nodes.system_message)
        for node in tree.findall(lambda n: isinstance(n, wanted)):
            if isinstance(node, nodes.system_message):
                if nested < _RST_NESTING and not any(isinstance(a, nodes.system_message) for a in _ancestors(node)):
                    yield from _unknown_directive(node, source, nested)
                continue
            if any(isinstance(a, nodes.system_message) for a in _ancestors(node)):
                continue  # docutils' own note on a disabled or broken directive, quoting its source
            if isinstance(node, nodes.title):
                if isinstance(node.parent, (nodes.section, nodes.document)):
                    yield 1 + sum(1 for a in _ancestors(node) if isinstance(a, nodes.section)), node.astext()
            elif node.astext().strip():
                yield 0, node.astext().strip()

    return any(isinstance(child, nodes.title) for child in tree.children), blocks()


_RST_NESTING = 4  # tabs hold group-tabs hold code blocks
_DIRECTIVE = re.compile(r"^\.\. ([\w:.-]+)::[ \t]*(.*)$")


def _unknown_directive(message, source: str, nested: int) -> Iterator[Block]:
    """The body of a directive docutils reported unknown, parsed as reStructuredText of its own; its
    argument (a tab's name) first. Anything else docutils reported (a broken table) stays dropped."""
    from docutils import nodes

    said = next((n.astext() for n in message.findall(nodes.paragraph)), "")
    if not said.startswith("Unknown directive type"):
        return  # a disabled directive (raw, include) or broken markup: what it quotes is not page text
    quoted = next((n.astext() for n in message.findall(nodes.literal_block)), "")
    lines = quoted.splitlines()
    head = _DIRECTIVE.match(lines[0]) if lines else None
    if head is None:
        return
    body = lines[1:]
    while body and re.match(r"^\s+:[\w-]+:", body[0]):  # the directive's options
        body = body[1:]
    if head.group(2).strip():
        yield 0, head.group(2).strip()
    _, inner = _rst_blocks(textwrap.dedent("\n".join(body)), source, nested + 1)
    yield from ((0, line) for _, line in inner)


def _ancestors(node) -> Iterator:
    while (node := node.parent) is not None:
        yield node
