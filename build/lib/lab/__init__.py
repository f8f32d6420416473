"""Running a comparison: the strategy registry, the runner, the answer step, query expansion, metrics, reports.

Dependencies point one way: the app, the CLI and the benchmarks use ``lab``; ``lab`` uses the strategies
(naive_rag, hipporag, lexical) and the shared knowledge graph (kg); they use ``casebook`` and ``llm``.
"""
