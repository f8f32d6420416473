"""Small real-part helpers shared by tests."""
from __future__ import annotations

import json
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

from casebook.loader import load_files
from core.types import Case


class CountingEmbedder:
    """Wraps a real embedder and counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.usage = inner, inner.name, inner.usage
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def make_case(docs: list[dict], questions: list[dict] | None = None, triples: list[dict] | None = None,
              name: str = "generated") -> Case:
    payload = {"documents": docs, "questions": questions or [], "triples": triples}
    if triples is None:
        payload.pop("triples")
    return load_files([(f"{name}.json", json.dumps(payload).encode())], name=name)


# A generated case whose multi-hop question shares no word with its answer passage (G2).
BRIDGE_DOCS = [
    {"id": "G1", "title": "Founding", "text": "Orla Vance founded the Kestrel Foundry in Dunmore."},
    {"id": "G2", "title": "Workshop", "text": "Kestrel Foundry casts bronze bells for harbour towns."},
    {"id": "X1", "title": "Holt", "text": "Marek Holt started a company that produces oak furniture."},
    {"id": "X2", "title": "Ibarra", "text": "Lucia Ibarra started a company that produces glass lamps."},
    {"id": "X3", "title": "Okafor", "text": "Emeka Okafor started a company that produces leather shoes."},
    {"id": "X4", "title": "Brandt", "text": "Hanne Brandt started a company that produces wool blankets."},
    {"id": "X5", "title": "Harbour", "text": "The harbour of Dunmore freezes in January."},
]
BRIDGE_TRIPLES = [
    {"doc_id": "G1", "subject": "Orla Vance", "relation": "founded", "object": "Kestrel Foundry"},
    {"doc_id": "G1", "subject": "Kestrel Foundry", "relation": "located in", "object": "Dunmore"},
    {"doc_id": "G2", "subject": "Kestrel Foundry", "relation": "casts", "object": "bronze bells"},
    {"doc_id": "G2", "subject": "bronze bells", "relation": "made for", "object": "harbour towns"},
    {"doc_id": "X1", "subject": "Marek Holt", "relation": "started company producing", "object": "oak furniture"},
    {"doc_id": "X2", "subject": "Lucia Ibarra", "relation": "started company producing", "object": "glass lamps"},
    {"doc_id": "X3", "subject": "Emeka Okafor", "relation": "started company producing", "object": "leather shoes"},
    {"doc_id": "X4", "subject": "Hanne Brandt", "relation": "started company producing", "object": "wool blankets"},
    {"doc_id": "X5", "subject": "harbour of Dunmore", "relation": "freezes in", "object": "January"},
]
BRIDGE_QUESTION = {"id": "B1", "question": "What does the company started by Orla Vance produce?",
                   "type": "multi-hop", "supporting_docs": ["G1", "G2"], "expected_answer": "bronze bells"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(command: list[str], port: int, timeout: float = 60, **popen):
    """Run a server process until its port accepts connections; stop it afterwards. A server that does not
    start in ``timeout`` seconds (or exits) fails the test with its output."""
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, **popen)
    deadline = time.time() + timeout
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    log.seek(0)
                    output = log.read().decode("utf-8", errors="replace")[-4000:]
                    raise RuntimeError(f"{' '.join(map(str, command[:4]))} did not start on port {port} "
                                       f"(exit code {proc.poll()}); its output:\n{output}") from None
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
