"""The knowledge graph as an interactive pyvis (vis-network) page that works offline.

Labels and tooltips are plain text all the way: pyvis serialises node data with Jinja's ``tojson`` (which
escapes <, > and &), vis-network draws labels on a canvas and sets tooltips with ``innerText``. We never
enable pyvis features that write titles as HTML, and never set its (unescaped) heading.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from .graph import KnowledgeGraph

ENTITY_COLOR, PASSAGE_COLOR, SEED_COLOR, MATCH_COLOR = "#4c78a8", "#f58518", "#e45756", "#54a24b"
# A lead-following strategy's seeds, one colour per round (round 1 is the question's: the usual seed red).
ROUND_COLORS = (SEED_COLOR, "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22")
ROUND_COLOR_NAMES = ("red", "purple", "cyan", "brown", "pink", "olive")
MAX_LABEL = 60
_REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=[\"']https?://[^>]*>\s*</script>", re.IGNORECASE)
_REMOTE_LINK = re.compile(r"<link[^>]*\bhref=[\"']https?://[^>]*>", re.IGNORECASE)


def plain(text: str, limit: int = MAX_LABEL) -> str:
    """Printable text only (no control characters), shortened for display."""
    text = "".join(ch for ch in str(text) if unicodedata.category(ch)[0] != "C" or ch == " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def select_nodes(graph: KnowledgeGraph, max_nodes: int, focus: set[int] | None = None,
                 scores: dict[int, float] | None = None) -> list[int]:
    """Which nodes to draw: all of a small graph; else the focus, the best-scored and the best-connected."""
    if graph.n_nodes <= max_nodes:
        return list(range(graph.n_nodes))
    g = graph.to_networkx()
    strength = dict(g.degree(weight="weight"))
    chosen = list(dict.fromkeys(sorted(focus or ())))
    if scores:
        chosen += [n for n, _ in sorted(scores.items(), key=lambda kv: -kv[1])]
    for n in sorted(focus or ()):  # neighbours of the focus nodes, strongest first
        chosen += sorted(g.adj[n], key=lambda m: -strength[m])
    chosen += sorted(strength, key=lambda m: -strength[m])
    return list(dict.fromkeys(chosen))[:max_nodes]


LABEL_PX = 18                 # node label size at scale 1
MIN_SCALE = round(12 / LABEL_PX, 3)   # the zoom below which labels would be under 12 px


def graph_html(graph: KnowledgeGraph, *, highlight: str = "", scores: dict[int, float] | None = None,
               seeds: set[int] | None = None, max_nodes: int = 250, height: str = "560px",
               titles: Mapping[str, str] | None = None,
               seed_rounds: Sequence[set[int]] = ()) -> tuple[str, dict]:
    """HTML for the graph (self-contained: vis-network in line) and what was drawn; ``titles`` (passage id ->
    title) go into the passage boxes' hover text; ``seed_rounds`` (each round's seed nodes) colour the seeds
    by the round that first started from them."""
    from pyvis.network import Network

    needle = highlight.casefold().strip()
    matches = {i for i, label in enumerate(graph.phrases) if needle and needle in label.casefold()}
    round_of: dict[int, int] = {}
    for r, round_seeds in enumerate(seed_rounds):
        for n in round_seeds:
            round_of.setdefault(n, r)
    seeds = set(seeds or ()) | set(round_of)
    focus = seeds | matches
    nodes = select_nodes(graph, max_nodes, focus=focus or None, scores=scores)
    shown = set(nodes)
    net = Network(height=height, width="100%", cdn_resources="in_line", bgcolor="#ffffff")
    top = max(scores.values()) if scores else 0.0
    facts_of: dict[int, list[str]] = {}  # one pass over the facts, not one per drawn node
    for f in graph.facts:
        for end in {f.subject, f.object} & shown:
            facts_of.setdefault(end, []).append(f.text(graph.phrases))
    for n in nodes:
        is_passage = graph.node_kind(n) == "passage"
        label = plain(graph.node_label(n))
        if is_passage:
            j = n - len(graph.phrases)
            pid = graph.passage_ids[j]
            title = f"passage {pid}" + (f": {plain(titles[pid], 120)}" if titles and pid in titles else "")
        else:
            facts = facts_of.get(n, [])[:8]
            title = f"{graph.phrases[n]}\n" + "\n".join(f"- {plain(t, 120)}" for t in facts)
        color = ROUND_COLORS[min(round_of[n], len(ROUND_COLORS) - 1)] if n in round_of else \
            SEED_COLOR if n in seeds else MATCH_COLOR if n in matches else \
            PASSAGE_COLOR if is_passage else ENTITY_COLOR
        size = 12 if is_passage else 8
        if scores and top > 0:
            size = 6 + 30 * (scores.get(n, 0.0) / top) ** 0.5
            title += f"\nPPR mass: {scores.get(n, 0.0):.4f}"
        net.add_node(int(n), label=label, title=title, color=color, size=float(size),
                     shape="box" if is_passage else "dot", borderWidth=3 if n in focus else 1)
    g = graph.to_networkx()
    drawn = 0
    for r, c, data in g.subgraph(shown).edges(data=True):
        kind = data["kind"]
        title = "; ".join(data["relations"]) if kind == "relation" else kind
        net.add_edge(int(r), int(c), title=plain(title, 120), value=float(data["weight"]),
                     dashes=kind == "synonym", color="#bbbbbb" if kind == "mention" else
                     "#9467bd" if kind == "synonym" else "#555555")
        drawn += 1
    # Labels drawn large with a white halo so they stay readable once the whole graph is fitted into the frame.
    # A fixed layout seed: searching or highlighting redraws the same picture, not a new one.
    net.set_options('{"layout": {"randomSeed": 7},'
                    ' "physics": {"stabilization": {"iterations": 150}, "barnesHut": {"springLength": 110}},'
                    ' "nodes": {"font": {"size": ' + str(LABEL_PX) + ', "strokeWidth": 4, "strokeColor": "#ffffff"}},'
                    ' "interaction": {"hover": true, "tooltipDelay": 120, "navigationButtons": false}}')
    html = net.generate_html(notebook=False)
    # pyvis's template also pulls Bootstrap from a CDN for menus we do not use: drop every remote resource so
    # the page renders offline without waiting on blocked connections.
    html = _REMOTE_SCRIPT.sub("", html)
    html = _REMOTE_LINK.sub("", html)
    # Zoom to fit once the layout settles; a graph inside a hidden tab or expander lays out at zero width, so
    # refit whenever the frame resizes too. Never below MIN_SCALE: a large graph is shown in part, its labels at
    # 12 px or more, rather than whole with labels nobody can read (zoom out or drag to see the rest).
    fit = (f"function () {{ network.fit(); if (network.getScale() < {MIN_SCALE}) {{"
           f" network.moveTo({{scale: {MIN_SCALE}}}); }} }}")
    html = html.replace("</body>", "<script>if (typeof network !== 'undefined') {"
                                   f" network.once('stabilizationIterationsDone', {fit});"
                                   f" window.addEventListener('resize', {fit}); }}"
                                   "</script></body>")
    return html, {"nodes": len(nodes), "edges": drawn, "total_nodes": graph.n_nodes,
                  "total_edges": g.number_of_edges(), "matches": len(matches)}
