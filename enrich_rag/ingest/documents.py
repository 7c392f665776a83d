"""Read a corpus into `Document`s: a benchmark's pooled contexts, a {id,title,text} JSONL, or a folder.

Everything is read and validated before anything is written, so a malformed row stops the build
with an error naming the file and line and leaves no half-written output behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from enrich_rag.errors import InputDataError
from enrich_rag.ingest.formats import read_docx, read_html, read_rst
from enrich_rag.ingest.sections import Document, Section, split_markdown_sections, stable_doc_id


def _json_lines(path: Path) -> Iterator[tuple[int, dict]]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputDataError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line = raw[: exc.start].count(b"\n") + 1
        raise InputDataError(f"{path}:{bad_line}: not valid UTF-8 (byte {exc.start})") from exc
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputDataError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise InputDataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
        yield lineno, row


def _require_str(row: dict, key: str, path: Path, lineno: int, allow_empty: bool = False) -> str:
    value = row.get(key)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        what = "missing" if key not in row else "not a non-empty string"
        raise InputDataError(f"{path}:{lineno}: field '{key}' is {what}")
    return value


def read_benchmark_passages(path: Path) -> list[Document]:
    """Pool all questions' context paragraphs, one passage per title, as HippoRAG's open setting does.

    The first text seen for a title wins; later paragraphs with the same title are dropped.
    """
    docs: dict[str, Document] = {}
    for lineno, row in _json_lines(path):
        contexts = row.get("contexts")
        if not isinstance(contexts, list):
            raise InputDataError(f"{path}:{lineno}: field 'contexts' is missing or not a list")
        for ctx in contexts:
            if not isinstance(ctx, dict) or not isinstance(ctx.get("sentences"), list):
                raise InputDataError(f"{path}:{lineno}: a context lacks 'title'/'sentences'")
            title = _require_str(ctx, "title", path, lineno=lineno)
            if title in docs:
                continue
            text = "".join(str(s) for s in ctx["sentences"]).strip()
            if not text:
                continue
            docs[title] = Document(stable_doc_id(title, text), title, (Section("", text),), source=str(path))
    return list(docs.values())


def read_jsonl_documents(path: Path) -> list[Document]:
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for lineno, row in _json_lines(path):
        doc_id = row.get("id")
        if isinstance(doc_id, int):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputDataError(f"{path}:{lineno}: field 'id' is missing or empty")
        if doc_id in seen:
            raise InputDataError(f"{path}:{lineno}: duplicate id '{doc_id}' (first on line {seen[doc_id]})")
        seen[doc_id] = lineno
        title = _require_str(row, "title", path, lineno=lineno, allow_empty=True)
        text = _require_str(row, "text", path, lineno=lineno)
        docs.append(Document(doc_id, title, (Section("", text.strip()),), source=str(path)))
    return docs


def read_pdf_document(path: Path, doc_id: str) -> Document | None:
    """A PDF's text layer, a section per page (pypdf, the `pdf` extra); None when it has no text
    (a scan: OCR is out of scope, so it is skipped like an empty file)."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:
        raise InputDataError(f"{path}: reading PDF files needs the pdf extra (pip install 'enrich-rag[pdf]')") from exc
    try:
        reader = PdfReader(path)
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PyPdfError, ValueError, KeyError) as exc:
        raise InputDataError(f"{path}: not a readable PDF ({exc})") from exc
    sections = tuple(Section(f"page {n}", text) for n, text in enumerate(pages, start=1) if text)
    if not sections:
        return None
    return Document(doc_id, str(meta_title).strip() or path.stem, sections, source=str(path))


FOLDER_SUFFIXES = (".txt", ".md", ".rst", ".html", ".htm", ".docx", ".pdf", ".jsonl")


def read_document_file(path: Path, doc_id: str) -> list[Document]:
    """One .txt, .md, .rst, .html, .docx or .pdf file as a document with this id, or a .jsonl file's
    {id, title, text} rows (ids: `<doc_id>#<id>`); none for an empty file or a PDF without text."""
    suffix = path.suffix.lower()
    if suffix not in FOLDER_SUFFIXES:
        raise InputDataError(f"{path}: not a {', '.join(FOLDER_SUFFIXES)} file")
    if suffix == ".jsonl":
        return [Document(f"{doc_id}#{d.doc_id}", d.title, d.sections, source=d.source) for d in read_jsonl_documents(path)]
    binary = {".pdf": read_pdf_document, ".docx": read_docx, ".html": read_html, ".htm": read_html}
    if suffix in binary:
        found = binary[suffix](path, doc_id)
        return [found] if found else []
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputDataError(f"{path}: not valid UTF-8 (byte {exc.start})") from exc
    except OSError as exc:
        raise InputDataError(f"{path}: cannot read ({exc.strerror})") from exc
    if not text.strip():
        return []
    if suffix == ".rst":
        rst = read_rst(path, doc_id, text)
        return [rst] if rst else []
    if suffix == ".md":
        heading_title, sections = split_markdown_sections(text)
        return [Document(doc_id, heading_title or path.stem, sections, source=str(path))]
    return [Document(doc_id, path.stem, (Section("", text.strip()),), source=str(path))]


def text_document(text: str, doc_id: str = "", title: str = "", source: str = "text") -> Document:
    """A string as a document (`EnrichRAG.add_text`, `enrich-rag add -`): markdown headings make its
    sections; the title is the one given, else its first `#` heading, else its first line. Without an
    id, the id is the content's hash, so the same text added twice is one document."""
    if not isinstance(text, str) or not text.strip():
        raise InputDataError("the text to add is empty")
    if "\x00" in text:
        raise InputDataError("the text to add contains binary data (NUL bytes)")
    heading_title, sections = split_markdown_sections(text.strip())
    title = title.strip() or heading_title or " ".join(text.strip().splitlines()[0].split())[:80]
    return Document(doc_id.strip() or stable_doc_id(title, text.strip()), title, sections, source=source)


def folder_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in FOLDER_SUFFIXES and p.is_file())


def read_folder_documents(folder: Path) -> list[Document]:
    """Every .txt, .md, .rst, .html, .docx and .pdf file is a document (ids: paths in the folder); a
    .jsonl file holds {id, title, text} rows, each a document (ids: `<path>#<id>`)."""
    files = folder_files(folder)
    if not files:
        raise InputDataError(f"{folder}: no {', '.join(FOLDER_SUFFIXES)} files found")
    return [doc for path in files for doc in read_document_file(path, path.relative_to(folder).as_posix())]


def read_corpus(source: str | Path, fmt: str, max_passages: int = 0) -> list[Document]:
    path = Path(source)
    if not path.exists():
        raise InputDataError(f"corpus source not found: {path}")
    readers = {"benchmark": read_benchmark_passages, "jsonl": read_jsonl_documents, "folder": read_folder_documents}
    if fmt not in readers:
        raise InputDataError(f"unknown corpus format '{fmt}' (expected one of: {', '.join(readers)})")
    if fmt == "folder" and not path.is_dir():
        raise InputDataError(f"corpus format 'folder' needs a directory: {path}")
    docs = readers[fmt](path)
    if not docs:
        raise InputDataError(f"{path}: no documents with text")
    return docs[:max_passages] if max_passages > 0 else docs
