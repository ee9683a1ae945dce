#!/usr/bin/env bash
# The development sets, run into one folder for `research eval compare BEFORE AFTER` (docs/architecture.md,
# "Checking a refactor"): the demo questions on the demo corpus, a SQuAD sample, HotpotQA and MuSiQue dev40 and the
# Apple timelines, each on a fresh, empty data folder, with the knowledge base and the graph as sources (no hosted
# service is asked, so two runs of the same code answer the same).
#
# Usage: scripts/replay_dev_sets.sh OUT [SETS]
#   OUT   the run folder (created); SETS: the public sets' folder (default: ../shared/data, from the current folder;
#   when it does not exist the script says so and exits 2, unless only the demo runs)
#   RESEARCH: the command to run (default: .venv/bin/research, which `make install` makes), e.g.
#   RESEARCH="python -m pipelines.cli"; PYTHON: the Python that picks the sets' lines (default: .venv/bin/python)
#   ONLY: a space-separated subset of "demo squad hotpotqa musique apple" (default: all)
set -euo pipefail

out=${1:?usage: scripts/replay_dev_sets.sh OUT [SETS]}
sets=${2:-../shared/data}
read -r -a research <<< "${RESEARCH:-.venv/bin/research}"
python=${PYTHON:-.venv/bin/python}
[[ -x ${research[0]} ]] || command -v "${research[0]}" > /dev/null \
    || { echo "replay_dev_sets: ${research[0]} not found; run make install, or set RESEARCH" >&2; exit 2; }

pick() {  # the JSON lines of a set's file that a part of the replay reads (standard library only)
    # pick prefix FILE FIELD PREFIX...: the lines whose FIELD (or its first item) starts with one of the PREFIXes
    # pick gold CORPUS QUESTIONS: the corpus lines that are a gold document of some question
    "$python" - "$@" <<'PICK'
import json, sys

mode, path = sys.argv[1], sys.argv[2]
if mode == "gold":
    with open(sys.argv[3], encoding="utf-8") as questions:
        gold = {doc for line in questions if line.strip() for doc in json.loads(line)["gold_doc_ids"]}
with open(path, encoding="utf-8") as lines:
    for line in filter(str.strip, lines):
        record = json.loads(line)
        if mode == "gold":
            keep = record["id"] in gold
        else:
            value = record[sys.argv[3]]
            keep = str(value[0] if isinstance(value, list) else value).startswith(tuple(sys.argv[4:]))
        if keep:
            print(line.rstrip("\n"))
PICK
}
only=" ${ONLY:-demo squad hotpotqa musique apple} "
# Every set but the demo is read from SETS: say so before anything runs when it is not there (the default is relative
# to the current folder, so running from elsewhere misses it).
if [[ $only =~ \ (squad|hotpotqa|musique|apple)\  && ! -d $sets ]]; then
    [[ $sets == /* ]] && where=$sets || where="$sets (from $PWD)"
    echo "replay_dev_sets: the public sets' folder $where does not exist; run from the repository root, give the" \
        "folder as SETS (the second argument), or choose ONLY=demo" >&2
    exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Questions per set: small enough for minutes on a laptop, the same every run (a fixed seed).
sample=${SAMPLE:-20}

fresh() {  # a new, empty data folder for the next set: nothing ingested before changes its answers
    export RESEARCH_DATA_DIR="$scratch/$1"
    mkdir -p "$RESEARCH_DATA_DIR"
}

timed() {
    local started=$SECONDS
    "$@"
    echo "  ($((SECONDS - started)) s)" >&2
}

if [[ $only == *" demo "* ]]; then
    fresh demo
    timed "${research[@]}" ingest --demo > "$out/demo-ingest.txt"
    timed "${research[@]}" eval tests/data/demo_questions.jsonl --variants research:kb+graph --no-progress \
        --out "$out/demo" > /dev/null
fi

if [[ $only == *" squad "* ]]; then
    # Two articles of the check half (their paragraphs as the corpus), questions sampled from them.
    fresh squad
    pick prefix "$sets/squad_dev_a/corpus.jsonl" id squad-12- squad-13- > "$scratch/squad-corpus.jsonl"
    pick prefix "$sets/squad_dev_a/questions.jsonl" gold_doc_ids squad-12- squad-13- > "$scratch/squad-questions.jsonl"
    timed "${research[@]}" eval "$scratch/squad-questions.jsonl" --corpus "$scratch/squad-corpus.jsonl" \
        --sample "$sample" --variants research:kb --no-progress --out "$out/squad" > /dev/null
fi

for set in hotpotqa musique; do
    if [[ $only == *" $set "* ]]; then
        # The gold paragraphs of all 40 questions as the corpus (each question's are distractors for the others),
        # so ingestion and the graph take a minute or two rather than the whole corpus's quarter of an hour.
        fresh "$set"
        pick gold "$sets/${set}_dev40/corpus.jsonl" "$sets/${set}_dev40/questions.jsonl" > "$scratch/$set-corpus.jsonl"
        timed "${research[@]}" eval "$sets/${set}_dev40/questions.jsonl" --corpus "$scratch/$set-corpus.jsonl" \
            --sample "$sample" --variants research:kb,research:kb+graph --no-progress --out "$out/$set" > /dev/null
    fi
done

if [[ $only == *" apple "* ]]; then
    fresh apple
    timed "${research[@]}" eval timelines --corpus "$sets/semeval2015_timeline_trial/corpus.jsonl" \
        --gold "$sets/semeval2015_timeline_trial/entity_timelines.jsonl" --facts "$out/apple/facts.jsonl" \
        > "$out/apple-scores.txt"
fi
echo "Run written to $out; compare two runs with: research eval compare BEFORE AFTER" >&2
