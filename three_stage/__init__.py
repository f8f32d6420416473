"""The 3-stage pipeline (seed 004): hybrid always, a cheap graph boost always, graph expansion only when earned."""
from .strategy import THREE_STAGE, ThreeStageRetriever

__all__ = ["THREE_STAGE", "ThreeStageRetriever"]
