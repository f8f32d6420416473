"""Investigation mode: rounds of retrieval, each following the leads a reader picks from what the last one found."""
from .merge import merged
from .readers import LLMReader, Namer, Reader, Reading, StepReader, SuspectNamer, WalkReader
from .retriever import InvestigateRetriever
from .settings import READINGS, InvestigateSettings
from .strategy import INVESTIGATE, INVESTIGATE_WALK, LEADS, LEADS_ONLY, build_with, leads_only, llm_namer, llm_readers

__all__ = ["INVESTIGATE", "INVESTIGATE_WALK", "LEADS", "LEADS_ONLY", "READINGS", "InvestigateRetriever",
           "InvestigateSettings", "LLMReader", "Namer", "Reader", "Reading", "StepReader", "SuspectNamer", "WalkReader",
           "build_with", "leads_only", "llm_namer", "llm_readers", "merged"]
