"""Generation: the answer (extractive offline, or an OpenAI-compatible chat model), its citations and their check."""

from components.generation.citation_checker import CitationChecker
from components.generation.cited_answer_builder import CitedAnswerBuilder, cited_numbers
from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from components.generation.research_generator import ResearchGenerator

__all__ = ["CitationChecker", "CitedAnswerBuilder", "ExtractiveAnswerGenerator", "ResearchGenerator", "cited_numbers"]
