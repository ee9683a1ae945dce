"""The offline answer's own words: its abstentions, its unsure notes, the citation that closes each cited sentence,
and a chain's links stated in order.

The citation check reads the same openings (`ABSTENTION_PREFIX`, `UNSURE_PREFIX`) to tell an abstention from a claim,
and the app reads them to show an unsure answer as such.
"""

from __future__ import annotations

from components.generation.question_analysis import QuestionPart

# Every abstention the product writes starts with this, so the citation check can tell it from a claim.
ABSTENTION_PREFIX = "The sources do not answer"
NO_SOURCES_ANSWER = f"{ABSTENTION_PREFIX} this: no source returned anything for this question."
NO_EVIDENCE_ANSWER = f"{ABSTENTION_PREFIX} this question; the closest passages are listed below."
# An answer whose short answer fell below the confidence threshold says so with a sentence starting with this.
UNSURE_PREFIX = "Not sure of the short answer"
# The line an answer without a headline gives after its best cited sentence.
UNSURE_NOTE = f"{UNSURE_PREFIX}; the cited sentences are what the sources say."
# The lines that name parts of the question (`str.format` fields: `part` is a part's words; `parts` are the parts'
# words, each quoted, joined by "; "): a part below the confidence threshold, the parts no sentence answers (the rest
# are answered), and the parts of a question none of whose parts is answered.
UNSURE_PART_LINE = f'{UNSURE_PREFIX} to "{{part}}".'
PARTIAL_ABSTENTION = f"{ABSTENTION_PREFIX} this part of the question: {{parts}}."
PARTS_ABSTENTION = f"{ABSTENTION_PREFIX} this question ({{parts}}); the closest passages are listed below."


def abstain(parts: list[QuestionPart], partial: bool = False) -> str:
    """The abstention: which part the sources do not answer."""
    asked = "; ".join(f"“{part.as_asked}”" for part in parts)
    if partial:
        return PARTIAL_ABSTENTION.format(parts=asked)
    if len(parts) > 1:
        return PARTS_ABSTENTION.format(parts=asked)
    return NO_EVIDENCE_ANSWER


def state_chain(links: list[str]) -> str:
    """A chain's links, in order, each its own cited sentence as the chunk states it ("X was directed by A [1]. A was
    born in B [2]."): each claim is checked against the chunk it cites, and the reader sees which source says what.
    One line of the answer, so the unsure note follows the whole chain."""
    return " ".join(dict.fromkeys(links))


def cite_sentence(sentence: str, number: int) -> str:
    """The sentence with its citation before the final stop: `... [n].`."""
    return f"{sentence.strip().removesuffix('.').rstrip()} [{number}]."
