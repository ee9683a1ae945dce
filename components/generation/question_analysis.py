"""What a question asks for: its type (who, when, where, how many...), its parts, and the kinds of span that answer it.

The analysis reads the question with the product's one language analysis (spaCy, `components.text.language`), in
its light form (tags and lemmas, no dependency parse, no entity recogniser: a few milliseconds a question): wh-words
by their part-of-speech tags, the noun a "which"/"what" asks about by the noun phrase after it, and the
question's own terms (the shared analyzer's stems) so that an answer span never merely repeats the question.
A compound question ("When was Qdrant first released and who develops it?") is cut before a coordinated wh-word
into parts, and each part is answered on its own.

The answer types and their entity labels (spaCy's OntoNotes labels) are general English, not tuned to any
question set: a "who" wants a person or an organisation, a "when" a date, a "how many" a number, a "where" a
place, a "which company" an organisation.

Usage:
```python
analysis = analyze_question("Who founded Neo4j and when?")
[(part.text, part.kind, part.labels) for part in analysis.parts]
# [('Who founded Neo4j', 'who', ('PERSON', 'ORG', 'NORP')), ('when', 'when', ('DATE', 'TIME'))]
```
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from components.text.analyzer import terms
from components.text.language import language_pipeline, parse_question, parse_syntax

WH_WORDS = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "why", "how"})
BE_FORMS = frozenset({"is", "are", "was", "were", "be", "been", "'s"})
PERSON_LABELS = ("PERSON", "ORG", "NORP")
DATE_LABELS = ("DATE", "TIME")
PLACE_LABELS = ("GPE", "LOC", "FAC")
COUNT_LABELS = ("CARDINAL", "QUANTITY", "MONEY", "PERCENT")
AMOUNT_LABELS = ("MONEY", "QUANTITY", "PERCENT", "CARDINAL")

# The noun a "which"/"what" determines, by lemma, and the entity labels that answer it.
HEAD_NOUN_LABELS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        "person people man woman author founder inventor creator player artist scientist president leader king queen "
        "ceo developer writer composer director actor singer engineer researcher mathematician physicist chemist "
        "philosopher economist politician emperor ruler minister captain coach architect designer governor mayor "
        "senator judge general commander officer bishop pope priest monk saint poet painter explorer pilot astronaut "
        "quarterback kicker owner manager member student teacher doctor physician soldier son daughter father mother "
        "wife husband brother sister successor predecessor rival opponent winner champion".split(),
        ("PERSON", "ORG"),
    ),
    **dict.fromkeys(
        "company organization organisation firm team university college school group band agency party institution "
        "club corporation startup business foundation publisher manufacturer network label department ministry "
        "church order dynasty".split(),
        ("ORG", "NORP", "PERSON"),
    ),
    **dict.fromkeys(
        "city country state place region nation continent town village location area county province capital "
        "street neighborhood neighbourhood district territory site".split(),
        ("GPE", "LOC", "FAC"),
    ),
    **dict.fromkeys("river mountain island lake sea ocean valley desert forest bay".split(), ("LOC", "GPE", "FAC")),
    **dict.fromkeys("year date day month decade century era period season week".split(), ("DATE", "TIME")),
    "time": ("TIME", "DATE"),
    **dict.fromkeys("number amount count total population".split(), ("CARDINAL", "QUANTITY", "MONEY")),
    **dict.fromkeys(
        "age score attendance distance length height depth width weight speed temperature size area capacity".split(),
        ("QUANTITY", "CARDINAL", "PERCENT"),
    ),
    **dict.fromkeys("value worth".split(), ("MONEY", "CARDINAL")),
    **dict.fromkeys("venue stadium arena building museum hospital airport station".split(), ("FAC", "ORG", "GPE")),
    **dict.fromkeys("percentage percent proportion share rate".split(), ("PERCENT", "CARDINAL")),
    **dict.fromkeys("price cost sum budget revenue salary funding".split(), ("MONEY", "CARDINAL")),
    **dict.fromkeys("language".split(), ("LANGUAGE", "NORP")),
    **dict.fromkeys("nationality religion ethnicity".split(), ("NORP",)),
    **dict.fromkeys("event war battle".split(), ("EVENT",)),
    **dict.fromkeys("book film movie song album novel painting".split(), ("WORK_OF_ART",)),
    **dict.fromkeys("product software library framework database tool".split(), ("PRODUCT", "ORG")),
}
# "how long / old / far ..." ask for a measure.
HOW_ADJECTIVE_LABELS: dict[str, tuple[str, ...]] = {
    "many": COUNT_LABELS,
    "much": AMOUNT_LABELS,
    "long": ("DATE", "TIME", "QUANTITY", "CARDINAL"),
    "old": ("DATE", "CARDINAL"),
    "often": ("DATE", "TIME", "CARDINAL"),
    "far": ("QUANTITY", "CARDINAL"),
    "big": ("QUANTITY", "CARDINAL", "MONEY"),
    "large": ("QUANTITY", "CARDINAL", "MONEY"),
    "tall": ("QUANTITY", "CARDINAL"),
    "high": ("QUANTITY", "CARDINAL", "MONEY"),
}
# Nouns that only name another noun ("the name of the company"): the noun after "of" is the real head.
LIGHT_NOUNS = frozenset("name kind type sort title form part".split())
KIND_NOUNS = frozenset({"kind", "type", "sort"})
# Nouns that ask for another name of what follows their "for" ("another word for ...", "an abbreviation for ...").
ALIAS_NOUNS = frozenset({"term", "word", "abbreviation", "acronym"})
YES_NO_STARTS = frozenset(
    "is are was were do does did can could has have had will would should shall may might must".split()
)
LIST_STARTS = frozenset({"list", "name", "enumerate"})
# An auxiliary or copula opening a question: a modal, or a form of "be", "do" or "have" (by the tagger's lemma).
AUXILIARY_LEMMAS = frozenset({"be", "do", "have"})
# The tags of wh-words (Penn Treebank): "which"/"what" as determiners, "who"/"what" as pronouns, "whose",
# "when"/"where"/"why"/"how".
WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
# Indefinite determiners and quantifiers: "Is there a/any/some X ...?" asks for the X there are; as the determiner of
# a question's subject, "any" does too ("Did any team win?").
INDEFINITE_DETERMINERS = frozenset({"a", "an", "any", "some"})
# Verbs whose subject question asks for a description, not a named thing ("What happened to ...?").
DESCRIPTION_VERBS = frozenset({"happen", "do", "cause", "make", "mean"})


@dataclass(frozen=True)
class QuestionPart:
    """One part of a question: its words, what it asks for, and the entity labels that answer it (may be none)."""

    text: str
    kind: str  # one of _KIND_TEXT's keys
    labels: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    # For a "what"/"which" that asks for a thing the sentence names: the lemma of the noun it asks about ("company"
    # in "which company"), "?" when it names none ("what did Tesla invent"); empty when it asks for a description.
    focus: str = ""
    # The part as the question words it ("Who led Streamlit's seed round"), for the reader; `text` is its words
    # joined by spaces without punctuation or the joining "and"/"or", which the answer's own readings parse.
    wording: str = ""

    @property
    def as_asked(self) -> str:
        """The part as the question words it (its words when the analysis holds no wording)."""
        return self.wording or self.text

    @property
    def wants_span(self) -> bool:
        """Whether the part asks for a name, a date, a number or a place (a short answer opens the reply)."""
        return bool(self.labels)


@dataclass(frozen=True)
class QuestionAnalysis:
    """A question's parts and its own terms (stems), which an answer span must not merely repeat.

    Immutable through and through (text, tuples and frozensets of text, frozen parts), so a copy of it is itself:
    Haystack, which deep-copies every component's inputs, hands it on as one value.
    """

    question: str
    parts: tuple[QuestionPart, ...]
    question_terms: frozenset[str] = field(default_factory=frozenset)
    # Terms of the names the question is about (its entities and proper nouns): an answer must be about them.
    anchor_terms: frozenset[str] = field(default_factory=frozenset)

    def __deepcopy__(self, memo: dict[int, Any]) -> QuestionAnalysis:
        return self

    @property
    def kind(self) -> str:
        """The first part's kind: the question's type."""
        return self.parts[0].kind if self.parts else "what"

    def describe(self) -> str:
        """One line for a prompt: the answer type of each part."""
        return "; ".join(
            f"{part.text!r} asks {_LABEL_TEXT.get(part.labels[0]) if part.labels else _KIND_TEXT[part.kind]}"
            for part in self.parts
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "kind": self.kind,
            "parts": [{**asdict(part), "labels": list(part.labels), "terms": list(part.terms)} for part in self.parts],
            "question_terms": sorted(self.question_terms),
            "anchor_terms": sorted(self.anchor_terms),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | QuestionAnalysis) -> QuestionAnalysis:
        """The analysis `to_dict()` wrote (an analysis given as itself is returned as it is)."""
        if isinstance(data, QuestionAnalysis):
            return data
        parts = tuple(
            QuestionPart(
                text=str(part.get("text", "")),
                kind=str(part.get("kind", "what")),
                labels=tuple(part.get("labels") or ()),
                terms=tuple(part.get("terms") or ()),
                focus=str(part.get("focus") or ""),
                wording=str(part.get("wording") or ""),
            )
            for part in data.get("parts") or []
        )
        return cls(
            str(data.get("question", "")),
            parts,
            frozenset(data.get("question_terms") or ()),
            frozenset(data.get("anchor_terms") or ()),
        )


# What a part's most wanted label asks for, in words.
_LABEL_TEXT = {
    "PERSON": "for a person or organisation",
    "ORG": "for an organisation",
    "NORP": "for a group",
    **dict.fromkeys(PLACE_LABELS, "for a place"),
    "DATE": "for a date",
    "TIME": "for a time",
    "CARDINAL": "for a number",
    "QUANTITY": "for a quantity",
    "MONEY": "for an amount of money",
    "PERCENT": "for a percentage",
    "LANGUAGE": "for a language",
    "EVENT": "for an event",
    "WORK_OF_ART": "for a title",
    "PRODUCT": "for a product",
}
_KIND_TEXT = {
    "who": "for a person or organisation",
    "when": "for a date",
    "where": "for a place",
    "how_many": "for a number",
    "how_much": "for an amount",
    "which": "for a named thing",
    "what": "for a thing or a description",
    "why": "for a reason",
    "how": "for a manner or process",
    "yes_no": "yes or no",
    "choice": "for one of the options it names",
    "list": "for a list",
}


@lru_cache(maxsize=1024)
def analyze_question(question: str) -> QuestionAnalysis:
    """The analysis of `question`; cached, since questions repeat.

    It reads the question's light analysis (`parse_question`: tags, parts of speech, lemmas), the same one the
    graph's passage walk reads, so a question is run through spaCy once whichever stages read it.
    """
    text = " ".join((question or "").split())
    if not text:
        return QuestionAnalysis("", ())
    # Most questions are typed by their words alone (spaCy's tokenizer: microseconds); only a "what"/"which" that
    # may determine a noun needs the tagger (a few milliseconds), shared with the graph walk.
    doc = language_pipeline().make_doc(text)
    if _needs_tags(doc):
        doc = parse_question(text)
    cuts = [0]
    # A part ends before a coordinated wh-word only when a question precedes it: "Rather than X, what ..." is one
    # question whose wh-word comes late, not two parts.
    asked = doc[0].norm_ in YES_NO_STARTS  # the norm: "Ca" of "Can't" is "can"
    for token in doc:
        if token.i > 1 and token.lower_ in WH_WORDS and asked:
            before = doc[token.i - 1]
            if before.lower_ in {"and", "or"} or before.text in {",", ";"}:
                cuts.append(before.i)
        asked = asked or token.lower_ in WH_WORDS
    cuts.append(len(doc))
    question_terms = frozenset(terms(text))
    # The names the question is about: its capitalised words after the first (which opens every question).
    names = [token.text for token in doc[1:] if token.text[:1].isupper() and token.text != "I"]
    anchor_terms = frozenset(term for name in names for term in terms(name))
    parts: list[QuestionPart] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        span = doc[start:end]
        words = [token for token in span if not token.is_punct and token.lower_ not in {"and", "or"}]
        if not words:
            continue
        part_text = " ".join(token.text for token in words)
        kind, labels, focus = _kind(words)
        wording = doc[words[0].i : words[-1].i + 1].text
        parts.append(QuestionPart(part_text, kind, labels, tuple(terms(part_text)), focus, wording))
    if len(parts) > 1:
        # "Who founded Neo4j and when?": a part without content words of its own asks about the others' subject.
        shared = tuple(dict.fromkeys(term for part in parts for term in part.terms))
        parts = [part if part.terms else replace(part, terms=shared) for part in parts]
    return QuestionAnalysis(text, tuple(parts), question_terms, anchor_terms)


def question_form(text: str) -> str | None:
    """What a question that opens with an auxiliary or copula asks, from its dependency parse: `"yes_no"` ("Did
    Lantern win the cup?"), `"choice"` when it asks to choose among options joined by "or" ("Did Lantern or Harbour
    win?", "Is it wider or narrower?", "..., or did they stay?"), `"wh"` when a wh-word of its own asks for something
    ("Do X, released in which year, ...?"), `"existential"` when it asks for the instances of a noun ("Are there
    any regions where ...?", "Does anyone ...?": `existential_noun`); None when it does not open with an auxiliary or
    copula. Only its first part is read: "Is Lantern open source and who develops it?" asks yes or no, then who."""
    text = " ".join((text or "").split())
    doc = language_pipeline().make_doc(text)
    # The first part ends before a coordinated wh-word, as `analyze_question` cuts it.
    joiners = {"and", "or", ",", ";"}
    cuts = (token.i - 1 for token in doc[2:] if token.lower_ in WH_WORDS and doc[token.i - 1].lower_ in joiners)
    end = next(cuts, len(doc))
    if not len(doc) or doc[0].norm_ not in YES_NO_STARTS:
        return None
    plain = _plainly_yes_no(doc[:end])
    if plain and not _may_be_existential(doc[:end]):
        return "yes_no"
    parsed = parse_syntax(text)
    if existential_noun(parsed, 0, end) is not None:
        return "existential"
    return "yes_no" if plain else _opening_form(parsed, 0, end)[0]


def _may_be_existential(words: Any) -> bool:
    """Whether the words hold an expletive "there" or an "any-"/"some-" word: only then may the question be an
    existential one (`existential_noun` decides, from the parse)."""
    return any(token.lower_ == "there" or token.lower_.startswith(("any", "some")) for token in words[1:])


def existential_noun(doc: Any, start: int, end: int) -> Any:
    """The noun an existential question asks for the instances of, from its dependency parse, or None: the noun a
    copula with an expletive "there" introduces, with an indefinite determiner ("Are there any regions where ...?",
    "Is there a town that ...?") or itself an indefinite pronoun ("Was there anyone who ...?"), or an indefinite
    pronoun or "any" noun as the subject of the question's verb ("Does anyone live there?", "Did any team win?").
    "Is there a museum in X?" reads as asking which museum; "Did the court find any fault?" (an object) does not."""
    words = [token for token in doc[start:end] if not token.is_punct]
    if not words or not _is_auxiliary(words[0]):
        return None
    inside = range(start, end)

    def indefinite(noun: Any) -> bool:
        if _states_content(noun):  # "Is there any doubt that X won?" asks whether X won: yes or no
            return False
        if noun.pos_ == "PRON":
            return "Ind" in noun.morph.get("PronType")
        determiners = [child for child in noun.children if child.dep_ == "det"]
        return noun.pos_ in _NOUNS and any(child.lower_ in INDEFINITE_DETERMINERS for child in determiners)

    for token in words:
        if token.dep_ != "expl" or token.head.lemma_.lower() != "be" or token.head.i not in inside:
            continue
        for noun in token.head.children:
            if noun.dep_ in {"attr", "nsubj"} and noun.i in inside and noun is not token and indefinite(noun):
                return noun
    # "Can anyone ...?", "Would any ship ...?" ask whether it is possible, not who: a modal asks yes or no.
    verb = words[0].head if words[0].dep_ == "aux" and words[0].tag_ != "MD" else None
    if verb is None or verb.i not in inside:
        return None
    for noun in verb.children:
        if noun.dep_ in {"nsubj", "nsubjpass"} and indefinite(noun):
            if noun.pos_ == "PRON" or any(child.lower_ == "any" for child in noun.children if child.dep_ == "det"):
                return noun
    return None


def _states_content(noun: Any) -> bool:
    """Whether a clause that states what the noun holds follows it, opened by "that"/"whether"/"if" as a
    conjunction ("any doubt that the harbour closes", "a chance that it rains"), not a relative clause describing
    it ("a harbour that handles ferries", where "that" is the clause's subject)."""
    return any(
        child.dep_ == "mark" and child.lower_ in {"that", "whether", "if"}
        for clause in noun.rights
        if clause.dep_ in {"acl", "relcl", "ccomp"}
        for child in clause.children
    )


def _existential_kind(noun: Any) -> tuple[str, tuple[str, ...], str]:
    """How an existential question's part is answered: like "which X" for the noun X it asks about (its instances
    in the cited sentence), like "who" for "anyone"/"anybody"/"someone", like "what" for "anything"."""
    if noun.pos_ == "PRON":
        if noun.lower_.endswith(("one", "body")):
            return "who", PERSON_LABELS, ""
        return "what", (), "?"
    lemma = noun.lemma_.lower()
    labels = HEAD_NOUN_LABELS.get(lemma, ())
    return ("when" if labels and labels[0] in DATE_LABELS else "which"), labels, lemma


def existential_part(part: QuestionPart, question: str) -> QuestionPart:
    """`part` typed as the existential question `question` asks (`existential_noun`); unchanged when it is none."""
    doc = parse_syntax(" ".join((question or "").split()))
    noun = existential_noun(doc, 0, len(doc))
    if noun is None:
        return part
    kind, labels, focus = _existential_kind(noun)
    return replace(part, kind=kind, labels=labels, focus=focus)


def _plainly_yes_no(words: Any) -> bool:
    """Whether a question opening with a yes/no word holds neither a wh-word nor an "or" after it: then it asks yes
    or no whatever its parse, which is not made (the parse decides only where there is something to decide)."""
    return not any(token.lower_ in WH_WORDS or token.lower_ == "or" for token in words[1:])


def _opening_form(doc: Any, start: int, end: int) -> tuple[str | None, Any]:
    """`question_form` of the words `doc[start:end]` (a parsed question, or one part of it), and the wh-word that
    asks when the form is `"wh"`. A wh-word or an "or" inside a relative clause ("a city where ...", "a river that
    floods or dries up") belongs to the description of a noun, not to what is asked; "or not" and "either ... or"
    keep a question yes/no ("Is it true or not ...?", "Did either of them ...?")."""
    words = [token for token in doc[start:end] if not token.is_punct]
    if not words or not _is_auxiliary(words[0]):
        return None, None
    clause = [token for token in words if token.sent == words[0].sent]
    for token in clause:
        if token.lower_ in WH_WORDS and token.tag_ in WH_TAGS and not _in_relative_clause(token):
            return "wh", token
    for token in clause:
        if token.lower_ != "or" or _in_relative_clause(token):
            continue
        following = doc[token.i + 1] if token.i + 1 < len(doc) else None
        if following is not None and following.lower_ in {"not", "no"}:
            continue
        if any(child.dep_ == "preconj" for child in token.head.children):
            continue
        return "choice", None
    return "yes_no", None


def _is_auxiliary(token: Any) -> bool:
    """A modal, or a form of "be", "do" or "have" used as a verb (the tagger's part of speech and lemma)."""
    return token.tag_ == "MD" or (token.pos_ in {"AUX", "VERB"} and token.lemma_.lower() in AUXILIARY_LEMMAS)


def _in_relative_clause(token: Any) -> bool:
    """Whether `token` is in a clause that describes a noun (spaCy's `relcl`), itself or through its heads."""
    return any(node.dep_ == "relcl" for node in (token, *token.ancestors))


_NOUNS = frozenset({"NOUN", "PROPN"})
_MODIFIERS = frozenset({"ADJ", "NOUN", "PROPN", "NUM", "DET"})


def _noun_after(doc: Any, index: int, possessed: bool = False) -> Any:
    """The head noun of the noun phrase starting at `index` ("the largest German city" -> city), or None; with
    `possessed`, what a possessor has ("Victoria's highest temperature" -> temperature), not the possessor."""
    last = None
    while index < len(doc) and doc[index].pos_ in _MODIFIERS | {"PART"} and doc[index].tag_ != "WDT":
        if doc[index].pos_ in _NOUNS:
            last = doc[index]
        elif possessed and doc[index].tag_ == "POS":
            last = None
        elif last is not None and doc[index].pos_ != "PART":
            break  # "company CEO" continues; "company the" does not
        index += 1
    return last


def _needs_tags(doc: Any) -> bool:
    """Whether typing the question needs parts of speech: a "what"/"which" followed by a word that may be a noun
    ("which company", "what is the name ..."), not by an auxiliary ("what did ...") or another function word."""
    for token, following in pairwise(doc):
        if token.lower_ in {"what", "which"} and not following.is_punct:
            word = following.lower_
            if word in BE_FORMS | LIGHT_NOUNS | {"other"} or not (following.is_stop or word in YES_NO_STARTS):
                return True
    return False


def _kind(words: list[Any]) -> tuple[str, tuple[str, ...], str]:
    """The kind of one part, the labels that answer it, and the noun a "what"/"which" asks about (its lemma), from
    its first wh-word (or its first word)."""
    first = words[0].norm_  # "Ca" of "Can't" is "can", "Wo" of "Won't" "will"
    wh = next((token for token in words if token.lower_ in WH_WORDS), None)
    if first in YES_NO_STARTS:
        # "Is ...?", "Did ...?": its parse says whether it asks yes or no, a choice among options, or a wh-word's
        # thing (the same words of the question, parsed; read for these few questions only).
        doc = words[0].doc
        stretch = doc[words[0].i : words[-1].i + 1]
        plain = _plainly_yes_no(stretch)
        if plain and not _may_be_existential(stretch):
            return "yes_no", (), ""
        parsed = parse_syntax(doc.text)
        # "Are there any regions where ...?" asks for the regions there are, as "which regions ...?" would.
        noun = existential_noun(parsed, words[0].i, words[-1].i + 1)
        if noun is not None:
            return _existential_kind(noun)
        if plain:
            return "yes_no", (), ""
        form, asking = _opening_form(parsed, words[0].i, words[-1].i + 1)
        if form in {"yes_no", "choice"}:
            return form, (), ""
        if form == "wh":
            wh = doc[asking.i]  # the same tokens: the parse read the question's own text
    if wh is None:
        return ("list" if first in LIST_STARTS else "what"), (), ""
    lower = wh.lower_
    if lower in {"who", "whom", "whose"}:
        return "who", PERSON_LABELS, ""
    if lower == "when":
        return "when", DATE_LABELS, ""
    if lower == "where":
        return "where", PLACE_LABELS, ""
    if lower == "why":
        return "why", (), ""
    if lower == "how":
        adjective = wh.nbor(1).lower_ if wh.i + 1 < len(wh.doc) else ""
        if adjective in HOW_ADJECTIVE_LABELS:
            return ("how_many" if adjective == "many" else "how_much"), HOW_ADJECTIVE_LABELS[adjective], ""
        return "how", (), ""
    # which / what: the noun it determines ("which German city"), or the copula's noun ("what is the name of ..."),
    # and for a light noun the noun after "of" ("the name of the company").
    doc = wh.doc
    tagged = doc.has_annotation("TAG")
    head = _noun_after(doc, wh.i + 1) if tagged else None
    after = wh.i + 1
    if tagged and head is None and after < len(doc) and doc[after].lower_ in BE_FORMS:
        head = _noun_after(doc, after + 1, possessed=True)  # "What is Victoria's highest temperature?"
    kind_of = False
    if head is not None and head.lemma_.lower() in LIGHT_NOUNS | ALIAS_NOUNS:
        of = head.i + 1
        # "the name of the company", "another term for rotors": the noun named
        light = head.lemma_.lower()
        if of < len(doc) and (doc[of].lower_ == "of" or (doc[of].lower_ == "for" and light not in KIND_NOUNS)):
            kind_of = light in KIND_NOUNS
            head = _noun_after(doc, of + 1) or head
    lemma = head.lemma_.lower() if head is not None else ""
    # "What kind of company ...?" asks for a class of companies ("a postal company"), not one company's name.
    labels = HEAD_NOUN_LABELS.get(lemma, ()) if not kind_of else ()
    kind = "which" if lower == "which" else "what"
    if labels and labels[0] in DATE_LABELS:
        kind = "when"
    # "What did Tesla invent?", "What is the capital ...": the wh-word stands for a thing the sentence names. "What
    # about X?" asks for a description, not a phrase.
    # "... converts it into what?": a wh-word that ends the question stands for a phrase too.
    ends = after >= len(doc) or doc[after].is_punct
    # "What ruined the plans?": a wh-word followed by its verb stands for the subject, a thing the sentence names
    # (not "What happened ...", which asks for a description).
    subject = tagged and not ends and doc[after].pos_ == "VERB" and doc[after].lemma_.lower() not in DESCRIPTION_VERBS
    wants_phrase = head is not None or ends or subject or (after < len(doc) and doc[after].lower_ in YES_NO_STARTS)
    return kind, labels, (lemma or "?") if wants_phrase else ""
