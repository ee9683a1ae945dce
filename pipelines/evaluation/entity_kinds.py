"""`python -m pipelines.evaluation.entity_kinds`: fit and check the entity-kind model on labelled entities.

A labelled set is a JSONL file of `{"key": normalised name, "kind": person | organization | place | product | work
| event | other | junk}` (junk: not an entity at all: a common noun, a fragment of a name, a heading word). The
corpus is extracted with the graph's `LanguageExtractor`; every entity the graph keeps is one sample per document
(its evidence there), labelled by its key.

- `fit --corpus demo --labels L.jsonl` fits the multinomial logistic regression and its "other" threshold on the
  tune set and writes `components/graph/entity_kinds.json`;
- `equated` and `competing` measure, on labelled tune sets, how often the kind the text equates an entity with
  is right and how often an entity with a result after its name (`kinds.competes`) is an organisation, and write
  that number into the model (its weights kept): where the model is less sure of another kind, that kind decides;
- `check --corpus C --labels L.jsonl` reports, per corpus entity (the most confident document's kind, as the
  graph store keeps it): kinds correct among the kept entities (all kinds, and person / organization / place /
  other), the junk share, the share of labelled real entities kept, the share of the kept real ones given a wrong
  kind other than "other" (`wrong_kind`, `wrong_kind_4`), and unlabelled keys;
- `dump --corpus C` lists the kept entities with their kind and evidence, to label.

`--corpus demo` is the shipped demo corpus; any other value is a corpus JSONL (id, title, text, date, url).
`--ids REGEX` keeps the documents whose id matches, and `--sample N` a fixed-seed sample of N of them (the same
documents on every run), so that a part of a large corpus can be labelled and checked; for one corpus among
several, the same selection follows its path: `--corpus 'corpus.jsonl?ids=REGEX&sample=N'`. A question set's
corpus may instead be cut to the gold documents of some of its questions: `--corpus 'corpus.jsonl?questions=0-19'`
keeps the documents the `questions.jsonl` beside the corpus names (`gold_doc_ids`) for its questions 0 to 19 (file
order), so that only a tune half's documents are labelled and fitted on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

from components.database import DatabaseUnavailable
from components.graph.extraction import LanguageExtractor
from components.graph.kinds import (
    DEFAULT_MODEL_PATH,
    EMBEDDING_PARTS,
    FEATURES,
    KINDS,
    READ_BY,
    EmbeddingReader,
    KindEvidence,
    KindModel,
    competes,
    embedding_vectors,
    equated_kind,
    features,
    to_json,
)
from components.ingestion.formats import convert_bytes
from components.resilience.errors import first_line
from components.settings import get_settings
from components.text.dates import parse_date
from ingest.demo import demo_items
from pipelines.evaluation.ingested import as_ingested
from pipelines.evaluation.jsonl import EvaluationInputError, load_jsonl

VERSION = "kinds-10"
MIN_CONTEXT = 3  # a context word must occur around this many labelled entities to be a feature
C_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # the inverse regularisations tried (the best out of fold is kept)
SEED = 0  # the seed of `--sample`
WRONG_COST = 0.5  # what a wrong kind costs beside "other" (0) and a right kind (1), when choosing the threshold


def demo_documents() -> list[Any]:
    """The shipped demo corpus as document records (converted as ingestion converts them)."""
    documents = []
    for item in demo_items():
        converted = convert_bytes(item.path.read_bytes(), item.filename, item.doc_type)
        documents.append(
            SimpleNamespace(
                document_id=item.source,
                text=converted.text,
                title=converted.title or item.filename,
                date=converted.date,
                url=converted.url,
            )
        )
    return documents


def corpus_documents(path: Path) -> list[Any]:
    """The documents of a corpus JSONL (`id`, `text`; `title`, `date`, `url` optional)."""
    documents = []
    for row in load_jsonl(path, ("id", "text")):
        date = parse_date(row.get("date") or "") if row.get("date") else None
        date = date.date() if isinstance(date, dt.datetime) else date
        documents.append(
            SimpleNamespace(
                document_id=row["id"], text=row["text"], title=row.get("title", ""), date=date, url=row.get("url")
            )
        )
    return documents


def chosen_documents(corpus: str, ids: str | None = None, sample: int | None = None) -> list[Any]:
    """The corpus's documents; those whose id matches `ids` (a regular expression), and of them a sample of
    `sample` drawn with a fixed seed. `corpus` may carry its own selection: "corpus.jsonl?ids=REGEX&sample=N"."""
    path, _, query = corpus.partition("?")
    selection = dict(parse_qsl(query))
    ids = selection.get("ids", ids)
    sample = int(selection["sample"]) if "sample" in selection else sample
    documents = demo_documents() if path == "demo" else corpus_documents(Path(path))
    if "questions" in selection:
        gold = _gold_documents(Path(path).parent / "questions.jsonl", selection["questions"])
        documents = [d for d in documents if str(d.document_id) in gold]
    if ids:
        documents = [d for d in documents if re.match(ids, str(d.document_id))]
    if sample is not None and sample < len(documents):
        chosen = set(random.Random(SEED).sample(range(len(documents)), sample))
        documents = [d for i, d in enumerate(documents) if i in chosen]
    return documents


def _gold_documents(questions: Path, span: str) -> set[str]:
    """The gold document ids (`gold_doc_ids`) of the questions `span` ("A-B", both counted, file order) names."""
    first, _, last = span.partition("-")
    if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
        raise EvaluationInputError(f"questions= takes a range of question numbers such as 0-19, not {span!r}")
    rows = load_jsonl(questions, ("id", "gold_doc_ids"))
    if int(last) >= len(rows):
        raise EvaluationInputError(
            f"questions={span} asks past the last question: {questions.name} holds {len(rows)} questions "
            f"(0-{len(rows) - 1})"
        )
    chosen = rows[int(first) : int(last) + 1]
    for row in chosen:
        if not isinstance(row["gold_doc_ids"], list):
            raise EvaluationInputError(f"{questions.name}: question {row['id']!r} gives gold_doc_ids that are no list")
    return {str(document_id) for row in chosen for document_id in row["gold_doc_ids"]}


def samples(
    documents: list[Any], model: KindModel | None = None, corpus_names: bool = False
) -> list[tuple[str, str, KindEvidence, Any]]:
    """(document id, entity key, its evidence there, the graph's `EntityMention`) for every entity kept; the kinds
    are `model`'s (the shipped model's by default). Each document is extracted on its own, or, with `corpus_names`,
    with the names of the whole corpus known, as in a graph that holds the corpus (re-extracted after ingestion);
    as ingestion stores it, with its chunks (`as_ingested`)."""
    extractor = LanguageExtractor(embedding_model=get_settings().embedding_model)  # the model `as_ingested` uses
    if model is not None:
        extractor.kind_model = model
    documents, chunks = as_ingested(documents)
    known = None
    if corpus_names:
        names = {
            m.key
            for document, parts in zip(documents, chunks, strict=True)
            for m in extractor.extract(document, parts).entities
        }
        known = names.intersection
    found = []
    for document, parts in zip(documents, chunks, strict=True):
        graph = extractor.extract(document, parts, known_names=known)
        found += [(document.document_id, m.key, m.kind_evidence, m) for m in graph.entities]
    return found


def _corpus_name(corpus: str, ids: str | None = None, sample: int | None = None) -> str:
    """A corpus as the fitted model records it: "demo", or the corpus file's folder and name, with the selection
    `chosen_documents` made of it (its own, else the `ids` and `sample` given for every corpus); not where the folder
    lies on the machine that fitted it."""
    path, _, query = corpus.partition("?")
    selection = dict(parse_qsl(query))
    added = [f"ids={ids}"] if ids and "ids" not in selection else []
    added += [f"sample={sample}"] if sample is not None and "sample" not in selection else []
    query = "&".join([*([query] if query else []), *added])
    return (path if path == "demo" else "/".join(Path(path).parts[-2:])) + (f"?{query}" if query else "")


def load_labels(path: Path) -> dict[str, str]:
    """Labelled entity keys: `{"key": normalised name, "kind": a kind or "junk"}` a line."""
    return {row["key"]: row["kind"] for row in load_jsonl(path, ("key", "kind"))}


def fit(
    found: list[tuple[str, str, KindEvidence, Any]],
    labels: dict[str, str],
    source: dict[str, int] | None = None,
    parts: tuple[str, ...] = EMBEDDING_PARTS,
) -> KindModel:
    """The logistic regression over the labelled samples (junk left out: the junk rules decide it), and the
    threshold below which a kind is "other": the one maximising the samples whose kind is right less `WRONG_COST`
    for each given a wrong kind other than "other" (a confident wrong kind is worse than "other"), on
    probabilities predicted out of fold (each fitting corpus by a model fitted on the others; 5 folds when there
    is one corpus), so that the threshold does not fit the training samples nor their corpus. `parts`: the
    embeddings read (`_fit_readers`)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import LeaveOneGroupOut, cross_val_predict

    labelled = [(ev, labels[key]) for _, key, ev, _ in found if labels.get(key) in KINDS]
    groups = [(source or {}).get(document_id, 0) for document_id, key, _, _ in found if labels.get(key) in KINDS]
    # Context words seen around at least `MIN_CONTEXT` labelled entities, and, when the samples come from several
    # corpora (`source`: document id -> corpus), around entities of at least two of them: a word only one corpus
    # uses near its names (a product line's lower-case name) would fit that corpus's entities, not kinds.
    spread = Counter(word for ev, _ in labelled for word in ev.context)
    corpora: dict[str, set[int]] = {}
    for document_id, key, ev, _ in found:
        if labels.get(key) in KINDS:
            for word in ev.context:
                corpora.setdefault(word, set()).add((source or {}).get(document_id, 0))
    needed = min(2, len(set((source or {0: 0}).values())))
    context = sorted(word for word, n in spread.items() if n >= MIN_CONTEXT and len(corpora[word]) >= needed)
    y = [kind for _, kind in labelled]
    # With several fitting corpora each is predicted by a model fitted on the others (a corpus's own names and
    # wording cannot help), so that C and the threshold are those that carry over to a text not fitted on; and each
    # corpus weighs the same, however many entities it has.
    folds = LeaveOneGroupOut() if len(set(groups)) > 1 else 5
    sizes = Counter(groups)
    weights = [len(groups) / (len(sizes) * sizes[group]) for group in groups]
    readers, readings, read = _fit_readers([ev for ev, _ in labelled], y, groups, folds, weights, parts)
    x = [features(ev, context, reading) for (ev, _), reading in zip(labelled, readings, strict=True)]
    best = (-9.0, 0.0, 1.0)  # utility, threshold, C
    for strength in C_GRID:
        model = LogisticRegression(C=strength, max_iter=5000)
        held_out = cross_val_predict(
            model, x, y, groups=groups, cv=folds, method="predict_proba", params={"sample_weight": weights}
        )
        classes = sorted(set(y))
        for step in range(0, 90, 5):
            threshold = step / 100
            utility = 0.0
            for probabilities, gold in zip(held_out, y, strict=True):
                top = max(range(len(classes)), key=lambda i: probabilities[i])
                kind = classes[top] if probabilities[top] >= threshold else "other"
                utility += 1.0 if kind == gold else 0.0 if kind == "other" else -WRONG_COST
            if utility / len(y) > best[0] + 1e-9:
                best = (utility / len(y), threshold, strength)
    print(f"out-of-fold utility on the labelled tune samples: {best[0]:.3f} at threshold {best[1]}, C {best[2]}")
    regression = LogisticRegression(C=best[2], max_iter=5000).fit(x, y, sample_weight=weights)
    classes = list(regression.classes_)
    equated, competing = equated_precision(labelled), competing_precision(labelled)
    print(measured_line("equated", labelled))
    print(measured_line("competing", labelled))
    return KindModel(
        classes,
        regression.coef_.tolist(),
        regression.intercept_.tolist(),
        best[1],
        VERSION,
        context=context,
        readers=readers,
        parts=read,
        equated=equated,
        competing=competing,
    )


def equated_precision(labelled: list[tuple[KindEvidence, str]]) -> float | None:
    """How often the one kind the nouns a sample is equated with name (`equated_kind`) is its labelled kind, over
    the labelled samples with such a kind (None without any): the confidence `KindModel.decide` gives that kind."""
    return _precision(_outcomes("equated", labelled))


def competing_precision(labelled: list[tuple[KindEvidence, str]]) -> float | None:
    """How often a labelled sample that `competes` (a result after its name, nothing saying it is a person) is an
    organisation (None without any such sample): the confidence `KindModel.decide` gives that kind."""
    return _precision(_outcomes("competing", labelled))


def _outcomes(rule: str, labelled: list[tuple[KindEvidence, str]]) -> list[bool]:
    """Right or wrong, for each labelled sample a measured rule (`equated` or `competing`) applies to: the one list
    its precision and its sample count are both read from."""
    if rule == "equated":
        said = [(equated_kind(evidence), kind) for evidence, kind in labelled]
        return [named == kind for named, kind in said if named]
    return [kind == "organization" for evidence, kind in labelled if competes(evidence)]


def _precision(outcomes: list[bool]) -> float | None:
    return round(sum(outcomes) / len(outcomes), 3) if outcomes else None


# The two rules measured beside the weights, and how the measuring commands name them.
_MEASURED = {
    "equated": "the kind the text equates an entity with",
    "competing": "an organisation where a result follows the name",
}


def measured_line(rule: str, labelled: list[tuple[KindEvidence, str]]) -> str:
    """One sentence on a measured rule (`equated` or `competing`): how often it was right and on how many labelled
    samples, or that no sample shows it, so that the rule is off (a model without the number never applies it)."""
    outcomes = _outcomes(rule, labelled)
    precision = _precision(outcomes)
    if precision is None:
        return f"{_MEASURED[rule]}: no labelled sample shows it, so the rule is off"
    return f"{_MEASURED[rule]}: right {precision:.3f} of the time, on {len(outcomes)} labelled samples"


def _fit_readers(
    evidence: list[KindEvidence],
    y: list[str],
    groups: list[int],
    folds: Any,
    weights: list[float],
    parts: tuple[str, ...] = EMBEDDING_PARTS,
) -> tuple[dict[str, EmbeddingReader], list[dict[str, dict[str, float]]], tuple[str, ...]]:
    """Per embedding part (the name's, the sentences'), a logistic regression from the vector to the kind
    (`EmbeddingReader`), its C the one of the least weighted log-loss out of fold; and each sample's readings as the
    kind model is fitted on them: predicted out of fold, as for a text the reader was not fitted on (stacking), so
    that the kind model learns how far a reading carries over. A part read by another's reader (`READ_BY`: the names
    an entity is listed with, by the name's) is read the same way, out of fold, by that reader. A sample without a
    part's vector (a name listed with no other) is no sample of its reader and has no reading of it, as
    `KindModel.readings` gives it none. Parts no sample has a vector of are left out; the parts read are returned
    with the readers."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.model_selection import check_cv, cross_val_predict

    readers: dict[str, EmbeddingReader] = {}
    strengths: dict[str, float] = {}
    readings: list[dict[str, dict[str, float]]] = [{} for _ in y]
    read: list[str] = []
    for part in sorted(parts, key=lambda p: p in READ_BY):  # a reader before the parts it reads
        vectors = [embedding_vectors(ev)[part] for ev in evidence]
        have = [i for i, v in enumerate(vectors) if v is not None]
        if not have:
            continue
        by = READ_BY.get(part, part)
        if by != part:
            if by not in readers:
                continue
            own = [embedding_vectors(ev)[by] for ev in evidence]
            for train, test in check_cv(folds, y, classifier=True).split(np.zeros(len(y)), y, groups):
                train = [i for i in train if own[i] is not None]
                test = [i for i in test if vectors[i] is not None]
                if not test:
                    continue
                reader = LogisticRegression(C=strengths[by], max_iter=3000).fit(
                    np.array([own[i] for i in train], dtype=np.float64),
                    [y[i] for i in train],
                    sample_weight=[weights[i] for i in train],
                )
                held_out = reader.predict_proba(np.array([vectors[i] for i in test], dtype=np.float64))
                for i, probabilities in zip(test, held_out, strict=True):
                    readings[i][part] = dict(zip(reader.classes_, map(float, probabilities), strict=True))
            print(f"embedding {part}: read by the {by} reader ({len(have)} samples)")
            read.append(part)
            continue
        x = np.array([vectors[i] for i in have], dtype=np.float64)
        part_y, part_groups = [y[i] for i in have], [groups[i] for i in have]
        part_weights = [weights[i] for i in have]
        best: tuple[float, float, Any] = (float("inf"), 1.0, None)  # log-loss, C, out-of-fold probabilities
        for strength in C_GRID:
            held_out = cross_val_predict(
                LogisticRegression(C=strength, max_iter=3000),
                x,
                part_y,
                groups=part_groups,
                cv=folds,
                method="predict_proba",
                params={"sample_weight": part_weights},
            )
            loss = log_loss(part_y, held_out, sample_weight=part_weights, labels=sorted(set(part_y)))
            if loss < best[0] - 1e-9:
                best = (loss, strength, held_out)
        print(f"embedding reader {part}: C {best[1]}, out-of-fold log-loss {best[0]:.3f}")
        fitted = LogisticRegression(C=best[1], max_iter=3000).fit(x, part_y, sample_weight=part_weights)
        readers[part] = EmbeddingReader(list(fitted.classes_), fitted.coef_.tolist(), fitted.intercept_.tolist())
        strengths[part] = best[1]
        read.append(part)
        for i, probabilities in zip(have, best[2], strict=True):
            readings[i][part] = dict(zip(fitted.classes_, map(float, probabilities), strict=True))
    return readers, readings, tuple(p for p in EMBEDDING_PARTS if p in read)


def coarse(kind: str) -> str:
    """A kind in the coarse inventory news evaluations use: person, organization, place, other (product, work and
    event are "other"); junk stays junk."""
    return kind if kind in ("person", "organization", "place", "junk") else "other"


def score(
    found: list[tuple[str, str, KindEvidence, Any]], labels: dict[str, str], model: KindModel | None = None
) -> dict[str, Any]:
    """Per corpus entity (the most confident document's decision): kinds correct (in the full inventory, and in
    the coarse one: `coarse`) and junk share among the kept, and the share of the labelled real entities (not
    junk) that the graph keeps at all (dropping an entity is not free: the labels were written from earlier dumps,
    so a real entity no longer kept shows here)."""
    kept: dict[str, tuple[float, str]] = {}
    for _, key, evidence, mention in found:
        if model is not None:
            decision = model.decide(evidence)
            kind, confidence = decision.kind, decision.confidence
        else:
            kind, confidence = mention.kind, mention.confidence
        if key not in kept or confidence > kept[key][0]:
            kept[key] = (confidence, kind)
    labelled = {key: kind for key, (_, kind) in kept.items() if key in labels}
    confusion = Counter((labels[key], kind) for key, kind in labelled.items() if labels[key] != kind)
    n = len(labelled) or 1
    real = [key for key, kind in labels.items() if kind != "junk"]
    kept_real = {key: kind for key, kind in labelled.items() if labels[key] != "junk"}
    return {
        "entities": len(kept),
        "labelled": len(labelled),
        "kinds_correct": round(sum(labels[k] == kind for k, kind in labelled.items()) / n, 3),
        "kinds_correct_4": round(sum(coarse(labels[k]) == coarse(kind) for k, kind in labelled.items()) / n, 3),
        "junk": round(sum(labels[k] == "junk" for k in labelled) / n, 3),
        "real_kept": round(sum(key in kept for key in real) / (len(real) or 1), 3),
        # Kept real entities given a kind that is neither theirs nor "other": the confident wrong kinds the graph must
        # not show (full inventory, and coarse, where a product shown as "other" is no wrong kind).
        "wrong_kind": round(
            sum(kind not in (labels[k], "other") for k, kind in kept_real.items()) / (len(kept_real) or 1), 3
        ),
        "wrong_kind_4": round(
            sum(coarse(kind) not in (coarse(labels[k]), "other") for k, kind in kept_real.items())
            / (len(kept_real) or 1),
            3,
        ),
        "wrong": [f"{gold}->{kind} x{count}" for (gold, kind), count in confusion.most_common(12)],
        "unlabelled": sorted(set(kept) - set(labels))[:40],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipelines.evaluation.entity_kinds")
    parser.add_argument("action", choices=("fit", "equated", "competing", "check", "dump"))
    parser.add_argument("--corpus", action="append", help="'demo' or a corpus JSONL (repeat with --labels)")
    parser.add_argument("--labels", type=Path, action="append", help="labelled keys JSONL, one per --corpus")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_MODEL_PATH, help="where `fit`, `equated` and `competing` write the model"
    )
    parser.add_argument(
        "--model",
        type=Path,
        help="the kind model `check` and `dump` use, and `equated` measures for (default: the shipped one)",
    )
    parser.add_argument(
        "--embeddings",
        default=",".join(EMBEDDING_PARTS),
        help="the embeddings `fit` reads: name, sentences, list (the default: all three; list needs name) or none",
    )
    parser.add_argument("--ids", help="keep the documents whose id matches this regular expression (every corpus)")
    parser.add_argument("--sample", type=int, help="a fixed-seed sample of this many documents (every corpus)")
    parser.add_argument(
        "--corpus-names",
        action="store_true",
        help="extract each document knowing the names of the whole corpus, as the graph does after ingestion",
    )
    args = parser.parse_args(argv)
    if args.sample is not None and args.sample < 1:
        parser.error("--sample must be 1 or more")
    parts = tuple(part.strip() for part in args.embeddings.split(",") if part.strip() not in ("", "none"))
    if set(parts) - set(EMBEDDING_PARTS):
        parser.error(f"--embeddings takes {', '.join(EMBEDDING_PARTS)} or none, not {args.embeddings}")
    if any(READ_BY.get(part, part) not in parts for part in parts):
        parser.error("--embeddings list needs name: the names an entity is listed with are read by the name's reader")
    args.embeddings = parts
    try:
        return _run(args)
    except (EvaluationInputError, ValueError, re.error, OSError, DatabaseUnavailable) as exc:
        parser.error(first_line(exc))


def _run(args: argparse.Namespace) -> int:
    corpora = args.corpus or ["demo"]
    chosen = KindModel.load(args.model) if args.model else None
    if args.action == "dump":
        found = samples(chosen_documents(corpora[0], args.ids, args.sample), chosen, corpus_names=args.corpus_names)
        for _, key, _, mention in sorted(found, key=lambda item: item[1]):
            print(
                json.dumps(
                    {
                        "key": key,
                        "name": mention.name,
                        "kind": mention.kind,
                        "p": mention.confidence,
                        "evidence": mention.evidence,
                    },
                    ensure_ascii=False,
                )
            )
        return 0
    if not args.labels or len(args.labels) != len(corpora):
        raise EvaluationInputError("give one --labels file per --corpus")
    model = KindModel.neutral() if args.action in ("fit", "equated", "competing") else chosen
    sets = [
        (samples(chosen_documents(corpus, args.ids, args.sample), model, args.corpus_names), load_labels(labels))
        for corpus, labels in zip(corpora, args.labels, strict=True)
    ]
    if args.action == "fit":
        found = [sample for part, _ in sets for sample in part]
        labels = {key: kind for _, part in sets for key, kind in part.items()}
        source = {document_id: i for i, (part, _) in enumerate(sets) for document_id, _, _, _ in part}
        fitted = fit(found, labels, source, args.embeddings)
        written = to_json(fitted)
        # What it was fitted on (the corpus file with its selection, and the labels file): the record that no check
        # set is among them.
        written["fitted_on"] = [
            {"corpus": _corpus_name(corpus, args.ids, args.sample), "labels": labels.name}
            for corpus, labels in zip(corpora, args.labels, strict=True)
        ]
        args.out.write_text(json.dumps(written, indent=1) + "\n", encoding="utf-8")
        print(
            f"fitted on {sum(labels.get(k) in KINDS for _, k, _, _ in found)} samples, "
            f"{len(FEATURES) + len(fitted.context)} features; threshold {fitted.threshold}"
        )
        for (part, part_labels), corpus in zip(sets, corpora, strict=True):
            print(corpus, json.dumps(score(part, part_labels, fitted), ensure_ascii=False))
        return 0
    if args.action in ("equated", "competing"):
        # The numbers of a model that its weights do not give: measured on tune corpora, written into the model
        # (its weights kept as they were fitted).
        labels = {key: kind for _, part in sets for key, kind in part.items()}
        labelled = [(ev, labels[key]) for part, _ in sets for _, key, ev, _ in part if labels.get(key) in KINDS]
        written = json.loads((args.model or DEFAULT_MODEL_PATH).read_text(encoding="utf-8"))
        written[args.action] = _precision(_outcomes(args.action, labelled))
        written[f"{args.action}_fitted_on"] = [
            {"corpus": _corpus_name(corpus, args.ids, args.sample), "labels": labels.name}
            for corpus, labels in zip(corpora, args.labels, strict=True)
        ]
        KindModel.load_json(written)  # still a model this version reads
        args.out.write_text(json.dumps(written, indent=1) + "\n", encoding="utf-8")
        print(f"{measured_line(args.action, labelled)} ({args.out})")
        return 0
    for (part, part_labels), corpus in zip(sets, corpora, strict=True):
        print(corpus, json.dumps(score(part, part_labels), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
