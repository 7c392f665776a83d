"""Markdown's markup turned to the text it shows, before a page is split and chunked: the reader, the
search and the page then see `DVC repository`, not `<abbr>DVC repository</abbr>`, a link's words without
its target, and a table as one line a row with its headers. Every token of markup is a token the reader
pays for and the search matches on. Code is left as written: fenced blocks untouched, and `code spans`
kept with their backticks, so identifiers stay searchable as written; so are placeholders such as
`<pkg>`, which only look like tags."""

from __future__ import annotations

import html
import re

# Tags of HTML that documentation pages put in markdown; an opening tag is markup when it is one of
# these or carries attributes (`<admon type="tip">`), and a closing tag always is. `<pkg>` is neither.
HTML_TAGS = frozenset(
    "a abbr b big blockquote br center cite code dd del details div dl dt em figcaption figure font hr i "
    "iframe img ins kbd li mark ol p picture pre q s samp small source span strike strong sub summary sup "
    "table tbody td tfoot th thead tr tt u ul video".split()
)
FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_REFERENCE_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$")
_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_COMMENT = re.compile(r"<!--.*?-->")
_CLOSING_TAG = re.compile(r"</[A-Za-z][\w:-]*\s*>")
_OPENING_TAG = re.compile(r"<([A-Za-z][\w:-]*)(\s[^<>]*?)?/?>")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _opening_tag(match: re.Match[str]) -> str:
    name, attributes = match.group(1), match.group(2) or ""
    return "" if name.lower() in HTML_TAGS or "=" in attributes else match.group(0)


def _prose(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REFERENCE_LINK.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    text = _CLOSING_TAG.sub("", text)
    text = _OPENING_TAG.sub(_opening_tag, text)
    return html.unescape(text)


def inline_text(line: str) -> str:
    """One line's inline markup as text; code spans kept as written."""
    line = _COMMENT.sub("", line)
    parts, at = [], 0
    for span in _CODE_SPAN.finditer(line):
        parts += [_prose(line[at : span.start()]), span.group(0)]
        at = span.end()
    return "".join([*parts, _prose(line[at:])])


def _cells(row: str) -> list[str]:
    return [inline_text(cell.strip()) for cell in row.strip().strip("|").split("|")]


def _table_rows(header: list[str], rows: list[str]) -> list[str]:
    """Each row as one line, every cell after its column's header: `Option: --check; Meaning: ...`."""
    lines = []
    for row in rows:
        cells = _cells(row)
        lines.append("; ".join(f"{h}: {c}" if h else c for h, c in zip(header, cells, strict=False) if c))
    return lines


def markdown_as_text(text: str) -> str:
    """The page with its markup turned to text, line for line where it can (headings keep their `#`, so
    the page still splits at them)."""
    lines, out, fenced, i = text.splitlines(), [], False, 0
    while i < len(lines):
        line = lines[i]
        if FENCE.match(line) or fenced:
            fenced ^= bool(FENCE.match(line))
            out.append(line)
        elif _TABLE_ROW.match(line) and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            end = i + 2
            while end < len(lines) and _TABLE_ROW.match(lines[end]):
                end += 1
            out += _table_rows(_cells(line), lines[i + 2 : end])
            i = end
            continue
        elif not _REFERENCE_DEFINITION.match(line):
            out.append(inline_text(line))
        i += 1
    return "\n".join(out)
