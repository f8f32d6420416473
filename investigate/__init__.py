"""Investigation mode: rounds of retrieval, each following the leads a reader picks from what the last one found."""
from .readers import LLMReader, Reader, Reading, WalkReader
from .retriever import InvestigateRetriever, InvestigateSettings, merged
from .strategy import INVESTIGATE, INVESTIGATE_WALK, build_with, llm_reader

__all__ = ["INVESTIGATE", "INVESTIGATE_WALK", "InvestigateRetriever", "InvestigateSettings", "LLMReader", "Reader",
           "Reading", "WalkReader", "build_with", "llm_reader", "merged"]
