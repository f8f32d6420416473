"""Vector Graph RAG's storage (after the vector-graph-rag package): entities, relations and passages as three
Chroma collections that reference each other by id, so walking the graph is a chain of id look-ups and no graph
database is needed.

- entities:  id "e<n>", the phrase embedded, metadata ``relation_ids`` (the relations it takes part in)
- relations: id "r<n>", "subject relation object" embedded, metadata ``subject_id``, ``object_id``, ``passage_ids``
- passages:  the passage id, its text embedded, metadata ``entity_ids``, ``relation_ids``, ``doc_id``

Chroma metadata holds scalars only, so id lists are stored as JSON text. The collections are filled from the
shared knowledge graph with the vectors it already holds (no second embedding pass), named by the graph's key,
and filled again only when their counts do not match it (a build that stopped half-way).
"""
from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.contract import BuildReport
from indexes import cosine_collection
from kg import GraphBuild

BATCH = 2000


@dataclass
class Node:
    id: str
    text: str
    meta: dict
    vector: np.ndarray | None = None

    def ids(self, field: str) -> list[str]:
        return json.loads(self.meta.get(field) or "[]")


class VectorGraphStore:
    def __init__(self, client, build: GraphBuild):
        self.client = client
        graph = build.graph
        self.names = {kind: f"vg-{kind}-{build.key}" for kind in ("entities", "relations", "passages")}
        self.collections = {kind: cosine_collection(client, name) for kind, name in self.names.items()}
        self.expected = {"entities": len(graph.phrases), "relations": len(graph.facts),
                         "passages": len(graph.passage_ids)}

    def fill(self, build: GraphBuild) -> BuildReport:
        """Write the three collections from the graph unless they already hold it."""
        started = time.perf_counter()
        counts = {kind: c.count() for kind, c in self.collections.items()}
        if counts == self.expected:
            return BuildReport("vector graph collections", round((time.perf_counter() - started) * 1000, 1),
                               reused=True, counts=counts, details={"collections": ", ".join(self.names.values())})
        g = build.graph
        relations_of: dict[int, list[str]] = {}
        passage_entities: dict[str, set[str]] = {pid: set() for pid in g.passage_ids}
        passage_relations: dict[str, list[str]] = {pid: [] for pid in g.passage_ids}
        for n, fact in enumerate(g.facts):
            for end in (fact.subject, fact.object):
                relations_of.setdefault(end, []).append(f"r{n}")
            for pid in fact.passages:
                passage_relations[pid].append(f"r{n}")
        for i, pids in enumerate(g.phrase_passages):
            for pid in pids:
                passage_entities[pid].add(f"e{i}")
        self._write("entities", [f"e{i}" for i in range(len(g.phrases))], g.phrases, g.phrase_vectors,
                    [{"relation_ids": json.dumps(relations_of.get(i, []))} for i in range(len(g.phrases))])
        self._write("relations", [f"r{n}" for n in range(len(g.facts))], [f.text(g.phrases) for f in g.facts],
                    g.all_fact_vectors(), [{"subject_id": f"e{f.subject}", "object_id": f"e{f.object}",
                                            "passage_ids": json.dumps(f.passages)} for f in g.facts])
        self._write("passages", g.passage_ids, g.passage_ids, g.passage_vectors,
                    [{"entity_ids": json.dumps(sorted(passage_entities[pid])),
                      "relation_ids": json.dumps(passage_relations[pid])} for pid in g.passage_ids])
        return BuildReport("vector graph collections", round((time.perf_counter() - started) * 1000, 1),
                           counts=dict(self.expected), details={"collections": ", ".join(self.names.values())})

    def _write(self, kind: str, ids: Sequence[str], texts: Sequence[str], vectors: np.ndarray,
               metas: Sequence[dict]) -> None:
        collection = self.collections[kind]
        for start in range(0, len(ids), BATCH):
            end = start + BATCH
            collection.upsert(ids=list(ids[start:end]), documents=list(texts[start:end]),
                              embeddings=np.asarray(vectors[start:end], dtype=np.float32),
                              metadatas=list(metas[start:end]))

    # -- the query side: vector search and id look-ups ---------------------------------------------------
    def search(self, kind: str, vector: np.ndarray, k: int) -> list[tuple[Node, float]]:
        """The k nearest items of one collection to ``vector``, with cosine similarity."""
        collection = self.collections[kind]
        k = min(k, collection.count())
        if k <= 0:
            return []
        res = collection.query(query_embeddings=np.asarray([vector], dtype=np.float32), n_results=k,
                               include=["documents", "metadatas", "distances"])
        return [(Node(i, t or "", m or {}), 1.0 - float(d))
                for i, t, m, d in zip(res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0],
                                      strict=True)]

    def get(self, kind: str, ids: Sequence[str], vectors: bool = False) -> dict[str, Node]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        include = ["documents", "metadatas"] + (["embeddings"] if vectors else [])
        res = self.collections[kind].get(ids=list(ids), include=include)
        embeddings = res["embeddings"] if vectors else [None] * len(res["ids"])
        return {i: Node(i, t or "", m or {}, None if e is None else np.asarray(e, dtype=np.float32))
                for i, t, m, e in zip(res["ids"], res["documents"], res["metadatas"], embeddings, strict=True)}
