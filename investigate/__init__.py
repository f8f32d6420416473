"""Investigation mode: rounds of retrieval, each following the leads a reader picks from what the last one found."""
from .readers import LLMReader, Reader, Reading, StepReader, WalkReader
from .retriever import READINGS, InvestigateRetriever, InvestigateSettings, merged
from .strategy import INVESTIGATE, INVESTIGATE_WALK, LEADS, LEADS_ONLY, build_with, leads_only, llm_readers

__all__ = ["INVESTIGATE", "INVESTIGATE_WALK", "LEADS", "LEADS_ONLY", "READINGS", "InvestigateRetriever",
           "InvestigateSettings", "LLMReader", "Reader", "Reading", "StepReader", "WalkReader", "build_with",
           "leads_only", "llm_readers", "merged"]
