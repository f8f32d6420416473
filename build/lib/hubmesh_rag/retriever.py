"""The hubmesh retriever: the package's planner over our Chroma collection, its result turned into an explanation."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.contract import setting, settings_with
from core.types import Evidence, Explanation, PathStep, Retrieval, Seed
from indexes import VectorIndex
from llm import Embedder

UNLIMITED_TOKENS = 10**9   # hubmesh packs to a token budget; the lab compares top-k lists, so the budget never binds


@dataclass(frozen=True)
class HubmeshSettings:
    entities: str = setting("spacy", "where the entity graph's entities come from: spaCy NER, or the knowledge "
                            "graph's OpenIE phrases", choices=("spacy", "openie"), build_time=True)
    seed_entities: str = setting("", "extra entity names (comma-separated) that join the question's own as PageRank "
                                 "seeds: steer the walk")
    exclude_docs: str = setting("", "passage ids (comma-separated) hubmesh must not return, e.g. ones already read")


class HubmeshRetriever:
    def __init__(self, planner, kg, index: VectorIndex, embedder: Embedder, settings: HubmeshSettings = HubmeshSettings()):
        self.planner, self.kg, self.index, self.embedder, self.settings = planner, kg, index, embedder, settings

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        p = settings_with(self.settings, params)
        text = " ".join([question.strip(), *expansions])
        ex = Explanation(method="hubmesh: cosine relevance + PageRank diffusion over its entity-document graph + "
                                "multi-anchor convergence; zero LLM tokens", queries=[text])
        with ex.stage("embed"):
            vector = self.embedder.embed([text])[0]
        injected = _names(p.seed_entities)
        with ex.stage("hubmesh", "question NER, PageRank, scoring, packing"):
            result = self.planner.retrieve(text, top_k=top_k, budget_tokens=UNLIMITED_TOKENS, query_vec=vector,
                                           seed_entities=injected or None,
                                           exclude_docs=_names(p.exclude_docs) or None)
        label = self.kg.entity_node_to_label
        mentions = result.debug.get("query_mentions", [])
        linked = self.kg.query_entity_nodes(mentions) + (self.kg.query_entity_nodes(injected) if injected else [])
        seeds = result.debug.get("ppr_seeds", [])
        ex.seeds = [Seed(label.get(s, s), round(1 / len(seeds), 6)) for s in seeds]
        if not self.kg.entity_to_docs:
            ex.fallback = "no entity was found in the documents: ranked by cosine relevance alone"
        elif not linked:
            ex.fallback = ("the question names no entity of the graph: the walk starts from the entities of the top "
                           "cosine passages (hubmesh's fallback)")
        ex.evidence = [Evidence(f"{s.doc.id}: cosine {s.similarity:.3f}, PageRank {s.ppr_score:.5f}",
                                round(s.composite_score, 6), True, "composite score") for s in result.sources]
        for m in mentions:
            known = bool(self.kg.query_entity_nodes([m]))
            ex.evidence.append(Evidence(f"question mention '{m}'", 1.0, known,
                                        "linked to the graph" if known else "not in the graph"))
        ex.paths = {path.node_ids[-1][4:]: [self._step(a, b) for a, b in zip(path.node_ids, [*path.node_ids[1:], None],
                                                                            strict=True)]
                    for path in result.reasoning if path.node_ids[-1].startswith("doc:")}
        return Retrieval([(s.doc.id, float(s.composite_score)) for s in result.sources], ex)

    def _step(self, node: str, nxt: str | None) -> PathStep:
        graph = self.kg.graph
        kind = "passage" if node.startswith("doc:") else "entity"
        name = node[4:] if kind == "passage" else self.kg.entity_node_to_label.get(node, node)
        relation = "" if nxt is None else {"mentions": "mentions" if kind == "passage" else "mentioned in",
                                           "co_occurs": "appears with"}.get(graph.edges[node, nxt].get("kind"), "")
        return PathStep(name, kind, relation)


def _names(text: object) -> list[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]
