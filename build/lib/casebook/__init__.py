"""What a case is on disk: loading and validation, the catalog of bundled cases, the mystery generator.

The case types themselves live in ``core.types``; casebook imports only ``core``.
"""
