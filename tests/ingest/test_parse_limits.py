"""Parsing is bounded in time and memory, not only in bytes and characters: a page of millions of tags and a small
Word file of millions of empty paragraphs are refused fast, in bounded memory, with a sentence naming the limit.

The hostile files are built here; the memory bound is measured in a fresh process (its peak RSS), so what the test
process already holds does not count.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from components.ingestion.formats import convert_bytes
from components.ingestion.formats.common import ConversionError
from components.ingestion.limits import IngestLimits
from tests.ingest.files import write_docx

REPO_ROOT = Path(__file__).resolve().parents[2]


def many_tags(count: int) -> bytes:
    """An HTML page of `count` tiny elements (3 million: 24 MB, under the byte limit)."""
    return b"<html><body>" + b"<b>x</b>" * count + b"</body></html>"


def empty_paragraphs_docx(folder: Path, count: int) -> bytes:
    """A valid .docx whose body holds `count` empty paragraphs: a small file that unpacks to 6 bytes a paragraph."""
    path = write_docx(folder / "template.docx")
    with zipfile.ZipFile(path) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    xml = parts["word/document.xml"].decode("utf-8")
    body = xml.index("<w:body>") + len("<w:body>")
    parts["word/document.xml"] = (xml[:body] + "<w:p/>" * count + xml[body:]).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)
    return buffer.getvalue()


def peak_rss_of_conversions(files: list[tuple[Path, str]]) -> list[dict]:
    """Convert each file under the default limits, one after another, in one fresh process: each outcome, its
    seconds, and the peak RSS in MB before and after it (the process's imports are loaded before the first)."""
    script = f"""
import json, resource, time
from pathlib import Path
from components.ingestion.formats import convert_bytes
from components.ingestion.formats.common import ConversionError
from components.ingestion.limits import IngestLimits
import bs4, docx, lxml.etree  # loaded before the baseline
for path, filename in {[(str(path), name) for path, name in files]!r}:
    data = Path(path).read_bytes()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.monotonic()
    try:
        convert_bytes(data, filename, limits=IngestLimits())
        outcome = "converted"
    except ConversionError as exc:
        outcome = str(exc)
    del data
    print(json.dumps({{"outcome": outcome, "seconds": time.monotonic() - started, "before_mb": before,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
    env = {"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.strip().splitlines()[-len(files) :]]


def test_hostile_files_are_refused_fast_in_bounded_memory_naming_the_limit(tmp_path):
    page = tmp_path / "tags.html"
    page.write_bytes(many_tags(3_000_000))  # 24 MB: under the byte limit; BeautifulSoup took 3.7 GB and 238 s
    assert page.stat().st_size < IngestLimits().max_bytes
    data = empty_paragraphs_docx(tmp_path, 4_000_000)  # 70 KB packed, 24 MB unpacked: python-docx took GBs
    assert len(data) < 200_000
    word = tmp_path / "empty.docx"
    word.write_bytes(data)
    html_result, docx_result = peak_rss_of_conversions([(page, "tags.html"), (word, "empty.docx")])
    assert "more than 250,000 HTML elements" in html_result["outcome"], html_result
    assert "more than 250,000 Word elements" in docx_result["outcome"], docx_result
    for result in (html_result, docx_result):
        assert "INGEST_MAX_ELEMENTS" in result["outcome"]
        assert result["seconds"] < 10, result
        assert result["peak_mb"] - result["before_mb"] < 200, result  # the file's bytes and little else


def test_files_under_the_element_limit_convert(tmp_path):
    converted = convert_bytes(many_tags(1_000), "small.html", limits=IngestLimits())
    assert "x" in converted.text
    converted = convert_bytes(empty_paragraphs_docx(tmp_path, 1_000), "few.docx", limits=IngestLimits())
    assert "Milvus 2.0 reached general availability" in converted.text


def test_the_parse_deadline_names_its_limit(tmp_path):
    limits = IngestLimits(max_elements=10_000_000, max_parse_s=0.05)
    page = b"<html><body>" + b"<p>a paragraph</p>" * 400_000 + b"</body></html>"
    started = time.monotonic()
    with pytest.raises(ConversionError, match=r"took more than 0.05 s.*INGEST_MAX_PARSE_S"):
        convert_bytes(page, "slow.html", limits=limits)
    assert time.monotonic() - started < 10
