"""The floor under every strategy: the types that travel (case, passage, retrieval, explanation), the strategy
contract (Strategy, Param, BuildContext, Product) and where indexes are stored.

Every other package may import ``core``; core imports only ``llm``.
"""
