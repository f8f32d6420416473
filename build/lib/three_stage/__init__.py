"""The 3-stage pipeline: hybrid always, a cheap graph boost always, graph expansion only when earned."""
from .retriever import ThreeStageRetriever, ThreeStageSettings
from .strategy import THREE_STAGE

__all__ = ["THREE_STAGE", "ThreeStageRetriever", "ThreeStageSettings"]
