"""What a case is: its types, the strategy contract, loading and validation, the catalog of bundled cases.

Every other package may import ``casebook.types`` and ``casebook.contract``; casebook imports only ``llm``.
"""
