"""What every strategy shares: the case types and loader, the answer step, metrics, the runner.

Retrievers import only ``casebook.types``, the leaf vocabulary; the rest of casebook imports them.
"""
