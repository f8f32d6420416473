"""Personalized PageRank on a sparse matrix built once per graph.

Same definition as ``nx.pagerank(G, alpha=damping, personalization=p, weight="weight")``: the walker follows
an edge with probability ``damping`` (proportional to edge weight) and jumps back to the personalization
distribution otherwise; dangling nodes jump to the personalization distribution.
Note the naming trap: HippoRAG's damping 0.5 is nx's alpha 0.5, while some libraries call the teleport
probability "alpha" (0.15 there == damping 0.85 here).
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp

ENGINES = ("sparse", "networkx")


@dataclass
class PPRResult:
    scores: np.ndarray
    iterations: int
    converged: bool


class PPRMatrix:
    def __init__(self, n: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray):
        """Build from an undirected edge list (each edge once); weights must be positive."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        sym_r = np.concatenate([rows, cols[rows != cols]])
        sym_c = np.concatenate([cols, rows[rows != cols]])
        sym_w = np.concatenate([weights, weights[rows != cols]])
        adj = sp.csr_matrix((sym_w, (sym_r, sym_c)), shape=(n, n))
        self.adjacency = adj  # symmetric; kept for path explanations
        self.strength = np.asarray(adj.sum(axis=1)).ravel()
        self.dangling = self.strength == 0
        inv = np.zeros(n)
        inv[~self.dangling] = 1.0 / self.strength[~self.dangling]
        # Column-oriented transition matrix: x_next = T @ x with T[j, i] = w_ij / strength_i.
        self.transition_t = (sp.diags(inv) @ adj).T.tocsr()
        self.n = n

    def run(self, personalization: np.ndarray, damping: float = 0.5, tol: float = 1e-10,
            max_iter: int = 500) -> PPRResult:
        """Power iteration until the L1 change is below ``tol``."""
        p = _distribution(personalization, self.n)
        x = p.copy()
        for it in range(1, max_iter + 1):
            dangling_mass = x[self.dangling].sum()
            x_next = damping * (self.transition_t @ x + dangling_mass * p) + (1.0 - damping) * p
            err = np.abs(x_next - x).sum()
            x = x_next
            if err < tol:
                return PPRResult(x, it, True)
        return PPRResult(x, max_iter, False)


def networkx_pagerank(graph: nx.Graph, personalization: np.ndarray, damping: float = 0.5, tol: float = 1e-10,
                      max_iter: int = 500) -> PPRResult:
    """``nx.pagerank`` itself, the reference engine; the graph's nodes must be the integers 0..n-1.

    nx stops when the L1 change is below n x its ``tol``, so it gets ``tol / n`` to stop where ``run`` does.
    """
    n = graph.number_of_nodes()
    p = _distribution(personalization, n)
    try:
        ranks = nx.pagerank(graph, alpha=damping, personalization={i: float(v) for i, v in enumerate(p) if v > 0},
                            weight="weight", tol=tol / n, max_iter=max_iter)
    except nx.PowerIterationFailedConvergence:
        return PPRResult(p, max_iter, False)
    return PPRResult(np.array([ranks[i] for i in range(n)]), 0, True)   # nx does not say how many iterations


def _distribution(personalization: np.ndarray, n: int) -> np.ndarray:
    p = np.asarray(personalization, dtype=np.float64)
    if p.shape != (n,) or (p < 0).any() or p.sum() <= 0:
        raise ValueError("personalization must be a non-negative vector with a positive sum, one entry per node")
    return p / p.sum()
