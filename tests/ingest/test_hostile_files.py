"""Bad files in one batch with good ones: every good file is ingested, every bad one gets one sentence in the
report, nothing else is lost. The real embedded PostgreSQL, the real model, files written by the test itself."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from components.ingestion.formats.common import ConversionError
from components.ingestion.limits import IngestLimits
from ingest.ingestor import Ingestor, collect_files, path_text
from pipelines.cli.ingest import print_report
from tests.ingest.files import write_docx, write_pdf

LIMITS = IngestLimits(max_bytes=400_000, max_chars=20_000, max_chunks=6)
STORY = (
    "The Harbour Board approved the new ferry terminal in March 2021. Construction began a year later and the "
    "terminal opened to passengers in the autumn of 2023, two months behind the plan."
)
MARKDOWN = (
    "# Ferry notes\n\nThe terminal has ![a tracking pixel](http://127.0.0.1:9/pixel.png) and a "
    "[link to the board](http://127.0.0.1:9/board). It opened in 2023.\n"
)


def _docx_with_body(path: Path, paragraphs: int, text: str) -> Path:
    """A .docx whose document.xml holds `paragraphs` copies of a paragraph: a few KB packed, much more unpacked."""
    write_docx(path)
    with zipfile.ZipFile(path) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    xml = parts["word/document.xml"].decode("utf-8")
    body_start = xml.index("<w:body>") + len("<w:body>")
    paragraph = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"
    parts["word/document.xml"] = (xml[:body_start] + paragraph * paragraphs + xml[body_start:]).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)
    path.write_bytes(buffer.getvalue())
    return path


def _unreadable(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `folder` unreadable: by its mode, or (as root, whom modes do not stop) by refusing to list it."""
    folder.chmod(0)
    if os.geteuid() != 0:
        return
    real_scandir = os.scandir

    def scandir(path="."):  # noqa: ANN001, ANN202
        # os.scandir also takes an open folder's descriptor (shutil.rmtree passes one): never this folder's path.
        if not isinstance(path, int) and Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.mark.integration
@pytest.mark.slow
class TestHostileBatch:
    def test_good_files_ingested_bad_files_one_sentence_each(self, store, work_dir, monkeypatch, capsys) -> None:
        work_dir = work_dir.resolve()
        good_dir = work_dir / "good"
        good_dir.mkdir()
        good = {
            "story.txt": lambda p: p.write_text(STORY),
            "notes.md": lambda p: p.write_text(MARKDOWN),
            "page.html": lambda p: p.write_text(f"<html><head><title>Ferry</title></head><body><p>{STORY}</p></body>"),
            "report.pdf": lambda p: write_pdf(p, [[STORY[:90], STORY[90:]]]),
            "memo.docx": lambda p: write_docx(p),
            os.fsdecode(b"caf\xe9 menu.txt"): lambda p: p.write_text(STORY),  # a name that is not UTF-8
            "\x1b[31mred\x1b[0m.txt": lambda p: p.write_text(STORY),  # ANSI escapes in a name, fine content
        }
        for name, write in good.items():
            write(good_dir / name)

        bad_dir = work_dir / "bad"
        bad_dir.mkdir()
        huge = bad_dir / "huge.txt"
        with huge.open("wb") as handle:
            handle.truncate(300_000_000)  # sparse: reading it would take 300 MB; the size alone refuses it
        _docx_with_body(bad_dir / "bomb.docx", 40_000, "x" * 40)  # a few KB packed, about 3 MB unpacked
        _docx_with_body(bad_dir / "wordy.docx", 400, "Many words in a paragraph. " * 3)  # small, but 32k characters
        (bad_dir / "long.txt").write_text("\n\n".join([STORY] * 40))  # under the characters, over the chunks
        (bad_dir / "\x1b[2Jblank.md").write_text("  \n")
        (bad_dir / "dangling.txt").symlink_to(bad_dir / "gone.txt")
        (bad_dir / "loop").symlink_to(bad_dir / "loop")
        (bad_dir / "sub").mkdir()
        (bad_dir / "sub" / "back").symlink_to(bad_dir)
        locked = bad_dir / "locked"
        locked.mkdir()
        (locked / "secret.txt").write_text(STORY)
        _unreadable(locked, monkeypatch)

        ingestor = Ingestor(store=store, hooks=[], limits=LIMITS)
        before = store.count_documents()
        report = ingestor.ingest_paths([good_dir, bad_dir])
        locked.chmod(0o755)

        assert sorted(report.added) == sorted(path_text(good_dir / name) for name in good)
        assert store.count_documents() == before + len(good)
        assert report.chunks_written == sum(
            len(chunks) for _, chunks in map(store.get_document, report.document_ids.values())
        )
        reasons = dict(report.failed)
        expected = {
            "huge.txt": "It is 300.0 MB, over the 0.4 MB limit for one file (INGEST_MAX_FILE_BYTES).",
            "bomb.docx": "over the 1.6 MB a packed file may unpack to (4 times INGEST_MAX_FILE_BYTES).",
            "wordy.docx": "It holds more than 20,000 characters of text, the limit for one file (INGEST_MAX_CHARS).",
            "long.txt": "over the limit of 6 for one file (INGEST_MAX_CHUNKS).",
            "\x1b[2Jblank.md": "The file is empty.",
            "dangling.txt": "which does not exist.",
            "loop": "It is a symbolic link loop",
            "sub/back": "It is a symbolic link loop",
            "locked": "The folder cannot be read (Permission denied).",
        }
        assert set(reasons) == {path_text(bad_dir / name) for name in expected}
        for name, words in expected.items():
            reason = reasons[path_text(bad_dir / name)]
            assert words in reason, (name, reason)
            assert reason.count(". ") == 0 and reason.endswith(".") and "\n" not in reason  # one sentence
        assert report.skipped == [] and report.replaced == []

        print_report(report)
        printed = capsys.readouterr().out
        assert "\x1b" not in printed and "\\x1b[2Jblank.md" in printed
        assert printed.count("  failed: ") == len(expected)

    def test_a_name_that_is_not_utf8_is_stored_readably_and_found_again(self, store, work_dir) -> None:
        work_dir = work_dir.resolve()
        path = work_dir / os.fsdecode(b"r\xe9sum\xe9.txt")
        path.write_text(STORY)
        ingestor = Ingestor(store=store, hooks=[])
        first = ingestor.ingest_paths([path])
        assert first.added == [str(work_dir / "r\\xe9sum\\xe9.txt")]
        document, _ = store.get_document(first.document_ids[first.added[0]])
        assert document.metadata["file_name"] == "r\\xe9sum\\xe9.txt"
        assert ingestor.ingest_paths([work_dir]).skipped == first.added


class TestLimitsStopEarly:
    def test_extraction_stops_at_the_character_limit(self, work_dir, monkeypatch) -> None:
        from components.ingestion.formats import convert_bytes
        from components.ingestion.structure import TextBuilder

        added: list[int] = []
        original = TextBuilder._add

        def counting(self, text, page_number, is_heading):  # noqa: ANN001, ANN202
            added.append(len(text))
            return original(self, text, page_number, is_heading)

        monkeypatch.setattr(TextBuilder, "_add", counting)
        data = _docx_with_body(work_dir / "wordy.docx", 5_000, "A paragraph of forty characters of text..").read_bytes()
        with pytest.raises(ConversionError, match="INGEST_MAX_CHARS"):
            convert_bytes(data, "wordy.docx", limits=IngestLimits(max_bytes=10_000_000, max_chars=4_000))
        assert len(added) < 110  # about 4,000 characters' worth of the 5,000 paragraphs, not all of them

    def test_size_is_refused_before_reading(self, work_dir, monkeypatch) -> None:
        from ingest.ingestor import IngestItem

        path = work_dir / "big.txt"
        path.write_text("word " * 1000)
        monkeypatch.setattr(IngestItem, "read", lambda self: pytest.fail("a file over the limit must not be read"))
        ingestor = Ingestor.__new__(Ingestor)
        ingestor.limits = IngestLimits(max_bytes=100)
        with pytest.raises(ConversionError, match="INGEST_MAX_FILE_BYTES"):
            ingestor.prepare(IngestItem(source=str(path), filename=path.name, path=path), force=False)

    def test_limits_refuse_nonsense(self) -> None:
        with pytest.raises(ValueError, match="max_chars"):
            IngestLimits(max_chars=0)
        assert IngestLimits.from_settings().max_bytes >= 1_000_000

    def test_collect_reports_links_and_folders(self, work_dir) -> None:
        work_dir = work_dir.resolve()
        (work_dir / "a.txt").write_text(STORY)
        (work_dir / "dangling.md").symlink_to(work_dir / "missing.md")
        (work_dir / "self").symlink_to(work_dir / "self")
        outside = work_dir.parent / f"{work_dir.name}-outside"
        outside.mkdir()
        (work_dir / "elsewhere").symlink_to(outside)
        items, problems = collect_files([work_dir, work_dir / "nothing-here.txt"])
        assert [item.filename for item in items] == ["a.txt"]
        reasons = dict(problems)
        assert "does not exist" in reasons[str(work_dir / "dangling.md")]
        assert "symbolic link loop" in reasons[str(work_dir / "self")]
        assert "links to folders are not followed" in reasons[str(work_dir / "elsewhere")]
        assert reasons[str(work_dir / "nothing-here.txt")] == "No such file or folder."
        outside.rmdir()
