"""An entity's kind from all the evidence of its mentions, with a confidence; and what is not an entity at all.

Evidence of one entity in one document (`KindEvidence`):

- the named-entity labels spaCy gave its mentions (PERSON, ORG, GPE ...), or none (a proper-noun run), over all its
  mentions and over those by its fullest name;
- the nouns the text equates it with ("X is an open-source database", "X, a physicist at ...", "the company X");
- the roles it plays: the predicates it is the subject or the object of ("was born", "founded", "raised",
  "released", "located in"), and how often it is the subject of a verb of saying ("said", "announced":
  `SPEECH_VERBS`), a person's or an organisation's act alike; and, whatever the verb or the preposition, how often
  it is an agent, a passive subject, an object, a preposition's object or a possessor (`PARTS`);
- the first pronoun after each mention in its sentence, which most often refers back to it: a person's ("he",
  "her") or a thing's ("it", "its"); and how often a title or an office stands right before it, modifying it ("Dr",
  "CEO", "President": `TITLE_WORDS`; not one the recogniser reads as the first word of a place's or an
  organisation's name, "St. Orvel", "General Tavrin Motors");
- the shape of its name (an acronym, a name with digits or an inner capital, how many words), and whether a name
  of it ends in a company designator ("Nordvik Aviation Ltd.", "Halden Group": `model.DESIGNATORS`, the words the
  graph already drops from an organisation's key);
- the kind its fullest name's last word names, when it is a noun of kind (`KIND_NOUNS`): "Quorvane Developers
  Conference" is named as an event, "Brask Valley University" as an organisation (weighed with the rest);
- a learned reading of the name itself and of its sentences: the sentence-embedding vector of its fullest name
  (a name sits near the names of its kind: a given name and a surname near people's) and the mean vector of the
  sentences that mention it, each read by a logistic regression of its own (`EmbeddingReader`) whose kind
  probabilities are features of the model (stacking; the vectors are the extractor's, `name_vector` and
  `sentence_vector`); and the mean vector of the names its mentions are listed with ("Dalby, Orsk and Vell": a list
  holds things of one kind), read by the name's reader (`list_vector`).

`KindModel` combines them: a multinomial logistic regression over `features(evidence)` whose weights are fitted by
`pipelines.evaluation.entity_kinds` on a labelled set and shipped in `entity_kinds.json`. The kind with the highest
probability is kept when that probability reaches the model's threshold; below it the kind is "other" (the
evidence is kept and shown): a weak or disagreeing entity is never given a confident wrong kind. Two numbers beside
the weights are measured rather than fitted: how often the one kind the nouns the text equates a name with name
(`equated_kind`) is its kind on the tune samples (`equated`), and how often a name a result follows, which little says
is a person's, is an organisation (`competes`, `competing`: "Dunharrow beat Brisk Vale 3-1"); where the model is less
sure of its own kind than that, the text's word, else the result, decides.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from components.graph.model import DESIGNATORS
from components.model_files import read_json_object

# The inventory an analyst's corpus needs; "other" also holds concepts ("JSON", "CPU") and weak evidence.
KINDS = ("person", "organization", "place", "product", "work", "event", "other")
DEFAULT_MODEL_PATH = Path(__file__).with_name("entity_kinds.json")

# Nouns an entity is equated with, by the kind they name ("the company X", "X, a physicist", "X is a database").
# A short list of general English nouns of kind, written from the dictionary sense of each kind (the basic-level
# words for an organisation, a made thing, a person's role, a place, an event, a work) and the software the
# product is built for; no word of one trade or industry (no vehicles, drugs or gadgets), so that no evaluation
# set's subject is named here. Nouns of one trade still count through the fitted context features.
KIND_NOUNS: dict[str, set[str]] = {
    "organization": set(
        "company firm corporation business startup start-up manufacturer maker bank group agency organisation "
        "organization institution university party team publisher retailer supplier operator vendor conglomerate "
        "subsidiary consortium authority ministry government lab laboratory foundation club union newspaper "
        "network broadcaster institute fund".split()
    ),
    "product": set(
        "product device software program application app service platform tool engine database library framework "
        "system model package language toolkit extension interface api client server editor compiler version "
        "release plugin module".split()
    ),
    "person": set(
        "man woman executive founder co-founder cofounder chairman chairwoman president minister director officer "
        "analyst spokesman spokeswoman spokesperson leader chief engineer researcher scientist author actor "
        "professor student developer programmer maintainer inventor writer designer entrepreneur ceo "
        "investor partner colleague".split()
    ),
    "place": set("city country state town region capital nation island province village county district".split()),
    "event": set("event conference summit festival election war meeting ceremony tournament workshop".split()),
    "work": set("paper book article novel film album song essay report study thesis series poem".split()),
}
# Words of a title or an office ("Chief Executive", "Vice President", "Sen."): a name made only of them is no
# entity, and they are not part of the name they precede ("Spokesman Tomas Vell").
TITLE_WORDS = set(
    "mr mrs ms miss dr prof sir dame lord lady sen senator rep representative gov governor gen general col colonel "
    "capt captain lt sgt president vice deputy assistant associate acting chief executive officer operating "
    "financial technology director managing chairman chairwoman chair secretary minister prime "
    "premier chancellor spokesman spokeswoman spokesperson head manager ceo cfo coo cto evp svp vp mayor judge "
    "justice king queen prince princess pope bishop father saint st senior junior".split()
)
# Predicates whose subject (s:), passive subject (p:) or object (o:) is most often of one kind.
ROLE_KINDS: dict[str, set[str]] = {
    "person": {
        "p:bear",
        "s:die",
        "s:marry",
        "s:study",
        "s:graduate",
        "s:join",
        "s:leave",
        "s:retire",
        "s:co-found",
        "s:cofound",
        "s:found",
        "s:say",
        "s:tell",
        "s:write",
        "s:invent",
        "s:serve",
        "s:resign",
        "s:work",
        "s:receive",
        "s:win",
        "s:propose",
        "s:lead",
    },
    "organization": {
        "s:raise",
        "s:acquire",
        "s:hire",
        "s:employ",
        "s:sponsor",
        "p:found",
        "p:acquire",
        "p:headquarter",
        "s:announce",
        "s:sell",
        "s:buy",
        "s:sign",
        "s:invest",
        "s:fund",
        "s:open",
        "s:partner",
        "p:fund",
        "s:order",
    },
    "product": {
        "p:release",
        "p:launch",
        "o:release",
        "o:launch",
        "o:use",
        "o:install",
        "o:download",
        "p:write",
        "s:support",
        "s:store",
        "s:run",
        "s:index",
        "s:provide",
        "p:use",
        "s:offer",
        "o:ship",
        "p:ship",
        "s:implement",
        "o:fork",
        "p:fork",
        "s:add",
    },
    "place": {"i:in", "i:at", "i:near", "i:from", "i:across"},
}


def kind_of_noun(noun: str) -> str | None:
    """The kind a noun names ("company" -> organization, "physicist" -> person), or None."""
    noun = noun.lower()
    found = next((kind for kind, nouns in KIND_NOUNS.items() if noun in nouns), None)
    if found is None and noun.endswith(("maker", "builder", "producer", "provider")):
        return "organization"
    if found is None and len(noun) > 5 and noun.endswith(("ist", "ian")) and noun not in ("christian", "asian"):
        return "person"  # physicist, mathematician, librarian
    return found


def competes(evidence: KindEvidence) -> bool:
    """True when a result follows the entity's name ("Varnholm 2 Ostby 1") and little says it is a person (the
    recogniser's person label on no more than half its mentions, no title before it): what competes and is scored
    without being a person is mostly a team."""
    persons = evidence.labels["person"]
    return evidence.scored > 0 and persons * 2 <= sum(evidence.labels.values()) and not evidence.titled


def equated_kind(evidence: KindEvidence) -> str | None:
    """The one kind the nouns the text equates the entity with name ("Ines Corrado, the novelist", "her publisher
    Harrow House", "Force Ouvrière, a union"), or None when they name none or more than one."""
    kinds = set(filter(None, map(kind_of_noun, evidence.nouns)))
    return kinds.pop() if len(kinds) == 1 else None


@dataclass
class KindEvidence:
    """What one document says of one entity's kind."""

    names: list[str] = field(default_factory=list)
    labels: Counter = field(default_factory=Counter)  # product kinds of spaCy labels, "" for none
    nouns: set[str] = field(default_factory=set)
    roles: Counter = field(default_factory=Counter)  # "s:found", "p:bear", "o:release", "i:in"
    context: Counter = field(default_factory=Counter)  # lemmas around its mentions: its head and modifiers
    name_labels: Counter = field(default_factory=Counter)  # (words in the mention's name, its label): mentions
    pronouns: Counter = field(default_factory=Counter)  # "person" / "thing": the first pronoun after a mention
    titled: int = 0  # mentions right after a title or an office ("Dr", "CEO", "President")
    spoke: int = 0  # mentions that are the subject of a verb of saying ("Vennick said", "Quillon announced")
    scored: int = 0  # mentions with a result after them ("Varnholm 2 Ostby 1", "Ostby 3-1": `result_after`)
    # The embeddings of its fullest name and (the normalised mean) of the sentences that mention it, set by the
    # extractor once the document is read; None without an embedding model.
    name_vector: Any = field(default=None, repr=False, compare=False)
    sentence_vector: Any = field(default=None, repr=False, compare=False)
    # The names its mentions are coordinated with ("Dalby, Orsk and Vell": a list holds things of one kind), and the
    # normalised mean of their embeddings (`list_vector`, None when it is listed with no name).
    listed: list[str] = field(default_factory=list)
    list_vector: Any = field(default=None, repr=False, compare=False)

    def add(self, other: KindEvidence) -> None:
        self.names += [name for name in other.names if name not in self.names]
        self.labels.update(other.labels)
        self.nouns |= other.nouns
        self.roles.update(other.roles)
        self.context.update(other.context)
        self.name_labels.update(other.name_labels)
        self.pronouns.update(other.pronouns)
        self.titled += other.titled
        self.spoke += other.spoke
        self.scored += other.scored
        self.listed += [name for name in other.listed if name not in self.listed]

    def summary(self) -> str:
        """The evidence in one line: "labels person 3, organization 1; called engineer; roles s:found"."""
        parts = []
        if self.labels:
            parts.append("labels " + ", ".join(f"{k or 'none'} {n}" for k, n in self.labels.most_common(4)))
        if self.nouns:
            parts.append("called " + ", ".join(sorted(self.nouns)[:5]))
        telling = [role for role, _ in self.roles.most_common() if any(role in r for r in ROLE_KINDS.values())]
        if telling:
            parts.append("roles " + ", ".join(telling[:5]))
        if self.titled:
            parts.append(f"after a title {self.titled}")
        if self.spoke:
            parts.append(f"speaks {self.spoke}")
        if self.scored:
            parts.append(f"a result after it {self.scored}")
        if self.pronouns:
            # What was counted, not a claim that the pronoun is the name's: it may be another name's ("Vennick joined
            # Quillon, and its shares rose").
            said = {"person": "he/she", "thing": "it"}
            parts.append("next pronoun " + ", ".join(f"{said[k]} {n}" for k, n in self.pronouns.most_common()))
        if _designated(self.names):
            parts.append("named with a company designator")
        return "; ".join(parts)


# Verbs of saying: their subject is a person or an organisation ("Vennick said", "Quillon announced", "the ministry
# confirmed"), never a place or a thing; the evidence tells an agent from a concept whatever its label.
SPEECH_VERBS = set("say tell announce state add confirm claim report explain note comment argue warn insist".split())
# Of those, the verbs whose noun object is another sense than saying ("Varna added 3,000 jobs", "the storm claimed 30
# lives"): verbs of saying only with what is said as a clause or a quotation ("added that ...", '"...," she added').
SPEECH_VERBS_WITH_CLAUSE = {"add", "claim"}
LABELS = (*KINDS[:-1], "group", "law", "designation", "")
# What the embeddings are read by: a regression of its own per part, whose kind probabilities are features.
EMBEDDING_PARTS = ("name", "sentences", "list")
# A part read by another part's reader: the names an entity is listed with are names, read by the name's reader.
READ_BY = {"list": "name"}
# How its mentions take part in their clauses, whatever the verb or the preposition (`kinds-10`): the subject of an
# active verb other than the copula (an agent: a person or an organisation acts, a place or a thing rarely does), the
# subject of a passive, the object of a verb, the object of a preposition (where a place most often stands), and the
# possessor of a noun ("Quillon's board": a person's or an organisation's).
PARTS = ("agent", "passive", "object", "preposition", "possessor")
_PART_OF_ROLE = {"s": "agent", "p": "passive", "o": "object", "i": "preposition", "g": "possessor"}
FEATURES = (
    *(f"label:{k}" for k in LABELS),
    *(f"full:{k}" for k in LABELS),
    *(f"noun:{k}" for k in KINDS[:-1]),
    *(f"role:{k}" for k in ROLE_KINDS),
    "shape:acronym",
    "shape:digit",
    "shape:inner_capital",
    "shape:lower",
    "shape:one_word",
    "shape:three_words",
    "name:designator",
    *(f"head:{k}" for k in KIND_NOUNS),
    "pronoun:person",
    "pronoun:thing",
    "title:before",
    "role:speaker",
    *(f"part:{k}" for k in PARTS),
    "mentions",
    *(f"embedding_{part}:{k}" for part in EMBEDDING_PARTS for k in KINDS),
)


def _shape(name: str) -> dict[str, float]:
    letters = [c for c in name if c.isalpha()]
    words = name.split()
    return {
        "shape:acronym": float(
            bool(letters) and len(words) == 1 and all(c.isupper() for c in letters) and len(name) <= 6
        ),
        "shape:digit": float(any(c.isdigit() for c in name)),
        "shape:inner_capital": float(any(any(c.isupper() for c in w[1:]) and not w.isupper() for w in words)),
        "shape:lower": float(not any(c.isupper() for c in name)),
        "shape:one_word": float(len(words) == 1),
        "shape:three_words": float(len(words) >= 3),
    }


def _designated(names: list[str]) -> bool:
    """True when a name of two or more words ends in a company designator ("Brask Ferrow Ltd.", "Halden Group",
    "Quillon Holdings"): the way the language writes an organisation's name, whatever its trade."""
    for name in names:
        # As the key reads them: "S.A." is "sa", and a leading "the" is no word of the name ("The Group" is none).
        words = [word.replace(".", "").strip(",").lower() for word in name.split()]
        if words[:1] == ["the"]:
            words = words[1:]
        if len(words) >= 2 and words[-1] in DESIGNATORS:
            return True
    return False


def fullest_name(evidence: KindEvidence) -> str:
    """The name of the most words the entity goes by in the document, as running text writes it where a headline's
    capitals write it too ("Tilsby" over "TILSBY": capitals say nothing of a name's shape), then the longest: what
    its shape and its name embedding read."""
    return max(evidence.names, key=lambda n: (len(n.split()), not n.isupper(), len(n)), default="")


def embedding_vectors(evidence: KindEvidence) -> dict[str, Any]:
    """The evidence's embeddings by part (`EMBEDDING_PARTS`), None where the extractor set none."""
    return {"name": evidence.name_vector, "sentences": evidence.sentence_vector, "list": evidence.list_vector}


def features(
    evidence: KindEvidence, context: list[str] = (), readings: dict[str, dict[str, float]] | None = None
) -> list[float]:
    """The evidence as the model's feature vector (in `FEATURES` order, then the `context` words' shares of the
    mentions): label, noun and role shares, shape, and `readings`, the kind probabilities the model's
    `EmbeddingReader`s give the name's and the sentences' embeddings (`{"name": {kind: p}, ...}`; 0 without)."""
    values: dict[str, float] = {}
    for part, probabilities in (readings or {}).items():
        for kind, p in probabilities.items():
            values[f"embedding_{part}:{kind}"] = p
    total = sum(evidence.labels.values()) or 1
    for label, count in evidence.labels.items():
        values[f"label:{label}"] = count / total
    # The labels of the mentions by the fullest name ("Nordvik Aerospace" over the bare "Nordvik" the recogniser
    # may read as a place): a full name is the recogniser's surest cue.
    longest = max((words for words, _ in evidence.name_labels), default=0)
    full = {label: n for (words, label), n in evidence.name_labels.items() if words == longest}
    for label, count in full.items():
        values[f"full:{label}"] = count / sum(full.values())
    noun_kinds = Counter(filter(None, map(kind_of_noun, evidence.nouns)))
    for kind, count in noun_kinds.items():
        values[f"noun:{kind}"] = count / sum(noun_kinds.values())
    role_kinds: Counter = Counter()
    for role, count in evidence.roles.items():
        role_kinds.update({kind: count for kind, roles in ROLE_KINDS.items() if role in roles})
    for kind, count in role_kinds.items():
        values[f"role:{kind}"] = count / sum(role_kinds.values())
    values.update(_shape(fullest_name(evidence)))
    values["name:designator"] = float(_designated(evidence.names))
    # A name of two or more words whose last word is a noun of kind names what it is ("... Conference", "...
    # University"); a lone word is no name of that kind ("Conference" alone is a heading or a piece).
    words = fullest_name(evidence).split()
    head = kind_of_noun(words[-1].strip(".,")) if len(words) >= 2 else None
    if head:
        values[f"head:{head}"] = 1.0
    for kind in ("person", "thing"):
        values[f"pronoun:{kind}"] = min(1.0, evidence.pronouns[kind] / total)
    values["title:before"] = min(1.0, evidence.titled / total)
    values["role:speaker"] = min(1.0, evidence.spoke / total)
    for role, count in evidence.roles.items():
        prefix, _, lemma = role.partition(":")
        part = _PART_OF_ROLE.get(prefix)
        if part and not (part == "agent" and lemma in ("be", "have")):
            values[f"part:{part}"] = min(1.0, values.get(f"part:{part}", 0.0) + count / total)
    values["mentions"] = math.log1p(total) / 3
    return [values.get(name, 0.0) for name in FEATURES] + [min(1.0, evidence.context[w] / total) for w in context]


@dataclass
class KindDecision:
    kind: str
    confidence: float
    evidence: str


class EmbeddingReader:
    """A multinomial logistic regression over one embedding (a name's, or its sentences' mean): its kind
    probabilities are features of the `KindModel`."""

    def __init__(self, classes: list[str], coef: list[list[float]], intercept: list[float]) -> None:
        self.classes = list(classes)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = np.asarray(intercept, dtype=np.float64)
        if self.coef.ndim != 2 or self.coef.shape[0] != len(self.classes) or len(self.intercept) != len(self.classes):
            raise ValueError("an embedding reader needs one row of weights and one intercept per kind")

    def probabilities(self, vector: Any) -> dict[str, float]:
        """The kind probabilities of `vector`; {} when there is none (no embedding model, or another dimension)."""
        if vector is None or np.shape(vector) != (self.coef.shape[1],):
            return {}
        scores = self.coef @ np.asarray(vector, dtype=np.float64) + self.intercept
        exps = np.exp(scores - scores.max())
        return {kind: float(e) for kind, e in zip(self.classes, exps / exps.sum(), strict=True)}

    def to_json(self) -> dict[str, Any]:
        return {
            "classes": self.classes,
            "coef": [[round(float(w), 5) for w in row] for row in self.coef],
            "intercept": [round(float(b), 5) for b in self.intercept],
        }


class KindModel:
    """The fitted combination of the evidence (see the module's docstring); `decide` gives kind and confidence."""

    def __init__(
        self,
        classes: list[str],
        coef: list[list[float]],
        intercept: list[float],
        threshold: float,
        version: str = "",
        feature_names: list[str] | None = None,
        context: list[str] = (),
        readers: dict[str, EmbeddingReader] | None = None,
        parts: tuple[str, ...] | None = None,
        equated: float | None = None,
        competing: float | None = None,
    ) -> None:
        # An older model (`kinds-6` and before read no embeddings) would fail on the first entity: refuse it now.
        named = f"The entity-kind model {version}".rstrip()
        if feature_names is not None and list(feature_names) != list(FEATURES):
            raise ValueError(f"{named} was fitted on other features than this version reads; fit it again.")
        width = len(FEATURES) + len(context)
        if any(len(row) != width for row in coef):
            raise ValueError(f"{named} has not one weight per feature this version reads ({width}); fit it again.")
        self.classes, self.coef, self.intercept = list(classes), coef, intercept
        self.threshold, self.version, self.context = threshold, version, list(context)
        self.readers = dict(readers or {})
        # How often the kind the text equates an entity with (`equated_kind`) is its kind, on the samples the model
        # was fitted on: where the model is less sure than that of a kind of its own, the text's word decides.
        self.equated = equated
        # How often an entity that `competes` is an organisation, on the same samples: where the model is less sure
        # than that of another kind (and the text calls it nothing of one kind), it is an organisation.
        self.competing = competing
        # The embedding parts it reads (`EMBEDDING_PARTS`), each by its reader or the one of `READ_BY`.
        self.parts = tuple(parts) if parts is not None else tuple(self.readers)
        if any(part not in EMBEDDING_PARTS or READ_BY.get(part, part) not in self.readers for part in self.parts):
            raise ValueError(f"{named} reads an embedding it has no reader of; fit it again.")

    def embedding_widths(self) -> set[int]:
        """How many numbers the embeddings its readers read hold (those of the model it was fitted with); empty
        when it reads none."""
        return {int(reader.coef.shape[1]) for reader in self.readers.values()}

    def readings(self, evidence: KindEvidence) -> dict[str, dict[str, float]]:
        """What the model's `EmbeddingReader`s read in the evidence's embeddings, by part."""
        vectors = embedding_vectors(evidence)
        return {part: self.readers[READ_BY.get(part, part)].probabilities(vectors.get(part)) for part in self.parts}

    @classmethod
    def neutral(cls) -> KindModel:
        """A model without evidence weights: every entity "other" (to extract the evidence a model is fitted on)."""
        return cls(["other"], [[0.0] * len(FEATURES)], [0.0], 0.0, "neutral")

    @classmethod
    def load(cls, path: Path | str = DEFAULT_MODEL_PATH) -> KindModel:
        """The model the fitting script wrote at `path`; ValueError with one sentence when it cannot be read."""
        return cls.load_json(read_json_object(path, "entity-kind model"), path)

    @classmethod
    def load_json(cls, data: dict[str, Any], path: Path | str = "") -> KindModel:
        """The model of a file's JSON object (`load`); ValueError with one sentence when it is not one."""
        try:
            return cls(
                data["classes"],
                data["coef"],
                data["intercept"],
                data["threshold"],
                data.get("version", ""),
                data.get("features"),
                data.get("context", []),
                {part: EmbeddingReader(**reader) for part, reader in (data.get("readers") or {}).items()},
                data.get("parts"),
                data.get("equated"),
                data.get("competing"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            where = f" at {path}" if path else ""
            raise ValueError(f"the entity-kind model{where} is not one the fitting script writes: {exc}") from exc

    def probabilities(
        self, evidence: KindEvidence, readings: dict[str, dict[str, float]] | None = None
    ) -> dict[str, float]:
        """The kind probabilities of the evidence (with the readings of its embeddings, read now unless given)."""
        x = features(evidence, self.context, self.readings(evidence) if readings is None else readings)
        scores = [
            sum(w * v for w, v in zip(row, x, strict=True)) + b
            for row, b in zip(self.coef, self.intercept, strict=True)
        ]
        top = max(scores)
        exps = [math.exp(s - top) for s in scores]
        total = sum(exps)
        return {kind: e / total for kind, e in zip(self.classes, exps, strict=True)}

    def decide(self, evidence: KindEvidence) -> KindDecision:
        """The most probable kind and its probability; "other" when that is below the threshold. A name read as a
        model designation ("the Nordvik 909") weighs through its `label:designation` share like any label."""
        readings = self.readings(evidence)
        probabilities = self.probabilities(evidence, readings)
        kind, confidence = max(probabilities.items(), key=lambda item: item[1])
        if confidence < self.threshold:
            kind = "other"
        # What the text calls it ("the novelist", "a union") decides where the model is less sure of its own kind
        # than that word has been right on the samples it was fitted on (`equated`).
        said = equated_kind(evidence)
        decided_by = ""
        if said and self.equated is not None and said != kind and confidence < self.equated:
            kind, confidence = said, self.equated
            decided_by = f"kind {said}: what the text calls it (right {self.equated:.0%} of the time when fitted)"
        elif not said and self.competing is not None and kind != "organization" and confidence < self.competing:
            if competes(evidence):
                kind, confidence = "organization", self.competing
                decided_by = (
                    f"kind organization: a result follows its name (right {self.competing:.0%} of the time when fitted)"
                )
        # What the embeddings read, shown with the rest: "name reads person 0.81; sentences read place 0.56".
        read = [
            f"{_READS.get(part, part + ' read')} {top} {p:.2f}"
            for part, found in readings.items()
            if found
            for top, p in [max(found.items(), key=lambda item: item[1])]
        ]
        return KindDecision(
            kind, round(confidence, 3), "; ".join(filter(None, [evidence.summary(), *read, decided_by]))
        )


# How the evidence line names what each embedding reader read: "name reads person 0.81; sentences read place 0.56".
_READS = {"name": "name reads", "sentences": "sentences read", "list": "names listed with it read"}


@lru_cache(maxsize=1)
def default_kind_model() -> KindModel:
    """The shipped model (`entity_kinds.json`), loaded once."""
    return KindModel.load()


def to_json(model: KindModel) -> dict[str, Any]:
    return {
        "version": model.version,
        "features": list(FEATURES),
        "context": model.context,
        "classes": model.classes,
        "coef": [[round(w, 5) for w in row] for row in model.coef],
        "intercept": [round(b, 5) for b in model.intercept],
        "threshold": model.threshold,
        "readers": {part: reader.to_json() for part, reader in model.readers.items()},
        "parts": list(model.parts),
        "equated": model.equated,
        "competing": model.competing,
    }
