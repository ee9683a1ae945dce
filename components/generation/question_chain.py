"""A chain question cut at its innermost description: "Who directed the film that was shot in Brindlemoor in 1979?"
asks first what the film shot there is (the hop), then who directed that film (the rest, with the hop's answer in
the description's place).

A description is a noun phrase the question uses to point at something it does not name: a noun with a relative or
participial clause ("the film that was shot in ...", "the county in which X is located", "the book named after ..."),
with an "of" phrase holding a name ("the composer of X") or with a name's possessive ("X's birthplace"; not "X's Summit
conference", which names its own). The innermost one (no other description inside it) is asked first, as a question
of its own ("What is the film that was shot in ...?"); the question then reads again with its answer in place, and
may hold a further description (a chain of up to three hops).

A question whose wh-word sits inside the clause of a noun ("Marta Quell starred in a drama that was filmed in what
country?") is cut at that noun when no description is: which drama is asked first ("Marta Quell starred in what
drama?"), then the clause of it ("<drama> was filmed in what country?"). A relative clause the parse hangs from an
earlier noun is read as the clause of the noun its relative word follows ("the name of the lake in the region where
...").

A contact relative clause, one with no relative word that ends in its stranded preposition ("What currency predated
the Euro in the country Veltro is from?"), is one the parse breaks (it reads the clause's verb as the question's
own); it is read from the words' order and tags instead, and asked as a clause of its name ("Veltro is from what
country?").

Only the question's syntax is read (spaCy's dependency parse): no wording of any question set. A description is not
cut out when the rest of the question would ask nothing of it: "Who was the president that signed X?" or "What is
the name of the team that won X?" ask for the described thing itself.

Usage:
```python
cut = decompose("Who directed the film that was shot in Brindlemoor in 1979?")
cut.hop, cut.rest("Pale Orchard")
# 'What is the film that was shot in Brindlemoor in 1979?', 'Who directed Pale Orchard?'
```
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from components.generation.question_analysis import WH_WORDS
from components.text.language import language_pipeline, parse_syntax, parts_of_speech_from_parse, syntax_tags

# The clause dependencies that make a noun a description ("the film that was shot ...", "the book named after ...").
CLAUSE_DEPS = frozenset({"relcl", "acl"})
# Words that open a relative clause, dropped from the hop's question ("which", "where" ...): general English.
RELATIVIZERS = frozenset({"which", "that", "who", "whom", "whose", "where", "when"})
# Nouns that name no relation of their own: "the name of X", "the kind of X" ask for X itself (general English).
LIGHT_NOUNS = frozenset({"name", "title", "term", "kind", "type", "sort", "one", "thing", "part"})
# The dependencies of a wh-word that is one side of a copula ("What was the population of X?" asks for the population
# itself); an adverbial one ("Where was the director of X born?", "When was ...") asks something else of the noun.
COPULA_SIDES = frozenset({"attr", "nsubj", "nsubjpass", "acomp"})
# The parts of speech every description needs (`_description_end`): its noun, and a name to look it up by.
DESCRIPTION_POS = frozenset({"NOUN", "PROPN"})
# The tags of a finite verb: a contact clause's own verb ("the country X is from"); after "do" the question's verb is
# bare ("What does the acronym X stand for?"), general English.
FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
DO_FORMS = frozenset({"do", "does", "did"})
# Where a question's "do" after its wh-phrase stands at the latest ("In what year did ..."), and the tags of its bare
# verb at the question's end (the parse may also read it as a singular noun, "NN").
MAX_WH_PHRASE = 4
BARE_VERB_TAGS = frozenset({"VB", "VBP"})
# What may stand between a contact clause's verb and its stranded preposition ("is part of", "was born in").
CLAUSE_POS = frozenset({"AUX", "VERB", "ADV", "PART", "NOUN", "ADJ"})
# Parts of speech that carry what the rest of the question asks of the described thing.
CONTENT_POS = frozenset({"NOUN", "VERB", "ADJ", "NUM", "PROPN"})


@dataclass(frozen=True)
class ChainCut:
    """A question cut at its innermost description: the `hop` to ask first and the rest around the description."""

    hop: str
    before: str
    after: str
    # The hop is a clause of its own ("X is part of what company?", `_contact_clause`), an event a sentence states.
    clause: bool = False

    def rest(self, answer: str) -> str:
        """The question again, with the hop's answer in the description's place."""
        return f"{self.before}{answer}{self.after}"


@lru_cache(maxsize=1024)
def decompose(question: str) -> ChainCut | None:
    """The question cut at its innermost description (see the module's doc), or None when it holds none that the rest
    of the question asks something of. Read once per question text: the hop stage and the answer both ask it of the
    same question (a `ChainCut` is immutable). A question without a wh-word (by its tokens), or without both a
    lower-case noun and a proper noun (by its tags, where no part of speech a description needs can come from the
    parse alone: `parts_of_speech_from_parse`), holds no description the parse could find, and is not parsed."""
    if not any(token.lower_ in WH_WORDS for token in language_pipeline().make_doc(question)):
        return None
    if DESCRIPTION_POS.isdisjoint(parts_of_speech_from_parse()):
        tags = syntax_tags(question)
        if tags is not None and not _may_describe(tags):
            return None
    doc = parse_syntax(question)
    clauses = [token for token in doc if token.dep_ in CLAUSE_DEPS]
    wh = {
        token.i
        for token in doc
        if token.lower_ in WH_WORDS and not any(_relativizer(token, clause) for clause in clauses)
    }
    if not wh:
        return None
    closing = _closing_verb(doc)
    found = []
    for noun in doc:
        if noun.pos_ != "NOUN" or not noun.text.islower() or noun.i in wh or noun.lemma_.lower() in LIGHT_NOUNS:
            continue  # a capitalised noun is part of a name ("the World Drivers' Championship"), no description
        if noun == closing:
            continue  # the question's own verb, read as a noun
        if noun.head.lemma_ == "be" and any(
            child.i in wh and child.dep_ in COPULA_SIDES for child in noun.head.children
        ):
            continue  # "What was the population of X?": the wh-word asks for it directly, no hop
        right = _description_end(noun, closing)
        if right is None:
            continue
        left = _noun_start(noun)
        if closing is not None and left <= closing.i < right:
            right = closing.i  # the question's own verb (and its particle) swallowed: given back
        # The description asked as a question of its own: "What is the film that was shot in ...?"
        hop = f"What is {doc[left:right].text}?"
        if wh & set(range(left, right)):
            continue  # the question's own gap lies inside: it asks about the description, not through it
        found.append((right - left, left, right, hop))
    for _, left, right, hop in sorted(found):
        if any(
            left <= inner_left and inner_right <= right and (inner_left, inner_right) != (left, right)
            for _, inner_left, inner_right, _ in found
        ):
            continue  # another description lies inside this one: that one is asked first
        outside = [token for token in doc if not left <= token.i < right]
        if not _asks_of(outside, wh):
            continue
        before = doc[:left].text_with_ws if left else ""
        after = doc[right - 1].whitespace_ + doc[right:].text if right < len(doc) else ""
        return ChainCut(hop=hop, before=before, after=after)
    return _asked_in_its_clause(doc, wh, clauses) or _contact_clause(doc, wh)


def _asked_in_its_clause(doc: Any, wh: set[int], clauses: list[Any]) -> ChainCut | None:
    """A question whose wh-word sits in the clause of a noun the rest of it says something of: "Nadia Vell starred in
    a series that first aired on what network?" asks first which series ("Nadia Vell starred in what series?"), then
    the clause of it ("<series> first aired on what network?"). The noun must be no predicate of the question's
    subject ("X is a consultant who worked with the mayor of what city?" describes X, a single hop) nor in apposition
    to another ("X, a consultant who worked with ..." is X again), and the rest outside the clause must hold a name
    (what the first hop is looked up by). The noun may sit inside another clause ("X is a song included in the album
    Y by a singer that has sold how many records?" asks "... by what singer?", then "<singer> has sold how many
    records?"): the innermost clause holding the wh-word is cut."""
    if len(wh) != 1:
        return None  # one wh-word, one clause to cut at
    for clause in sorted(clauses, key=lambda token: token.i, reverse=True):  # the innermost clause first
        noun = clause.head
        inside = {token.i for token in clause.subtree}
        if not wh <= inside or clause.pos_ not in {"VERB", "AUX"}:
            continue
        if noun.pos_ != "NOUN" or not noun.text.islower() or noun.dep_ in {"attr", "ROOT", "appos"}:
            continue  # a predicate of the subject, or a noun in apposition to a name, is that thing itself
        if noun.lemma_.lower() in LIGHT_NOUNS:
            continue
        start, end = min(inside), max(inside) + 1
        outside = [token for token in doc if token.i not in inside and not token.is_punct]
        if not any(token.pos_ == "PROPN" for token in outside):
            continue
        # The hop: the question without the clause, the noun asked for by "what" in its determiner's place.
        words = [
            "what " if token.i == _noun_start(noun) and token.dep_ == "det" else token.text_with_ws
            for token in doc
            if token.i not in inside and not (token.is_punct and token.i >= end)
        ]
        if not any(token.dep_ == "det" and token.head.i == noun.i for token in doc):
            words.insert(_noun_start(noun), "what ")
        hop = "".join(words).strip()
        hop = f"{hop[:1].upper()}{hop[1:]}?"
        # The rest: the clause said of the hop's answer, its relative word gone ("whose" as the answer's possessive).
        first = doc[start]
        after = doc[start + 1 :] if first.lower_ in RELATIVIZERS else doc[start:]
        owner = "'s" if first.lower_ == "whose" else ""
        rest = doc[after.start : end].text if after.start < end else ""
        if not rest:
            continue
        return ChainCut(hop=hop, before="", after=f"{owner} {rest}?")
    return None


def _contact_clause(doc: Any, wh: set[int]) -> ChainCut | None:
    """A description by a contact relative clause, one without a relative word, that ends in its stranded
    preposition: "What currency predated the Euro in the country Veltro is from?", "What year did the company Marrow
    Air is part of dissolve?". The parse reads the clause's verb as the question's own (there is no relative word to
    open the clause), so the clause is read from the words' order and tags alone: a lower-case noun after its
    determiner, a name right after it, a finite verb (a bare one is the question's own verb after "do": "What does
    the acronym X stand for?") and a preposition with nothing after it, or only the question's closing verb after
    a "do" before the noun. The hop asks the clause of its name ("Veltro is from what country?"), the rest the
    question with the hop's answer in the noun phrase's place."""
    tokens = list(doc)
    for noun in tokens:
        i = noun.i
        if noun.pos_ != "NOUN" or not noun.text.islower() or i == 0 or i + 1 >= len(tokens):
            continue
        if noun.lemma_.lower() in LIGHT_NOUNS or noun.i in wh:
            continue
        start = _noun_start(noun)
        if tokens[start].pos_ != "DET" or tokens[i + 1].pos_ != "PROPN":
            continue
        verb = next((token for token in tokens[i + 1 :] if token.pos_ != "PROPN"), None)
        if verb is None or verb.pos_ not in {"AUX", "VERB"} or verb.tag_ not in FINITE_TAGS:
            continue
        done = any(token.lower_ in DO_FORMS for token in tokens[:start])
        for token in tokens[verb.i + 1 :]:
            if token.pos_ == "ADP":
                # Nothing after the preposition, or with "do" before the noun only the question's own closing verb.
                left = [word for word in tokens[token.i + 1 :] if not word.is_punct]
                if len(left) == int(done):
                    if wh & set(range(start, token.i + 1)):
                        return None
                    outside = [word for word in tokens if not start <= word.i <= token.i]
                    if not _asks_of(outside, wh):
                        return None
                    asked = doc[start + 1 : i + 1].text
                    hop = f"{doc[i + 1 : token.i + 1].text} what {asked}?"
                    before = doc[:start].text_with_ws if start else ""
                    after = token.whitespace_ + doc[token.i + 1 :].text if token.i + 1 < len(tokens) else ""
                    return ChainCut(hop=f"{hop[:1].upper()}{hop[1:]}", before=before, after=after, clause=True)
                break
            if token.pos_ not in CLAUSE_POS:
                break
    return None


def _may_describe(tags: Any) -> bool:
    """Whether a question with these tags may hold a description: a lower-case noun to head it and a proper noun to
    look it up by (`_description_end` needs both, with these parts of speech in the parse)."""
    return any(token.pos_ == "PROPN" for token in tags) and any(
        token.pos_ == "NOUN" and token.text.islower() for token in tags
    )


def _noun_start(noun: Any) -> int:
    """Where the noun's phrase starts, its determiner and modifiers included."""
    return min([noun.i] + [token.i for child in noun.lefts for token in child.subtree])


def _description_end(noun: Any, closing: Any = None) -> int | None:
    """Where the description headed by the noun ends (the index after its last token), or None when the noun
    describes nothing: a noun with a relative or participial clause holding a name, an "of" phrase holding a name,
    or a name's possessive (the hop must hold a name: what it can be looked up by). The question's own closing verb
    (`_closing_verb`), misread as the noun's only clause, makes no description of it ("the song X [born]")."""
    clauses = [child for child in [*noun.rights, *_clauses_after(noun)] if child.dep_ in CLAUSE_DEPS]
    for child in clauses:
        if child == closing and len(clauses) == 1:
            continue
        if child.pos_ in {"VERB", "AUX"}:
            clause = [token for token in child.subtree if not _relativizer(token, child)]
            if len(clause) >= 2 and any(token.pos_ == "PROPN" for token in clause):
                return max(token.i for token in child.subtree) + 1
    if any(child.dep_ == "poss" and child.pos_ == "PROPN" for child in noun.lefts):
        if any(child.dep_ == "compound" and child.pos_ == "PROPN" for child in noun.lefts):
            return None  # "X's Summit conference": a name of its own says which one, nothing to look up first
        return noun.i + 1
    of = next((child for child in noun.rights if child.dep_ == "prep" and child.lower_ == "of"), None)
    if of is not None and any(token.pos_ == "PROPN" for token in of.subtree):
        return max(token.i for token in of.subtree) + 1
    if of is not None and closing is not None:
        # "the director of the film [Vorlan die]": the parse hung the name after the "of" phrase on the question's own
        # closing verb; the words between are the phrase's name.
        end = max(token.i for token in of.subtree) + 1
        between = noun.doc[end : closing.i]
        if len(between) and all(token.pos_ == "PROPN" for token in between):
            return closing.i
    return None


def _clauses_after(noun: Any) -> list[Any]:
    """The relative clauses that open right after the noun with their relative word but that the parse hung from an
    earlier noun ("the name of the lake in the region [where X is found]" read as the name's clause): a relative
    word follows the noun it relates to, so the clause is the nearer noun's."""
    follower = noun.doc[noun.i + 1] if noun.i + 1 < len(noun.doc) else None
    if follower is None or follower.lower_ not in RELATIVIZERS:
        return []
    return [
        clause
        for clause in noun.doc
        if clause.dep_ == "relcl"
        and clause.head.i < noun.i
        and clause.head.pos_ == "NOUN"
        and clause.left_edge.i == follower.i
    ]


def _closing_verb(doc: Any) -> Any:
    """The question's own closing verb where a description may have swallowed it, else None. A question whose main verb
    is only an auxiliary or "do" ("When was the company that acquired X founded?", "When did the director of X
    die?") needs its closing verb, but the parse may read it as a clause inside the description ("... acquired [X
    founded]", a participle on the name, "X [founded]", or a relative clause of the film, "the film X [die]", with
    "did" as the main verb): a verb that closes the question, hangs from a word of the description as a clause of its
    own (no relative word) and has nothing after it is the question's own, and a description ends before it. (Its
    noun is asked about through an adverbial wh-word: a wh-word beside the copula asks for the described thing
    itself, and no hop is cut.)"""
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    words = [token for token in doc if not token.is_punct]
    if root is None or not words:
        return None
    verb = words[-1]
    # After a wh-phrase and "do" the question's own verb closes it, bare ("When did the director of X die?"), whatever
    # the parse makes of it: a clause of the name, or a noun the name's words modify ("Poland's election [die]"); a
    # particle or a stranded preposition may follow it ("... come from?").
    do = next((token for token in doc[:MAX_WH_PHRASE] if token.lower_ in DO_FORMS), None)
    stranded = len(words) > 1 and verb.pos_ in {"ADP", "PART"}
    described = {token.i for clause in doc if clause.dep_ in CLAUSE_DEPS for token in clause.subtree}
    bare = words[-2] if stranded else verb
    if (
        do is not None
        and any(token.lower_ in WH_WORDS for token in doc[: do.i])
        and bare.i > do.i + 2
        and bare.text.islower()
        # A noun's tag only for the very last word, and only where no verb of the question's own comes before it
        # ("When did Watt finish the development of the engine?" ends with the object of its verb); a verb of a
        # relative clause is part of the subject ("the actress who replaced X [die]").
        and (
            bare.tag_ in BARE_VERB_TAGS
            or (
                not stranded
                and bare.tag_ == "NN"
                and doc[bare.i - 1].pos_ not in {"ADP", "DET"}  # "... for a living", "... at university": a noun
                and not any(token.pos_ == "VERB" for token in doc[do.i + 1 : bare.i] if token.i not in described)
            )
        )
    ):
        return bare
    if not (root.pos_ == "AUX" or root.lower_ in DO_FORMS):
        return None
    if verb.pos_ != "VERB" or verb.dep_ not in {"ccomp", "conj", "xcomp", "relcl", "acl"}:
        return None
    if any(not token.is_punct for token in verb.rights) or any(token.lower_ in RELATIVIZERS for token in verb.subtree):
        return None  # words after it, or its own relative word: the description's own clause
    return verb


def _relativizer(token: Any, clause: Any) -> bool:
    """Whether the token opens the relative clause (its relative word, or the preposition before it)."""
    if token.i >= clause.i or token not in clause.subtree:
        return False
    if token.lower_ in RELATIVIZERS:
        return True
    return token.dep_ == "prep" and any(child.lower_ in RELATIVIZERS for child in token.children)


def _asks_of(outside: list[Any], wh: set[int]) -> bool:
    """Whether the rest of the question asks something of the described thing: a content word beside its wh-word
    that is no copula, auxiliary or light noun ("Who directed X?" does; "Who was X?", "What is the name of X?" do
    not)."""
    return any(
        token.pos_ in CONTENT_POS
        and token.i not in wh
        and token.lemma_.lower() not in LIGHT_NOUNS
        and token.dep_ not in {"aux", "auxpass"}
        for token in outside
    )
