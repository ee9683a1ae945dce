"""Converters: text with structure (pages, sections), title, date and URL, cleaned, from files the tests write."""

from __future__ import annotations

import datetime as dt

import pytest

from components.ingestion.formats import SUPPORTED_SUFFIXES, ConversionError, convert_bytes, doc_type_for
from components.ingestion.structure import clean_text, remove_repeated_page_lines
from tests.ingest.files import write_docx, write_pdf


def blocks(document):
    return [(document.text[b.start : b.end], b.page_number, b.section_title) for b in document.blocks]


class TestMarkdown:
    def test_front_matter_headings_and_inline_syntax(self) -> None:
        data = (
            b"---\ntitle: Qdrant history\ndate: 2024-01-23\nsource_url: https://qdrant.tech/\ntags: [rust]\n---\n"
            b"Intro with **bold** and a [link](https://x.org) and `code`.\n\n"
            b"## Funding\n\n- Seed in April 2023.\n- Series A in\n  January 2024.\n\n"
            b"Setext heading\n--------------\n\n> Quoted ![logo](l.png) text\n\n```\nraw = 1\n```\n"
        )
        document = convert_bytes(data, "notes.md")
        assert (document.title, document.date, document.url) == (
            "Qdrant history",
            dt.date(2024, 1, 23),
            "https://qdrant.tech/",
        )
        assert document.metadata == {"tags": ["rust"]} and document.doc_type == "md"
        assert blocks(document) == [
            ("Intro with bold and a link and code.", None, None),
            ("Funding", None, "Funding"),
            ("Seed in April 2023.", None, "Funding"),
            ("Series A in January 2024.", None, "Funding"),
            ("Setext heading", None, "Setext heading"),
            ("Quoted logo text", None, "Setext heading"),
            ("raw = 1", None, "Setext heading"),
        ]

    def test_title_falls_back_to_first_heading_then_file_name(self) -> None:
        assert convert_bytes(b"# The title\n\nBody.", "x.md").title == "The title"
        untitled = convert_bytes(b"Just a body, no date.", "vector-search_notes.md")
        assert (untitled.title, untitled.date, untitled.url) == ("Vector search notes", None, None)

    def test_invalid_front_matter_is_one_sentence(self) -> None:
        with pytest.raises(ConversionError, match="YAML front matter is not valid"):
            convert_bytes(b"---\ntitle: [unclosed\n---\nBody", "bad.md")


class TestHtml:
    def test_main_content_sections_and_page_metadata(self) -> None:
        html = b"""<html><head><title>Page title</title>
        <meta property="article:published_time" content="2019-10-01T09:00:00Z">
        <link rel="canonical" href="https://streamlit.io/blog/launch"><script>var x = 1;</script></head>
        <body><nav>Home | Blog</nav><header>Site banner</header>
        <article><h1>Launch</h1><p>Streamlit was released<br>on October 1, 2019.</p>
        <h2>Funding</h2><div>Seed round <b>led by</b> Gradient Ventures.<!-- a comment --></div>
        <ul><li>First item</li><li>Second item</li></ul></article>
        <footer>Copyright</footer></body></html>"""
        document = convert_bytes(html, "page.html")
        assert (document.title, document.date, document.url) == (
            "Page title",
            dt.date(2019, 10, 1),
            "https://streamlit.io/blog/launch",
        )
        assert blocks(document) == [
            ("Launch", None, "Launch"),
            ("Streamlit was released on October 1, 2019.", None, "Launch"),
            ("Funding", None, "Funding"),
            ("Seed round led by Gradient Ventures.", None, "Funding"),
            ("First item", None, "Funding"),
            ("Second item", None, "Funding"),
        ]
        assert "var x" not in document.text and "Copyright" not in document.text and "banner" not in document.text


class TestText:
    def test_title_date_source_lines_and_cleaning(self) -> None:
        raw = (
            "Firecrawl notes\r\n\r\nDate: 15 August 2024\nSource: https://firecrawl.dev\n\n"
            "It  turns\tpages\x07 into\ntext.\n\n\n\nEnd."
        )
        document = convert_bytes(raw.encode("cp1252"), "notes.txt")
        assert (document.title, document.date, document.url) == (
            "Firecrawl notes",
            dt.date(2024, 8, 15),
            "https://firecrawl.dev",
        )
        assert document.text == "Firecrawl notes\n\nIt turns pages into text.\n\nEnd."

    def test_a_headline_and_a_dateline_opening_the_text_are_paragraphs(self) -> None:
        raw = "Talmont unveils airliner\nMarch 3, 2011\nTalmont showed the plane.\nIt flew on Monday.\n"
        document = convert_bytes(raw.encode(), "story.txt")
        assert document.title == "Talmont unveils airliner"
        assert document.text.split("\n\n") == [
            "Talmont unveils airliner",
            "March 3, 2011",
            "Talmont showed the plane. It flew on Monday.",
        ]

    def test_a_headline_in_capitals_opens_the_text_whatever_closes_it(self) -> None:
        # A wire's headline ends on " ." and its dateline names the place before the date.
        raw = "SOCCER - OSTBY HOLD DALBY .\nKESSBY 1996-08-31\nOstby held Dalby to a draw .\nDalby stay second .\n"
        document = convert_bytes(raw.encode(), "story.txt")
        assert document.text.split("\n\n") == [
            "SOCCER - OSTBY HOLD DALBY .",
            "KESSBY 1996-08-31",
            "Ostby held Dalby to a draw . Dalby stay second .",
        ]

    def test_rows_and_results_lines_stay_lines_and_a_wrapped_line_ending_in_a_figure_joins(self) -> None:
        # A line ending in a figure with room for the next line's first word is a row its writer set on a line of
        # its own; a wrapped line is full, so one ending in a figure still joins the next.
        raw = (
            "Ostby Rovers beat Dalby Town on Sunday to stay second in the league .\nResults on Sunday :\n"
            "Ostby Rovers 2 Dalby Town 1\nKessby 0 Varnholm 3\n\nVarnholm 6 5 1 16\nOstby Rovers 6 4 2 14\n"
            "Dalby Town 6 1 5 3\n\n"
            "Ostby Rovers have won four of their six games in 2024\nand lost at home only once this season.\n\n"
            "The club said its average attendance rose to 18,250\nDalby Town said theirs fell in the same season."
        )
        document = convert_bytes(raw.encode(), "results.txt")
        assert document.text.split("\n\n") == [
            "Ostby Rovers beat Dalby Town on Sunday to stay second in the league . Results on Sunday : Ostby Rovers 2 "
            "Dalby Town 1",
            "Kessby 0 Varnholm 3",
            "Varnholm 6 5 1 16",
            "Ostby Rovers 6 4 2 14",
            "Dalby Town 6 1 5 3",
            "Ostby Rovers have won four of their six games in 2024 and lost at home only once this season.",
            "The club said its average attendance rose to 18,250 Dalby Town said theirs fell in the same season.",
        ]

    @pytest.mark.timeout(60)  # a guard: each row's line is read once (about a second here)
    def test_a_long_table_is_cut_into_rows(self) -> None:
        raw = "Ostby Rovers 6 4 2 14\n" * 100_000
        document = convert_bytes(raw.encode(), "table.txt")
        assert document.text.split("\n\n") == ["Ostby Rovers 6 4 2 14"] * 100_000

    @pytest.mark.timeout(60)  # the pattern that tried every split took minutes here
    def test_a_long_text_in_capitals_without_a_line_break_is_read_once(self) -> None:
        # Read by a pattern that tried every split of the line, 300,000 capitals took minutes; read once, a blink.
        raw = "SOCCER " * 50_000
        document = convert_bytes(raw.encode(), "caps.txt")
        assert document.text == raw.strip()

    def test_binary_and_empty_files_are_refused(self) -> None:
        with pytest.raises(ConversionError, match="binary"):
            convert_bytes(b"\x00\x01\x02text", "x.txt")
        with pytest.raises(ConversionError, match="empty"):
            convert_bytes(b" \n\t", "x.txt")
        with pytest.raises(ConversionError, match=r"\.xlsx is not supported"):
            convert_bytes(b"data", "x.xlsx")

    def test_suffixes(self) -> None:
        assert {".txt", ".md", ".html", ".pdf", ".docx"} <= SUPPORTED_SUFFIXES
        assert (doc_type_for("A.MARKDOWN"), doc_type_for("x.htm"), doc_type_for("x.csv")) == ("md", "html", None)


class TestPdf:
    def test_pages_metadata_and_running_headers_removed(self, work_dir) -> None:
        pages = [
            ["ACME Quarterly Report", f"Section {n} text: PostgreSQL {n} was released in autumn.", f"Page {n} of 3"]
            for n in (1, 2, 3)
        ]
        path = write_pdf(work_dir / "r.pdf", pages, title="ACME Report", created=dt.datetime(2020, 5, 17, 10, 0))
        document = convert_bytes(path.read_bytes(), path.name)
        assert (document.title, document.date, document.doc_type) == ("ACME Report", dt.date(2020, 5, 17), "pdf")
        assert document.metadata["pages"] == 3
        assert blocks(document) == [
            (f"Section {n} text: PostgreSQL {n} was released in autumn.", n, None) for n in (1, 2, 3)
        ]

    def test_untitled_pdf_uses_the_file_name(self, work_dir) -> None:
        path = write_pdf(work_dir / "annual_report.pdf", [["One line of text."]])
        document = convert_bytes(path.read_bytes(), path.name)
        assert (document.title, document.date) == ("Annual report", None)

    def test_corrupt_pdf_is_one_sentence(self) -> None:
        with pytest.raises(ConversionError, match="could not be read as a PDF|no text"):
            convert_bytes(b"%PDF-1.7\n garbage without objects", "x.pdf")
        with pytest.raises(ConversionError, match="not a PDF"):
            convert_bytes(b"hello", "x.pdf")


class TestDocx:
    def test_headings_tables_and_core_properties(self, work_dir) -> None:
        path = write_docx(work_dir / "m.docx", title="Milvus notes", created=dt.datetime(2022, 2, 1, 12, 0))
        document = convert_bytes(path.read_bytes(), path.name)
        assert (document.title, document.date, document.doc_type) == ("Milvus notes", dt.date(2022, 2, 1), "docx")
        assert blocks(document) == [
            ("Milvus and Zilliz", None, "Milvus and Zilliz"),
            (
                "Zilliz released Milvus as open source in October 2019. It joined the LF AI Foundation.",
                None,
                "Milvus and Zilliz",
            ),
            ("Milvus 2.0", None, "Milvus 2.0"),
            ("Milvus 2.0 reached general availability in January 2022.", None, "Milvus 2.0"),
            ("Version | Year", None, "Milvus 2.0"),
            ("2.0 | 2022", None, "Milvus 2.0"),
        ]

    def test_template_date_is_not_the_documents_date(self, work_dir) -> None:
        document = convert_bytes(write_docx(work_dir / "plain.docx").read_bytes(), "plain.docx")
        assert (document.title, document.date) == ("Milvus and Zilliz", None)

    def test_corrupt_docx_is_one_sentence(self) -> None:
        with pytest.raises(ConversionError, match=r"could not be read as a Word \(\.docx\) document"):
            convert_bytes(b"PK\x03\x04 not a zip", "x.docx")


class TestCleaning:
    def test_clean_text(self) -> None:
        assert clean_text("a\u00a0 b\x00c\r\n\n\n\n d \u200b") == "a bc\n\nd"

    def test_repeated_page_lines(self) -> None:
        pages = [f"Header Inc.\nBody {n} here.\nMore body {n}.\n{n}" for n in range(1, 5)]
        assert remove_repeated_page_lines(pages) == [f"Body {n} here.\nMore body {n}." for n in range(1, 5)]
        # Two pages are too few to call a line a running header; a bare page number still goes.
        assert remove_repeated_page_lines(["Title\nA.\n1", "Title\nB.\n2"]) == ["Title\nA.", "Title\nB."]
