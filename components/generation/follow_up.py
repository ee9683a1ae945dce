"""`FollowUpRewriter`: a follow-up question ("Who leads it?", "What about Zorvan?") rewritten to stand alone
against the session's earlier turns, offline with the product's language analysis, or by a chat model when one
is configured (the offline rewrite is then its fallback).

Usage:
```python
rewriter = FollowUpRewriter()
turns = [{"question": "When was Brevik Labs founded?", "answer": "Brevik Labs was founded in 2019 [1]."}]
rewriter.run(question="Who leads it?", history=turns)  # {'question': 'Who leads Brevik Labs?', 'answered_as': ...}
rewriter.run(question="Who leads Brevik Labs?", history=turns)["answered_as"]  # '' (it stands alone)
```
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from haystack import component, logging
from haystack.utils import Secret

from components.generation.question_analysis import HEAD_NOUN_LABELS, WH_WORDS, analyze_question
from components.redaction import cut
from components.serialization import InitParameterSerialization
from components.settings import default_setting
from components.text.language import language_pipeline, parse, parse_question, sentences
from components.text.phrases import capitalised_phrases
from components.text.pronouns import PERSON_PRONOUNS, PLURAL_PRONOUNS, THING_PRONOUNS

logger = logging.getLogger(__name__)

# Pronouns that point outside the question, by what they can stand for.
POSSESSIVE_PRONOUNS = frozenset({"its", "his", "her", "their", "hers", "theirs"})
# Words that open a clause of its own: a name before one of them is not what a later pronoun of the same question
# has to stand for... unless it is, which is what makes the question stand alone ("What is Vexa and who leads it?").
CLAUSE_BOUNDARIES = frozenset({"and", "or", "but", ",", ";", "before", "after", "because", "since", "while", "until"})
# "What about X?", "How about X?", "And X?": the previous question asked again about X.
ELLIPSIS_OPENINGS = (("what", "about"), ("how", "about"), ("and", "what", "about"), ("and", "how", "about"), ("and",))
# "Is it true that ...", "Why is it hard to ...": an "it" that stands for the clause after it, not a thing.
EXPLETIVE_FOLLOWERS = frozenset({"that", "to", "whether", "if"})
MAX_TURNS = 3
# The defaults are the GENERATOR and OPENAI_MODEL settings' own (the catalog passes the values in force).
GENERATOR: str = default_setting("generator")
CHAT_MODEL: str = default_setting("openai_model")
# The entity labels of things a name can be (not a person, date or amount).
THING_LABELS = frozenset({"ORG", "PRODUCT", "GPE", "LOC", "FAC", "WORK_OF_ART", "EVENT", "NORP"})
REWRITE_PROMPT = (
    "Rewrite the analyst's last question so that it stands alone: replace pronouns and fill in what it leaves out "
    "from the earlier questions and answers. Keep its wording otherwise. Reply with the rewritten question only."
)


@dataclass(frozen=True)
class Turn:
    """One earlier question of the session (as it was answered) and its answer."""

    question: str
    answer: str = ""
    short_answer: str = ""
    entities: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        return cls(
            question=str(data.get("answered_as") or data.get("question") or ""),
            answer=str(data.get("answer") or ""),
            short_answer=str(data.get("short_answer") or ""),
            entities=tuple(str(entity) for entity in data.get("entities") or ()),
        )


@dataclass
class _Names:
    """The names one earlier turn offers a pronoun: the question's own and those of its answer, with their kinds."""

    question: list[str] = field(default_factory=list)
    question_people: list[str] = field(default_factory=list)
    answer_people: list[str] = field(default_factory=list)
    answer_things: list[str] = field(default_factory=list)
    asked: str = ""  # the earlier question's kind (who, which, ...)
    focus: str = ""  # the noun a "which"/"what" asked about ("company")
    asked_labels: tuple[str, ...] = ()
    remembered: list[str] = field(default_factory=list)  # the entities memory kept for the turn, after its own names
    kinds: dict[str, str] = field(default_factory=dict)  # a name (lower case) -> its entity label, where known


def _names(turn: Turn) -> _Names:
    names = _Names()
    analysis = analyze_question(turn.question)
    names.asked = analysis.kind
    names.asked_labels = analysis.parts[0].labels if analysis.parts else ()
    names.focus = analysis.parts[0].focus if analysis.parts else ""
    labelled = {ent.text.lower(): ent.label_ for ent in parse(turn.question).ents}
    for phrase in capitalised_phrases(turn.question):
        if re.search(rf"\bThe {re.escape(phrase)}", turn.question):
            phrase = f"The {phrase}"  # a title's own article ("The Glass Orchard")
        names.question.append(phrase)
        if labelled.get(phrase.lower()) == "PERSON":
            names.question_people.append(phrase)
        if labelled.get(phrase.lower()):
            names.kinds[phrase.lower()] = labelled[phrase.lower()]
    answer = turn.short_answer or _first_sentence(turn.answer)
    asked_names = {name.lower() for name in names.question}
    # The entities memory kept for the turn: antecedents after the question's own subject, and its subject when
    # the question names it in a way the language analysis missed ("who leads pellow freight?").
    remembered = dict.fromkeys(name for name in turn.entities if name.strip())
    names.remembered = [name for name in remembered if name.lower() not in asked_names]
    short = _uncited(turn.short_answer).strip(" .")
    if short and short.lower() not in asked_names:
        # The short answer is what the question asked for, whatever label the recogniser gives a name it does not
        # know: the person of a "who" (unless it recognises an organisation), the company of a "which company".
        if names.asked == "who":
            labels = {ent.label_ for ent in parse(short).ents}
            (names.answer_things if labels == {"ORG"} else names.answer_people).append(short)
        elif names.asked_labels[:1] in (("ORG",), ("PRODUCT",)):
            names.answer_things.append(short)
        asked_names.add(short.lower())
    if answer:
        for ent in parse(_uncited(answer)).ents:
            if ent.text.lower() in asked_names:
                continue
            if ent.label_ == "PERSON":
                names.answer_people.append(ent.text)
            elif ent.label_ in THING_LABELS:
                names.answer_things.append(ent.text)
            names.kinds.setdefault(ent.text.lower(), ent.label_)
    return names


def _uncited(text: str) -> str:
    return " ".join(re.sub(r"\[\d+(?:\s*,\s*\d+)*\]", " ", text).split())


def _first_sentence(text: str) -> str:
    found = sentences(_uncited(text))
    return found[0] if found else ""


def _joined(names: list[str]) -> str:
    names = list(dict.fromkeys(names))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class _Tokens:
    """The question's words with their tags (spaCy's light analysis), and where its pronouns point."""

    def __init__(self, question: str) -> None:
        self.doc = parse_question(question)
        self.words = [token.text for token in self.doc]
        self.lower = [token.lower_ for token in self.doc]

    def external_pronouns(self) -> list[int]:
        """Indexes of the pronouns that stand for something outside the question."""
        found = []
        for token in self.doc:
            word = token.lower_
            if word not in PERSON_PRONOUNS | THING_PRONOUNS | PLURAL_PRONOUNS or token.pos_ != "PRON":
                continue
            if word == "it" and self._expletive(token.i):
                continue
            if not self._antecedent_inside(token.i, word in POSSESSIVE_PRONOUNS and token.tag_ == "PRP$"):
                found.append(token.i)
        return found

    def demonstratives(self) -> list[int]:
        """Indexes of "this/that/these/those" determining a noun ("that company"): a reference to an earlier
        turn."""
        return [
            token.i
            for token in self.doc[:-1]
            if token.lower_ in {"this", "that", "these", "those"}
            and token.tag_ == "DT"
            and self.doc[token.i + 1].pos_ == "NOUN"
        ]

    def _expletive(self, index: int) -> bool:
        rest = self.lower[index + 1 : index + 4]
        tags = [token.pos_ for token in self.doc[index + 1 : index + 4]]
        if rest and rest[0] in {"is", "was", "'s"}:
            rest, tags = rest[1:], tags[1:]
        return len(rest) >= 2 and tags[0] == "ADJ" and rest[1] in EXPLETIVE_FOLLOWERS

    def _antecedent_inside(self, index: int, possessive: bool) -> bool:
        """Whether a name (or, across a clause boundary, a noun) before the pronoun is what it stands for."""
        boundary = False
        for token in reversed(self.doc[:index]):
            if token.lower_ in CLAUSE_BOUNDARIES:
                boundary = True
            if token.i == 0:
                break
            if token.pos_ == "PROPN" and (possessive or boundary):
                return True
            if token.pos_ == "NOUN" and boundary:
                return True
        return False


def _ellipsis_rest(tokens: _Tokens) -> int | None:
    """Where the new subject of "What about X?" / "And X?" starts, or None when the question is no such ellipsis."""
    for opening in ELLIPSIS_OPENINGS:
        size = len(opening)
        if tuple(tokens.lower[:size]) == opening:
            rest = [token for token in tokens.doc[size:] if not token.is_punct]
            if rest and not any(t.pos_ in {"VERB", "AUX"} or t.lower_ in WH_WORDS for t in rest):
                return size
    return None


def _bare_wh(tokens: _Tokens) -> str | None:
    """The wh-word of a question made of nothing else ("And when?", "Where?"), or None."""
    content = [token for token in tokens.doc if not token.is_punct and token.lower_ not in {"and", "or", "so"}]
    if (
        1 <= len(content) <= 2
        and content[0].lower_ in WH_WORDS
        and all(token.lower_ in WH_WORDS | {"many", "much", "long", "old", "exactly"} for token in content)
    ):
        return " ".join(token.text for token in content)
    return None


def _replace_subject(question: str, subject: str, new: str) -> str:
    return re.sub(re.escape(subject), new, question, count=1, flags=re.IGNORECASE)


def _after_wh(question: str, answered: str = "") -> str | None:
    """The earlier question without its opening wh-phrase, to be asked with another wh-word ("When was Acme
    founded?" -> "was Acme founded", "Who founded Acme?" -> "was Acme founded", "Which company develops Vexa?"
    answered by Lumio -> "does Lumio develop Vexa"); None when it opens with no wh-word, "" when it cannot be
    asked with another one."""
    tokens = _Tokens(question)
    if not tokens.lower or tokens.lower[0] not in WH_WORDS:
        return None
    index = 1
    if tokens.lower[0] == "how" and len(tokens.lower) > 1 and tokens.doc[1].pos_ in {"ADJ", "ADV"}:
        index = 2
    determines = tokens.lower[0] in {"which", "what"}
    while determines and index < len(tokens.doc) and tokens.doc[index].pos_ in {"NOUN", "ADJ"}:
        index += 1
    rest_tokens = [token for token in tokens.doc[index:] if not token.is_punct]
    if rest_tokens and rest_tokens[0].pos_ == "VERB":
        # The wh-word was the subject ("Who founded Acme Corp?"): asked again of another wh-word, the question
        # turns passive ("When was Acme Corp founded?"), which a regular past tense allows; else it is not rewritten.
        # Else the answer becomes the subject, with "do" ("Where does Lumio develop Vexa?"); without one, the
        # question is not rewritten.
        verb, object_ = rest_tokens[0], rest_tokens[1:]
        words = " ".join(token.text for token in object_)
        if verb.tag_ == "VBD" and verb.lower_.endswith("ed") and object_:
            return f"{'were' if object_[-1].tag_ in {'NNS', 'NNPS'} else 'was'} {words} {verb.text}"
        do = {"VBD": "did", "VBZ": "does", "VBP": "do"}.get(verb.tag_)
        if not do or not answered:
            return ""
        return " ".join(part for part in (do, answered, verb.lemma_, words) if part)
    rest = tokens.doc[index:].text if index < len(tokens.doc) else ""
    return rest.rstrip(" ?.") or None


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def rewrite_offline(question: str, history: list[Turn]) -> str:
    """The question rewritten against the newest of `history` (oldest first), or "" when it stands alone."""
    text = " ".join((question or "").split())
    turns = [turn for turn in history if turn.question.strip()][-MAX_TURNS:]
    if not text or not turns:
        return ""
    tokens = _Tokens(text)
    start = _ellipsis_rest(tokens)
    wh = _bare_wh(tokens) if start is None else None
    pronouns = tokens.external_pronouns()
    demonstratives = tokens.demonstratives()
    if start is None and wh is None and not pronouns and not demonstratives:
        return ""  # it stands alone: the earlier turns are not even read
    # The newest turn that names something: a turn asked as typed ("Who leads it?") names nothing to refer to.
    previous, names = turns[-1], _names(turns[-1])
    for turn in reversed(turns[:-1]):
        if names.question or names.remembered:
            break
        previous, names = turn, _names(turn)
    if not (names.question or names.remembered):
        previous, names = turns[-1], _names(turns[-1])
    subject = (names.question or names.remembered or [""])[0]
    if start is not None:
        return _ellipsis(tokens, start, previous, names, subject)
    if wh is not None:
        rest = _after_wh(previous.question, (names.answer_people + names.answer_things or [""])[0])
        if rest is None:
            return f"{_capitalised(wh)} {subject}?" if subject else ""
        return f"{_capitalised(wh)} {rest}?" if rest else ""
    words = list(tokens.words)
    replaced = len(pronouns)
    for index in pronouns:
        word = tokens.lower[index]
        name = _antecedent(word, names, turns)
        if not name:
            return ""
        possessive = tokens.doc[index].tag_ == "PRP$" or word in {"its", "their", "theirs", "hers"}
        words[index] = _possessive(name) if possessive else name
    for index in demonstratives:
        # "that company" stands for the thing, "this person" for the person, "these firms" for several.
        noun = tokens.doc[index + 1]
        plural = tokens.lower[index] in {"these", "those"}
        person = HEAD_NOUN_LABELS.get(noun.lemma_.lower(), ("",))[0] == "PERSON"
        answered = names.answer_people + names.answer_things
        if noun.lemma_.lower() == names.focus and answered:
            name = answered[0]  # "Which company makes X?" ... "that company": the one the answer named
        else:
            name = _antecedent("they" if plural else "he" if person else "it", names, turns)
            if name and not _same_kind(noun.lemma_.lower(), name, names):
                continue  # "this paper" after a question about a company: not the company, left as asked
        if not name:
            return ""
        words[index], words[index + 1] = name, ""
        replaced += 1
    if not replaced:
        return ""  # nothing in it stands for an earlier turn's name
    words = [word for word in words if word]
    if tokens.lower[0] == "and" and len(words) > 1:
        words = words[1:]
    rewritten = _detokenised(words)
    if not any(token.lower_ in WH_WORDS or token.pos_ in {"VERB", "AUX"} for token in tokens.doc):
        rewritten = f"What is {rewritten.rstrip(' ?')}?"  # "And its funding?" -> "What is Acme's funding?"
    return _capitalised(rewritten)


def _is_attribute(rest_tokens: list[Any]) -> bool:
    """Whether the rest of "What about X?" is something of the earlier subject ("the founder", "its funding", "the
    CEO") rather than a new subject ("Zorvan", "zorvan", "the Glass Orchard"): it has a possessive, its head is a
    noun the question analysis knows as an attribute, or it has a determiner before a head that is no name."""
    if not rest_tokens:
        return False
    head = rest_tokens[-1]
    if any(token.tag_ in {"PRP$", "POS"} for token in rest_tokens) or head.lemma_.lower() in HEAD_NOUN_LABELS:
        return True
    determined = any(token.pos_ == "DET" or token.dep_ == "det" for token in rest_tokens[:-1])
    return determined and head.pos_ != "PROPN" and not head.text[:1].isupper()


def _another_phrase(question: str, rest_tokens: list[Any]) -> str:
    """The earlier question with its phrase of the same preposition replaced by the follow-up's ("How much did
    Vexa raise in 2023?" + "in 2021"), or with the phrase added where it had none."""
    phrase = " ".join(token.text for token in rest_tokens)
    tokens = _Tokens(question)
    for token in tokens.doc:
        if token.lower_ == rest_tokens[0].lower_ and token.pos_ == "ADP":
            end = token.i + 1
            while end < len(tokens.doc) and tokens.doc[end].pos_ not in {"VERB", "AUX", "ADP", "PUNCT", "CCONJ"}:
                end += 1
            span = tokens.doc[token.i : end]
            return _capitalised(f"{question[: span.start_char]}{phrase}{question[span.end_char :]}")
    return _capitalised(f"{question.rstrip(' ?.')} {phrase}?")


def _ellipsis(tokens: _Tokens, start: int, previous: Turn, names: _Names, subject: str) -> str:
    rest_tokens = [token for token in tokens.doc[start:] if not token.is_punct]
    rest = " ".join(token.text for token in rest_tokens)
    if rest_tokens and rest_tokens[0].pos_ == "ADP":
        return _another_phrase(previous.question, rest_tokens)  # "And in 2021?": the last question, in 2021
    if not _is_attribute(rest_tokens):
        if not subject or subject.lower() not in previous.question.lower():
            return ""
        return _capitalised(_replace_subject(previous.question, subject, rest))  # "What about Zorvan?": asked again
    # "What about the founder?", "And its funding?": an attribute of the earlier subject.
    owner = subject or (names.answer_things[0] if names.answer_things else "")
    if not owner:
        return ""
    nouns = [token for token in rest_tokens if token.pos_ in {"NOUN", "PROPN", "ADJ", "NUM"}]
    if not nouns:
        return ""
    head = nouns[-1].lemma_.lower()
    wh = "Who" if HEAD_NOUN_LABELS.get(head, ("",))[0] == "PERSON" else "What"
    verb = "are" if nouns[-1].tag_ == "NNS" else "is"
    return f"{wh} {verb} {_possessive(owner)} {' '.join(token.text for token in nouns)}?"


def _same_kind(noun: str, name: str, names: _Names) -> bool:
    """Whether a demonstrative's noun ("that company", "this person") can be `name`: the noun's labels hold the
    name's entity label, or, for a name the recogniser did not label, the noun is a kind of thing."""
    labels = HEAD_NOUN_LABELS.get(noun, ())
    if not labels:
        return False
    people = names.question_people + names.answer_people
    kind = names.kinds.get(name.lower()) or ("PERSON" if name in people else "")
    if kind:
        return kind in labels
    return labels[0] != "PERSON" and bool(THING_LABELS.intersection(labels))


def _antecedent(word: str, names: _Names, turns: list[Turn]) -> str:
    """What a pronoun stands for in the newest turn: a person for he/she, a thing for it, several for they."""
    if word in PERSON_PRONOUNS:
        ranked = (
            names.answer_people + names.question_people
            if names.asked == "who"
            else names.question_people + names.answer_people
        )
        return (ranked or names.question or names.remembered or [""])[0]
    if word in THING_PRONOUNS:
        things = [name for name in names.question if name not in names.question_people]
        return (things or names.question or names.remembered or names.answer_things or [""])[0]
    # they / them / their: the people a "who" was answered with, the organisation a "which company" was, the
    # several subjects of the last question or of the last turns, or its answer's.
    if names.asked == "who" and len(names.answer_people) > 1:
        return _joined(names.answer_people)
    if names.asked in {"which", "what"} and names.asked_labels[:1] in (("ORG",), ("PRODUCT",)):
        if names.answer_things:
            return names.answer_things[0]
    if len(names.question) > 1:
        return _joined(names.question)
    subjects: list[str] = []
    for turn in turns[-2:]:
        asked = _names(turn).question
        if asked:
            subjects.append(asked[0])
    if len(dict.fromkeys(subjects)) > 1:
        return _joined(subjects)
    if len(names.answer_things) > 1:
        return _joined(names.answer_things)
    return (names.question or names.remembered or names.answer_things or [""])[0]


def _detokenised(words: list[str]) -> str:
    text = " ".join(words)
    text = re.sub(r"\s+([?.,;:!])", r"\1", text)
    return re.sub(r"\s+('s|n't|')(?=\s|$|[?.,])", r"\1", text)


def is_follow_up(question: str, history: list[Turn]) -> bool:
    """Whether the question needs the earlier turns to be understood (what the offline rewrite detects)."""
    return bool(rewrite_offline(question, history))


@component
class FollowUpRewriter(InitParameterSerialization):
    """Rewrites a follow-up question against the session's earlier turns so that it stands alone.

    A question is a follow-up when a pronoun in it stands for nothing inside it ("Who leads it?"), when it asks the
    last question again about something else ("What about Zorvan?", "And its funding?") or is a bare wh-word ("And
    when?"). The offline rewrite puts the earlier question's subject, or the entity its answer named (a person for
    "he"/"she"), in place. With `generator="openai"` a chat model rewrites a question the offline analysis found to
    be a follow-up; when it fails, the offline rewrite stands. A question that stands alone is never rewritten and
    never sent to the model. The product builds it from the `GENERATOR`, `OPENAI_MODEL` and `OPENAI_BASE_URL`
    settings; the component itself reads no setting.
    """

    def __init__(
        self,
        generator: str = GENERATOR,
        model: str = CHAT_MODEL,
        api_base_url: str | None = None,
        timeout_s: float = 10.0,
        max_turns: int = MAX_TURNS,
    ) -> None:
        """
        :param generator: `extractive` (offline only) or `openai` (a chat model, the offline rewrite its fallback).
        :param model: the chat model.
        :param api_base_url: the OpenAI-compatible chat server (ending in /v1); None is OpenAI's.
        :param timeout_s: how long the model's rewrite may take (0-60 s).
        :param max_turns: how many earlier turns are read (1-10).
        """
        if generator not in ("extractive", "openai"):
            raise ValueError(f"generator must be extractive or openai, not {generator!r}")
        if generator == "openai" and not (model or "").strip():
            raise ValueError("model must name the chat model when generator is openai")
        if not 0 < timeout_s <= 60:
            raise ValueError("timeout_s must be between 0 and 60 seconds")
        if not 1 <= max_turns <= 10:
            raise ValueError("max_turns must be between 1 and 10")
        self.generator = generator
        self.model = model
        self.api_base_url = api_base_url
        self.timeout_s = float(timeout_s)
        self.max_turns = int(max_turns)
        self._chat: Any = None
        self._warm = False

    def warm_up(self) -> None:
        """Load the language pipeline and, with a chat model configured, its client (no network call)."""
        if self._warm:
            return
        language_pipeline()
        if self.generator == "openai":
            api_key = Secret.from_env_var("OPENAI_API_KEY", strict=False)
            if api_key.resolve_value() is not None:
                from haystack.components.generators.chat import OpenAIChatGenerator

                self._chat = OpenAIChatGenerator(
                    api_key=api_key,
                    model=self.model,
                    api_base_url=self.api_base_url or None,
                    timeout=self.timeout_s,
                    max_retries=0,
                )
        self._warm = True

    @component.output_types(question=str, answered_as=str)
    def run(self, question: str, history: list[dict] | None = None) -> dict[str, Any]:
        """Rewrite `question` against `history` (earlier turns, oldest first: {"question", "answer",
        "short_answer"}).

        :returns: `question`: what to search (the rewrite, or the question as given); `answered_as`: the rewrite,
            "" when the question stands alone.
        """
        self.warm_up()
        turns = [Turn.from_dict(item) for item in history or [] if isinstance(item, dict)][-self.max_turns :]
        offline = rewrite_offline(question, turns)
        if not offline:
            return {"question": question, "answered_as": ""}
        rewritten = self._by_model(question, turns) or offline
        if rewritten.strip().lower() == question.strip().lower():
            return {"question": question, "answered_as": ""}
        return {"question": rewritten, "answered_as": rewritten}

    def _by_model(self, question: str, turns: list[Turn]) -> str:
        """The chat model's rewrite, or "" when there is no model or it fails (the offline rewrite stands)."""
        if self._chat is None:
            return ""
        from haystack.dataclasses import ChatMessage

        messages = [ChatMessage.from_system(REWRITE_PROMPT)]
        for turn in turns:
            messages.append(ChatMessage.from_user(turn.question))
            if turn.answer:
                messages.append(ChatMessage.from_assistant(_uncited(turn.answer)[:600]))
        messages.append(ChatMessage.from_user(question))
        try:
            reply = self._chat.run(messages=messages)["replies"][0].text or ""
        except Exception as exc:  # noqa: BLE001 - any fault of the model leaves the offline rewrite
            logger.warning("The chat model could not rewrite the follow-up: {problem}", problem=cut(str(exc), 200))
            return ""
        lines = [line.strip().strip('"') for line in reply.strip().splitlines() if line.strip()]
        text = lines[0] if lines else ""
        return text if 0 < len(text) <= 500 else ""
