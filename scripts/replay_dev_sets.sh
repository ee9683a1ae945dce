#!/usr/bin/env bash
# The development sets, run into one folder for `research eval compare BEFORE AFTER` (docs/architecture.md,
# "Checking a refactor"): the demo questions on the demo corpus, a SQuAD sample, HotpotQA and MuSiQue dev40 and the
# Apple timelines, each on a fresh, empty data folder, with the knowledge base and the graph as sources (no hosted
# service is asked, so two runs of the same code answer the same).
#
# Usage: scripts/replay_dev_sets.sh OUT [SETS]
#   OUT   the run folder (created); SETS: the public sets' folder (default: ../shared/data)
#   RESEARCH: the command to run (default: research), e.g. RESEARCH="python -m pipelines.cli"
#   ONLY: a space-separated subset of "demo squad hotpotqa musique apple" (default: all)
set -euo pipefail

out=${1:?usage: scripts/replay_dev_sets.sh OUT [SETS]}
sets=${2:-../shared/data}
read -r -a research <<< "${RESEARCH:-research}"
only=" ${ONLY:-demo squad hotpotqa musique apple} "
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
    jq -c 'select(.id | test("^squad-1[23]-"))' "$sets/squad_dev_a/corpus.jsonl" > "$scratch/squad-corpus.jsonl"
    jq -c 'select(.gold_doc_ids[0] | test("^squad-1[23]-"))' "$sets/squad_dev_a/questions.jsonl" \
        > "$scratch/squad-questions.jsonl"
    timed "${research[@]}" eval "$scratch/squad-questions.jsonl" --corpus "$scratch/squad-corpus.jsonl" \
        --sample "$sample" --variants research:kb --no-progress --out "$out/squad" > /dev/null
fi

for set in hotpotqa musique; do
    if [[ $only == *" $set "* ]]; then
        # The gold paragraphs of all 40 questions as the corpus (each question's are distractors for the others),
        # so ingestion and the graph take a minute or two rather than the whole corpus's quarter of an hour.
        fresh "$set"
        jq -c --slurpfile q "$sets/${set}_dev40/questions.jsonl" \
            '([$q[].gold_doc_ids[]] | unique) as $gold | select(.id as $id | $gold | any(.[]; . == $id))' \
            "$sets/${set}_dev40/corpus.jsonl" > "$scratch/$set-corpus.jsonl"
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
