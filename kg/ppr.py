"""Personalized PageRank on a sparse matrix built once per graph.

Same definition as ``nx.pagerank(G, alpha=damping, personalization=p, weight="weight")``: the walker follows
an edge with probability ``damping`` (proportional to edge weight) and jumps back to the personalization
distribution otherwise; dangling nodes jump to the personalization distribution.
Note the naming trap: HippoRAG's damping 0.5 is nx's alpha 0.5, while some libraries call the teleport
probability "alpha" (0.15 there == damping 0.85 here).
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
import scipy.sparse as sp

ENGINES = ("auto", "sparse", "sparse32", "networkx")
# "auto": float64 below this many stored transition entries, float32 above, where the walk is memory-bound: on the
# 6,269-passage 2Wiki corpus (507,964 entries) a power-iteration walk took 38 ms in float64 and 19 ms in float32, with
# the same top-5 for all 20 questions (benchmarks/nlp_scale.py); every other set here is below it and keeps float64.
FLOAT32_ABOVE_NNZ = 400_000
PARALLEL_MIN_NNZ = 200_000   # below this a matrix-vector product takes ~0.2 ms: threads would cost more than save
# The L1 error the walk guarantees when it stops (see _iterate). float32 (only used on large graphs, where the walk's
# time matters) stops at 1e-5: its iterate carries ~1e-7 of rounding noise, and 1e-5 ranked the top 10 exactly as
# 1e-6 did for all 174 questions tried (HippoRAG forced onto sparse32 on musique_train100, 2wiki_first20,
# musique_tiny20 and the bundled case, and the 6,269-passage corpus's 20), measured with the power iteration.
DEFAULT_TOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


@dataclass
class PPRResult:
    scores: np.ndarray
    iterations: int
    converged: bool


class PPRMatrix:
    def __init__(self, n: int, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray,
                 dtype: type = np.float64):
        """Build from an undirected edge list (each edge once); weights must be positive.

        ``dtype`` float32 halves the bytes streamed per iteration (the cost at scale) for scores within ~1e-7.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        sym_r = np.concatenate([rows, cols[rows != cols]])
        sym_c = np.concatenate([cols, rows[rows != cols]])
        sym_w = np.concatenate([weights, weights[rows != cols]])
        adj = sp.csr_matrix((sym_w, (sym_r, sym_c)), shape=(n, n))
        self.adjacency = adj  # symmetric; kept for path explanations
        self.strength = np.asarray(adj.sum(axis=1)).ravel()
        inv = np.zeros(n)
        nonzero = self.strength > 0
        inv[nonzero] = 1.0 / self.strength[nonzero]
        # Column-oriented transition matrix: x_next = T @ x with T[j, i] = w_ij / strength_i.
        self.transition_t = (sp.diags(inv) @ adj).T.tocsr().astype(dtype)
        self.dtype = np.dtype(dtype)
        self.n = n
        # A large matrix is cut into row blocks of equal work, multiplied on as many threads as there are cores
        # (scipy releases the GIL there); a small one is not worth the hand-off.
        cores = min(os.cpu_count() or 1, 8)
        self._blocks: list[sp.csr_matrix] = []
        self._pool: ThreadPoolExecutor | None = None
        if cores > 1 and self.transition_t.nnz >= PARALLEL_MIN_NNZ:
            indptr = self.transition_t.indptr
            cuts = [0, *(int(np.searchsorted(indptr, self.transition_t.nnz * k / cores)) for k in range(1, cores)), n]
            self._blocks = [self.transition_t[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
            self._pool = ThreadPoolExecutor(len(self._blocks), thread_name_prefix="ppr")

    def _step(self, x: np.ndarray) -> np.ndarray:
        """T @ x, by row blocks in parallel when the matrix is large."""
        if self._pool is None:
            return self.transition_t @ x
        return np.concatenate(list(self._pool.map(lambda block: block @ x, self._blocks)))

    @cached_property
    def step_costs(self) -> sp.csr_matrix:
        """-log of the walker's probability of each step a -> b, for most-probable-path searches."""
        coo = self.adjacency.tocoo()
        # A sure step costs 0, which a sparse graph would read as "no edge": keep it a hair above.
        costs = np.maximum(-np.log(coo.data / self.strength[coo.row]), 1e-12)
        return sp.csr_matrix((costs, (coo.row, coo.col)), shape=self.adjacency.shape)

    def run(self, personalization: np.ndarray, damping: float = 0.5, tol: float | None = None,
            max_iter: int = 500) -> PPRResult:
        """Power iteration until the L1 change is below ``tol`` (by default: what the dtype can resolve)."""
        return self._iterate(_distribution(personalization, self.n).astype(self.dtype), damping, tol, max_iter)

    def run_many(self, personalizations: np.ndarray, damping: float = 0.5, tol: float | None = None,
                 max_iter: int = 500) -> PPRResult:
        """Several walks at once, one per column of ``personalizations`` (n x k): one sparse matrix-matrix
        product per iteration streams the matrix once for all k. Stops when every column has converged."""
        cols = np.asarray(personalizations)
        if cols.ndim != 2:
            raise ValueError("personalizations must be an n x k array, one column per walk")
        p = np.stack([_distribution(c, self.n) for c in cols.T], axis=1).astype(self.dtype)
        return self._iterate(p, damping, tol, max_iter)

    def _iterate(self, p: np.ndarray, damping: float, tol: float | None, max_iter: int) -> PPRResult:
        """Solve (I - damping T) y = p by Chebyshev iteration; the walk's scores are y / sum(y).

        PageRank's fixed point x = damping (T x + dangling mass x p) + (1 - damping) p is proportional to y: the
        dangling term only scales p. T is similar to a symmetric matrix (D^-1/2 A D^-1/2, eigenvalues in [-1, 1]),
        so I - damping T has its spectrum in [1 - damping, 1 + damping], and Chebyshev's polynomials on that
        interval shrink the error by (sqrt(k) - 1) / (sqrt(k) + 1), k = (1 + damping) / (1 - damping), a step:
        0.27 at damping 0.5 where the power iteration's worst case is 0.5. Measured (benchmarks/walk_agreement.py):
        a median 21 matrix products a walk instead of 27 on the float64 sets, the same 12 on the float32 corpus,
        whose error the power iteration already shrank faster than its worst case.
        It stops when the L1 residual r guarantees what the power iteration's stop did (an L1 error below
        tol x damping / (1 - damping)): ||y - y*|| <= ||r|| / (1 - damping), and normalizing at most doubles it.
        """
        tol = DEFAULT_TOL.get(self.dtype, 1e-10) if tol is None else tol
        stop = tol * damping / 2
        # Saad, Iterative Methods for Sparse Linear Systems, Algorithm 12.1, from y = 0 (so r = p).
        centre, half_width = 1.0, damping
        sigma = centre / half_width
        rho = 1.0 / sigma
        y = np.zeros_like(p)
        r = p.copy()
        step = r / centre
        for it in range(1, max_iter + 1):
            y += step
            r -= step - damping * self._step(step)
            if np.abs(r).sum(axis=0).max() < stop:
                return PPRResult(_normalized(y), it, True)
            rho_next = 1.0 / (2.0 * sigma - rho)
            step *= rho_next * rho
            step += (2.0 * rho_next / half_width) * r
            rho = rho_next
        return PPRResult(_normalized(y), max_iter, False)


def _normalized(y: np.ndarray) -> np.ndarray:
    """Each column clipped at 0 (Chebyshev's iterate can dip a rounding error below it) and summed to 1."""
    y = np.maximum(y, 0, out=y)
    return y / y.sum(axis=0)


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
