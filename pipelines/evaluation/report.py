"""The evaluation's outputs: `report.md`, `report.json` and PNG charts, written from a run's summary.

Usage:
```python
write_reports(summary, Path("eval-results/squad"))  # report.md, report.json, retrieval.png, latency.png, sources.png
print(summary_table(summary))
```
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipelines.evaluation.charts import new_chart, save_chart
from pipelines.evaluation.selective import write_risk_coverage_chart

RETRIEVAL_COLUMNS = (
    ("recall_any@1", "R@1"),
    ("recall_any@5", "R@5"),
    ("recall_any@10", "R@10"),
    ("recall_all@5", "R-all@5"),
    ("recall_all@10", "R-all@10"),
    ("mrr@10", "MRR@10"),
    ("ndcg@10", "nDCG@10"),
)
ANSWER_COLUMNS = (
    ("exact_match", "EM"),
    ("token_f1", "F1"),
    ("contains_gold", "contains"),
    ("semantic_similarity", "SAS"),
    ("citation_precision", "cite-P"),
)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def summary_table(summary: dict[str, Any]) -> str:
    """One Markdown table: a row per variant with retrieval, answer and latency numbers."""
    header = [
        "variant",
        "n",
        *(label for _, label in RETRIEVAL_COLUMNS),
        *(label for _, label in ANSWER_COLUMNS),
        "p50 ms",
        "p95 ms",
        "errors",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, variant in summary["variants"].items():
        row = [name, str(variant["questions"])]
        row += [_fmt(variant["retrieval"].get(key)) for key, _ in RETRIEVAL_COLUMNS]
        row += [_fmt(variant["answers"].get(key)) for key, _ in ANSWER_COLUMNS]
        row += [_fmt(variant["latency_ms"]["p50"], 1), _fmt(variant["latency_ms"]["p95"], 1), str(variant["errors"])]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def selective_table(summary: dict[str, Any]) -> str:
    """What the analyst sees of the short answers: per variant (and half, when the set has halves), the share of
    question parts with a headline, the share of shown headlines that are right, the area under the risk-coverage
    curve and the confidence's calibration error."""
    header = ["variant", "half", "parts", "coverage", "precision", "AURC", "ECE"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, variant in summary["variants"].items():
        for half, scores in (variant.get("selective") or {}).items():
            if not scores.get("parts"):
                continue
            row = [name, half, str(scores["parts"])]
            row += [_fmt(scores.get(key)) for key in ("coverage", "precision", "aurc", "ece")]
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) if len(lines) > 2 else ""


def _sources_table(summary: dict[str, Any]) -> str:
    lines = [
        "| variant | source | chunk share | citation share | first gold hit | statuses |",
        "|---|---|---|---|---|---|",
    ]
    for name, variant in summary["variants"].items():
        for source, numbers in variant["sources"].items():
            statuses = ", ".join(
                f"{key.removeprefix('status_')} {value:.0%}"
                for key, value in numbers.items()
                if key.startswith("status_")
            )
            lines.append(
                f"| {name} | {source} | {numbers['chunk_share']:.3f} | {numbers['citation_share']:.3f} | "
                f"{numbers['first_gold_hit']:.3f} | {statuses or '–'} |"
            )
    return "\n".join(lines)


def _haystack_table(summary: dict[str, Any]) -> str:
    keys = ("haystack_recall_single_hit@10", "haystack_recall_multi_hit@10", "haystack_mrr@10", "haystack_ndcg@10")
    lines = ["| variant | recall single-hit@10 | recall multi-hit@10 | MRR@10 | nDCG@10 |", "|---|---|---|---|---|"]
    for name, variant in summary["variants"].items():
        lines.append("| " + " | ".join([name, *(_fmt(variant["retrieval"].get(key)) for key in keys)]) + " |")
    return "\n".join(lines)


def _corpus_failures(summary: dict[str, Any]) -> list[str]:
    """A section naming the corpus documents that could not be ingested, when there are any."""
    failures = summary.get("corpus_failures") or []
    if not failures:
        return []
    rows = "\n".join(f"| `{failure['id']}` | {failure['reason'].replace('|', '/')} |" for failure in failures)
    return [
        f"{len(failures)} corpus documents could not be ingested; their questions were still asked.",
        "| corpus document | why it was not ingested |\n|---|---|\n" + rows,
    ]


def markdown_report(summary: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    sample = f"a sample of {summary['questions']} (seed {summary['seed']})" if summary.get("sample") else "all"
    corpus = f", corpus `{summary['corpus_file']}`" if summary.get("corpus_file") else ""
    return (
        "\n\n".join(
            [
                f"# Evaluation: `{summary['questions_file']}`",
                f"{sample} questions{corpus}; top {summary['top_k']} chunks per question. Retrieval is scored on "
                "distinct documents (R@k: any gold document in the top k; R-all@k: every gold document). EM and F1 are "
                "SQuAD's normalised exact match and token F1; 'contains': the answer contains a gold answer; SAS: "
                "semantic answer similarity with the local model; cite-P: share of citations whose chunk supports "
                "its sentence.",
                "## Results",
                summary_table(summary),
                *_corpus_failures(summary),
                "![retrieval](retrieval.png)\n\n![latency](latency.png)",
                "## What the analyst sees of the short answer",
                "A part's short answer leads the answer (a headline) only when its confidence reaches the threshold. "
                "Coverage: share of question parts with a headline; precision: share of shown headlines that are "
                "right (token F1 >= 0.5 with a gold answer); AURC: area under the risk-coverage curve (lower is "
                "better); ECE: expected calibration error of the confidence (10 bins). EM and F1 above score every "
                "part's short answer, shown or not.",
                selective_table(summary) or "No question part had a gold answer.",
                "![risk-coverage](risk_coverage.png)",
                "## Each source's contribution",
                _sources_table(summary),
                "![sources](sources.png)",
                "## Cross-check with Haystack's evaluators",
                _haystack_table(summary),
            ]
        )
        + "\n"
    )


def write_charts(summary: dict[str, Any], out: Path) -> list[Path]:
    """Bar charts of retrieval quality, latency and source shares; the files written."""
    import numpy as np

    names = list(summary["variants"])
    written: list[Path] = []

    figure, axis = new_chart(figsize=(max(6, 1.6 * len(names) + 3), 4))
    keys = [
        ("recall_any@1", "R@1"),
        ("recall_any@5", "R@5"),
        ("recall_any@10", "R@10"),
        ("mrr@10", "MRR@10"),
        ("ndcg@10", "nDCG@10"),
    ]
    width = 0.8 / len(keys)
    positions = np.arange(len(names))
    for offset, (key, label) in enumerate(keys):
        values = [summary["variants"][name]["retrieval"].get(key) or 0.0 for name in names]
        axis.bar(positions + offset * width - 0.4 + width / 2, values, width, label=label)
    axis.set_xticks(positions, names)
    axis.set_ylim(0, 1)
    axis.set_ylabel("score")
    axis.set_title("Retrieval quality per variant")
    axis.legend(loc="lower right", fontsize="small")
    written.append(save_chart(figure, out / "retrieval.png"))

    figure, axis = new_chart(figsize=(max(6, 1.4 * len(names) + 3), 4))
    p50 = [summary["variants"][name]["latency_ms"]["p50"] for name in names]
    p95 = [summary["variants"][name]["latency_ms"]["p95"] for name in names]
    axis.bar(positions - 0.2, p50, 0.4, label="p50")
    axis.bar(positions + 0.2, p95, 0.4, label="p95")
    axis.set_xticks(positions, names)
    axis.set_ylabel("milliseconds per question")
    axis.set_title("Latency per variant")
    axis.legend()
    written.append(save_chart(figure, out / "latency.png"))

    sources = sorted({source for name in names for source in summary["variants"][name]["sources"]})
    figure, axis = new_chart(figsize=(max(6, 1.4 * len(names) + 3), 4))
    bottom = np.zeros(len(names))
    for source in sources:
        values = np.array(
            [summary["variants"][name]["sources"].get(source, {}).get("chunk_share", 0.0) for name in names]
        )
        axis.bar(positions, values, 0.6, bottom=bottom, label=source)
        bottom += values
    axis.set_xticks(positions, names)
    axis.set_ylim(0, 1)
    axis.set_ylabel("share of returned chunks")
    axis.set_title("Where each variant's chunks came from")
    if sources:
        axis.legend()
    written.append(save_chart(figure, out / "sources.png"))

    curves = {
        f"{name} ({half})" if half != "all" else name: scores
        for name in names
        for half, scores in (summary["variants"][name].get("selective") or {}).items()
    }
    written.append(write_risk_coverage_chart(curves, out / "risk_coverage.png"))
    return written


def write_reports(summary: dict[str, Any], out: Path) -> None:
    """`report.json`, `report.md` and the charts in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(summary, indent=2, sort_keys=False), encoding="utf-8")
    (out / "report.md").write_text(markdown_report(summary), encoding="utf-8")
    write_charts(summary, out)
