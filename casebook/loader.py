"""Load a case from disk or from uploaded files, rejecting bad input with errors that say where.

Accepted: a case folder (documents.json, optional questions.json / triples.json / case.json); a folder of
.md / .txt files; a single JSON file of documents. Every problem found is reported at once, and nothing
is returned half-loaded.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.types import Case, Document, Passage, Question, Triple

MAX_FILE_BYTES = 50 * 1024 * 1024     # one JSON or text file
MAX_DOCUMENT_CHARS = 500_000          # one document's text
MAX_DOCUMENTS = 100_000
PASSAGE_CHARS = 2_000                 # longer documents are split into passages about this long
CASE_FILES = ("documents.json", "questions.json", "triples.json", "case.json")


@dataclass(frozen=True)
class Problem:
    file: str
    item: str      # "" for the whole file, else e.g. "item 3 (id 'D4')"
    field: str
    message: str

    def __str__(self) -> str:
        where = self.file + (f", {self.item}" if self.item else "") + (f", field '{self.field}'" if self.field else "")
        return f"{where}: {self.message}"


class CaseError(ValueError):
    """The case could not be loaded; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        head = f"{len(problems)} problem(s) in the case:" if len(problems) > 1 else "problem in the case:"
        super().__init__(head + "\n" + "\n".join(f"  - {p}" for p in problems))


class _Collector:
    def __init__(self):
        self.problems: list[Problem] = []

    def add(self, file: str, item: str, field: str, message: str) -> None:
        self.problems.append(Problem(file, item, field, message))


def load_case(path: str | Path, name: str | None = None) -> Case:
    path = Path(path)
    if not path.exists():
        raise CaseError([Problem(str(path), "", "", "no such file or folder")])
    if path.is_file():
        return load_files([(path.name, _read_bytes(path))], name=name or path.stem, path=str(path))
    if (path / "documents.json").exists():
        files = [(f, _read_bytes(path / f, path)) for f in CASE_FILES if (path / f).exists()]
        return load_files(files, name=name or path.name, path=str(path))
    texts = sorted(p for p in path.iterdir() if p.suffix.lower() in (".md", ".txt") and p.is_file())
    if not texts:
        raise CaseError([Problem(str(path), "", "", "not a case: no documents.json and no .md or .txt files")])
    files = [(p.name, _read_bytes(p, path)) for p in texts]
    extra = [(f, _read_bytes(path / f, path)) for f in ("questions.json", "triples.json", "case.json")
             if (path / f).exists()]
    return load_files(files + extra, name=name or path.name, path=str(path))


def _read_bytes(path: Path, folder: Path | None = None) -> bytes:
    """A case file's bytes; inside ``folder``, a file whose real path leaves the folder (a symlink to
    /etc/passwd, say) is refused: nothing outside the case folder is read, embedded or sent to a model."""
    if folder is not None:
        real, home = path.resolve(), folder.resolve()
        if not real.is_relative_to(home):
            raise CaseError([Problem(str(path), "", "", f"is a link to {real}, outside the case folder {home}; "
                                                        "copy the file into the folder instead")])
    if not path.is_file():
        raise CaseError([Problem(str(path), "", "", "is a folder or a special file, not a file")])
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise CaseError([Problem(path.name, "", "", f"file is {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")])
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CaseError([Problem(str(path), "", "", f"cannot be read: {exc.strerror or exc}")]) from None


def load_files(files: Iterable[tuple[str, bytes]], name: str = "uploaded", path: str = "") -> Case:
    """Build a case from (file name, bytes) pairs: how the app passes uploads, and how folders are read."""
    c = _Collector()
    files = list(files)
    for fname, data in files:
        if len(data) > MAX_FILE_BYTES:
            c.add(fname, "", "", f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")
    if c.problems:
        raise CaseError(c.problems)
    parts = _read_parts(c, dict(files), name, path)
    doc_ids = _document_ids(c, parts.documents)
    questions = _questions(c, parts.questions, doc_ids) if parts.questions is not None else []
    triples = _triples(c, parts.triples, doc_ids) if parts.triples is not None else []
    meta = parts.meta
    for key in ("title", "description", "source", "license"):
        if key in meta and meta[key] is not None and not isinstance(meta[key], str):
            c.add("case.json", "", key, f"expected a string, got {_kind(meta[key])}")
    if c.problems:
        raise CaseError(c.problems)
    docs = parts.documents
    return Case(name=name, path=path, title=str(meta.get("title") or name), description=str(meta.get("description") or ""),
                source=str(meta.get("source") or ""), license=str(meta.get("license") or ""),
                documents=docs, passages=split_passages(docs), questions=questions, triples=triples,
                fingerprint=fingerprint(docs))


def _parse_json(c: _Collector, fname: str, data: bytes) -> Any:
    text = _decode(c, fname, data)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        c.add(fname, "", "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
        return None
    except RecursionError:
        c.add(fname, "", "", "JSON nested too deeply to be a case file")
        return None


def _decode(c: _Collector, fname: str, data: bytes) -> str | None:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        c.add(fname, "", "", f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line})")
        return None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _item(index: int, obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("id"), str) and obj["id"].strip():
        return f"item {index} (id {obj['id']!r})"
    return f"item {index}"


_ID_KEYS = {"id", "doc_id"}


def clean_id(value: str) -> str:
    """An id as it is compared: NFC ("Zoë" typed either way is one id), without zero-width or control characters
    (look-alike ids that differ only by them would otherwise coexist)."""
    text = unicodedata.normalize("NFC", value)
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf")).strip()


@dataclass
class _Parts:
    """What a case's files hold, read but not yet cross-checked."""
    documents: list[Document]
    questions: Any = None      # the raw questions.json value (or the one-file case's "questions")
    triples: Any = None
    meta: dict = field(default_factory=dict)


def _read_parts(c: _Collector, by_name: dict[str, bytes], name: str, path: str) -> _Parts:
    """Documents from the JSON and text files, and the raw questions, triples and case.json."""
    parts = _Parts(documents=[])
    json_docs = [f for f in by_name if f.lower().endswith(".json") and f not in CASE_FILES[1:]]
    for fname in json_docs:
        value = _parse_json(c, fname, by_name[fname])
        if isinstance(value, dict) and "documents" in value:  # one-file case: {"documents": [...], "questions": [...]}
            parts.questions, parts.triples = value.get("questions"), value.get("triples")
            parts.meta = {k: value[k] for k in ("title", "description", "source", "license") if k in value}
            value = value["documents"]
        if value is not None:
            parts.documents.extend(_documents(c, fname, value))
    for fname, data in by_name.items():
        if fname.lower().endswith((".md", ".txt")) and (doc := _text_document(c, fname, data)):
            parts.documents.append(doc)
    if "questions.json" in by_name:
        parts.questions = _parse_json(c, "questions.json", by_name["questions.json"])
    if "triples.json" in by_name:
        parts.triples = _parse_json(c, "triples.json", by_name["triples.json"])
    if "case.json" in by_name:
        value = _parse_json(c, "case.json", by_name["case.json"])
        if value is not None and not isinstance(value, dict):
            c.add("case.json", "", "", f"expected a JSON object, got {_kind(value)}")
        elif value:
            parts.meta = value
    if not parts.documents and not c.problems:
        c.add(json_docs[0] if json_docs else (path or name), "", "", "the case has no documents")
    return parts


def _document_ids(c: _Collector, docs: list[Document]) -> set[str]:
    """The documents' ids, each duplicate and an over-long case recorded as a problem."""
    if len(docs) > MAX_DOCUMENTS:
        c.add("documents", "", "", f"{len(docs):,} documents; the limit is {MAX_DOCUMENTS:,}")
    seen: dict[str, str] = {}
    for d in docs:
        if d.id in seen:
            c.add("documents", f"id {d.id!r}", "id", f"duplicate document id (also in {seen[d.id]})")
        seen.setdefault(d.id, "an earlier document")
    return set(seen)


def _string(c: _Collector, fname: str, item: str, obj: dict, key: str, required: bool = True,
            max_chars: int | None = None) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            c.add(fname, item, key, "missing")
        return None
    value = obj[key]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key in _ID_KEYS:
        if not math.isfinite(value):
            c.add(fname, item, key, f"{value} is not an id; use a string or a whole number")
            return None
        value = str(value)  # numeric ids are common in exported data
    if not isinstance(value, str):
        c.add(fname, item, key, f"expected a string, got {_kind(value)}")
        return None
    if required and not value.strip():
        c.add(fname, item, key, "empty")
        return None
    if max_chars is not None and len(value) > max_chars:
        c.add(fname, item, key, f"{len(value):,} characters; the limit is {max_chars:,}")
        return None
    if key in _ID_KEYS:
        cleaned = clean_id(value)
        if required and not cleaned:
            c.add(fname, item, key, "only invisible or control characters")
            return None
        return cleaned
    return unicodedata.normalize("NFC", value.strip())


def _objects(c: _Collector, fname: str, value: Any, what: str, label_ids: bool = True):
    """Yield (item label, object) for each object of a JSON array, reporting everything that is not one."""
    if not isinstance(value, list):
        c.add(fname, "", "", f"expected an array of {what}, got {_kind(value)}")
        return
    for i, obj in enumerate(value):
        item = _item(i, obj) if label_ids else f"item {i}"
        if isinstance(obj, dict):
            yield item, obj
        else:
            c.add(fname, item, "", f"expected an object, got {_kind(obj)}")


def _documents(c: _Collector, fname: str, value: Any) -> list[Document]:
    docs = []
    for item, obj in _objects(c, fname, value, "documents"):
        doc_id = _string(c, fname, item, obj, "id")
        if doc_id and "#" in doc_id:   # passage ids are "<doc id>#<n>": a '#' in a document id could clash
            c.add(fname, item, "id", f"{doc_id!r} contains '#', which marks the parts of a long document "
                                     "(D1#2); use another character")
            doc_id = None
        text = _string(c, fname, item, obj, "text", max_chars=MAX_DOCUMENT_CHARS)
        title = _string(c, fname, item, obj, "title", required=False)
        if doc_id and text:
            docs.append(Document(id=doc_id, title=title or doc_id, text=text))
    return docs


def _text_document(c: _Collector, fname: str, data: bytes) -> Document | None:
    text = _decode(c, fname, data)
    if text is None:
        return None
    text = unicodedata.normalize("NFC", text.strip())
    if not text:
        c.add(fname, "", "text", "empty file")
        return None
    if len(text) > MAX_DOCUMENT_CHARS:
        c.add(fname, "", "text", f"{len(text):,} characters; the limit is {MAX_DOCUMENT_CHARS:,}")
        return None
    first, _, rest = text.partition("\n")
    heading = re.match(r"^#+\s*(.*)$", first.strip())
    if heading and heading.group(1).strip() and rest.strip():
        # A Markdown heading is the title, not part of the evidence (it would be embedded and matched twice).
        return Document(id=Path(fname).stem, title=heading.group(1).strip(), text=rest.strip())
    title = first.strip() if not heading else heading.group(1).strip() or Path(fname).stem
    return Document(id=Path(fname).stem, title=title, text=text)


def _id_list(c: _Collector, fname: str, item: str, obj: dict, key: str, doc_ids: set[str]) -> tuple[str, ...]:
    value = obj.get(key, [])
    if value is None:
        return ()
    whole = (int,)   # numeric ids are accepted here as they are for documents
    if not isinstance(value, list) or not all(isinstance(v, (str, *whole)) and not isinstance(v, bool)
                                              for v in value):
        c.add(fname, item, key, "expected an array of document ids (strings or whole numbers)")
        return ()
    ids = tuple(clean_id(str(v)) for v in value)
    for v in ids:
        if v not in doc_ids:
            c.add(fname, item, key, f"names unknown document {v!r}")
    return ids


def _questions(c: _Collector, raw: Any, doc_ids: set[str]) -> list[Question]:
    fname = "questions.json"
    out, seen = [], set()
    for item, obj in _objects(c, fname, raw, "questions"):
        qid = _string(c, fname, item, obj, "id")
        text = _string(c, fname, item, obj, "question", max_chars=10_000)
        qtype = _string(c, fname, item, obj, "type", required=False) or "unspecified"
        expected = _string(c, fname, item, obj, "expected_answer", required=False) or ""
        supporting = _id_list(c, fname, item, obj, "supporting_docs", doc_ids)
        answers = _string_list(c, fname, item, obj, "answers")
        key_facts = _string_list(c, fname, item, obj, "key_facts")
        if qid in seen:
            c.add(fname, item, "id", f"duplicate question id {qid!r}")
        if qid:
            seen.add(qid)
        if qid and text:
            out.append(Question(id=qid, text=text, type=qtype, supporting_docs=supporting,
                                expected_answer=expected, answers=answers, key_facts=key_facts))
    return out


def _string_list(c: _Collector, fname: str, item: str, obj: dict, key: str) -> tuple[str, ...]:
    """An optional array of strings (stripped, empties dropped); a problem is recorded when it is anything else."""
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        c.add(fname, item, key, "expected an array of strings")
        return ()
    return tuple(v.strip() for v in value if v.strip())


def _triples(c: _Collector, raw: Any, doc_ids: set[str]) -> list[Triple]:
    fname = "triples.json"
    out = []
    for item, obj in _objects(c, fname, raw, "triples", label_ids=False):
        values = [_string(c, fname, item, obj, k) for k in ("doc_id", "subject", "relation", "object")]
        if values[0] and values[0] not in doc_ids:
            c.add(fname, item, "doc_id", f"names unknown document {values[0]!r}")
            continue
        doc_id, subject, relation, obj = values
        if doc_id and subject and relation and obj:
            out.append(Triple(doc_id, subject, relation, obj))
    return out


def split_passages(docs: list[Document], max_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """Short documents are one passage; long ones are split at paragraph, then sentence, boundaries."""
    out: list[Passage] = []
    for d in docs:
        if len(d.text) <= max_chars:
            out.append(Passage(id=d.id, doc_id=d.id, title=d.title, text=d.text))
            continue
        pieces, current = [], ""
        for unit in _units(d.text, max_chars):
            if current and len(current) + len(unit) + 1 > max_chars:
                pieces.append(current)
                current = unit
            else:
                current = f"{current} {unit}".strip() if current else unit
        if current:
            pieces.append(current)
        out.extend(Passage(id=f"{d.id}#{n}", doc_id=d.id, title=d.title, text=t) for n, t in enumerate(pieces, 1))
    return out


def _units(text: str, max_chars: int) -> list[str]:
    units = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if len(para) <= max_chars:
            units.append(para)
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", para):
            units.extend(sentence[i:i + max_chars] for i in range(0, len(sentence), max_chars))
    return [u for u in units if u]


def fingerprint(docs: list[Document]) -> str:
    """A stable content hash of the documents, independent of anything else in the case."""
    h = hashlib.sha256()
    for d in docs:
        h.update(json.dumps([d.id, d.title, d.text], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:16]
