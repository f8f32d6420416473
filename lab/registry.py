"""The strategy registry: a new retrieval strategy is one module plus one line in ``REGISTRY``.

Plugins outside the project add theirs with ``register`` (the CLI's ``--plugin MODULE`` imports such a module).
"""
from __future__ import annotations

import importlib

from core.contract import Strategy
from hipporag import HIPPORAG, HIPPORAG_V1
from hubmesh_rag import HUBMESH
from hybrid import HYBRID
from investigate import INVESTIGATE, INVESTIGATE_WALK
from lexical import BM25
from naive_rag import NAIVE
from three_stage import THREE_STAGE
from vector_graph import VECTOR_GRAPH

REGISTRY: dict[str, Strategy] = {s.name: s for s in [
    NAIVE,
    HIPPORAG,
    HIPPORAG_V1,
    BM25,
    HYBRID,
    THREE_STAGE,
    VECTOR_GRAPH,
    HUBMESH,
    INVESTIGATE,
    INVESTIGATE_WALK,
]}

DEFAULT_STRATEGIES = ("naive", "hipporag")


def get(name: str) -> Strategy:
    if name not in REGISTRY:
        raise KeyError(f"unknown strategy {name!r}; available: {', '.join(REGISTRY)}")
    return REGISTRY[name]


def register(strategy: Strategy) -> Strategy:
    """Add (or replace) a strategy; the CLI, app, reports and benchmarks pick it up from here."""
    REGISTRY[strategy.name] = strategy
    return strategy


def unregister(name: str) -> None:
    REGISTRY.pop(name, None)


def load_plugin(module: str) -> None:
    """Import a module that calls ``register``; ImportError names the module."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"cannot import strategy plugin {module!r}: {exc}") from None
