"""An arXiv API contract server: `GET /api/query` answering with arXiv's Atom 1.0 feed, and `GET /pdf/ID` PDFs.

The query endpoint understands what the `arxiv` library sends: `search_query` (fields `all`, `ti`, `abs`, `au`,
`cat`, `id`, quoted phrases, `AND` / `OR` / `ANDNOT`, parentheses and `submittedDate:[YYYYMMDDHHMM TO
YYYYMMDDHHMM]`), `id_list`, `start`, `max_results`, `sortBy` and `sortOrder`. Entries carry the documented elements:
`id`, `published`, `updated`, `title`, `summary`, `author/name`, `arxiv:doi`, `arxiv:comment`,
`arxiv:journal_ref`, `link` (abs, pdf, doi), `arxiv:primary_category` and `category`; the `opensearch:` header
gives the totals. A malformed id answers HTTP 400 with arXiv's error entry. PDF links point at this server.

The corpus holds the identifiers, titles, authors and dates of real papers; the abstracts are short summaries
written for these tests, not the papers' own abstracts.

Use it as the `arxiv_server` fixture (import it into a conftest) or run `python -m tests.contract_servers.arxiv`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from tests.contract_servers import ContractServer, Reply, contract_fixtures

ATOM = "application/atom+xml; charset=utf-8"
_ID_RE = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})(v\d+)?$")


@dataclass
class Paper:
    """One paper of the fake arXiv."""

    arxiv_id: str  # without version
    version: int
    title: str
    summary: str
    authors: list[str]
    published: str  # ISO timestamp, UTC
    updated: str
    categories: list[str]
    doi: str | None = None
    comment: str | None = None
    journal_ref: str | None = None
    body: list[str] = field(default_factory=list)  # full-text lines for the PDF


def _papers() -> list[Paper]:
    return [
        Paper(
            "2005.11401",
            4,
            "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
            "Summary for tests: a parametric sequence-to-sequence generator is combined with a non-parametric "
            "memory, a dense vector index of Wikipedia passages reached through a neural retriever. The "
            "retrieval-augmented generation models condition each answer on retrieved passages and set new results "
            "on open-domain question answering while producing more specific and factual language.",
            [
                "Patrick Lewis",
                "Ethan Perez",
                "Aleksandra Piktus",
                "Fabio Petroni",
                "Vladimir Karpukhin",
                "Naman Goyal",
                "Heinrich Küttler",
                "Mike Lewis",
                "Wen-tau Yih",
                "Tim Rocktäschel",
                "Sebastian Riedel",
                "Douwe Kiela",
            ],
            "2020-05-22T17:34:01Z",
            "2021-04-12T15:42:32Z",
            ["cs.CL", "cs.LG"],
            comment="Accepted at NeurIPS 2020",
            body=[
                "1 Introduction",
                "Pre-trained language models store factual knowledge in their parameters but cannot easily",
                "expand or revise their memory. We pair a pre-trained generator with a dense passage index.",
                "2 Methods",
                "The retriever returns the top passages for a query; the generator marginalises over them.",
            ],
        ),
        Paper(
            "2004.04906",
            3,
            "Dense Passage Retrieval for Open-Domain Question Answering",
            "Summary for tests: passages and questions are embedded by two BERT encoders trained on question-passage "
            "pairs, and retrieval is a maximum inner product search. The dense retriever outperforms a strong BM25 "
            "baseline on top-20 passage retrieval accuracy across open-domain question answering benchmarks.",
            [
                "Vladimir Karpukhin",
                "Barlas Oğuz",
                "Sewon Min",
                "Patrick Lewis",
                "Ledell Wu",
                "Sergey Edunov",
                "Danqi Chen",
                "Wen-tau Yih",
            ],
            "2020-04-10T04:05:12Z",
            "2020-09-30T20:51:37Z",
            ["cs.CL"],
            doi="10.18653/v1/2020.emnlp-main.550",
            journal_ref="EMNLP 2020",
        ),
        Paper(
            "1706.03762",
            7,
            "Attention Is All You Need",
            "Summary for tests: the Transformer is a sequence transduction architecture built only from attention "
            "mechanisms, without recurrence or convolution. It trains faster in parallel and reaches better "
            "translation quality than recurrent and convolutional models.",
            [
                "Ashish Vaswani",
                "Noam Shazeer",
                "Niki Parmar",
                "Jakob Uszkoreit",
                "Llion Jones",
                "Aidan N. Gomez",
                "Lukasz Kaiser",
                "Illia Polosukhin",
            ],
            "2017-06-12T17:57:34Z",
            "2023-08-02T00:41:18Z",
            ["cs.CL", "cs.LG"],
            comment="15 pages, 5 figures",
        ),
        Paper(
            "1603.09320",
            4,
            "Efficient and robust approximate nearest neighbor search using Hierarchical Navigable Small World graphs",
            "Summary for tests: a graph-based index for approximate nearest neighbour search that builds a "
            "hierarchy of proximity graphs, searching from the sparse top layer down. The HNSW index gives "
            "logarithmic complexity scaling and strong recall at high speed on vector similarity benchmarks.",
            ["Yu. A. Malkov", "D. A. Yashunin"],
            "2016-03-30T17:31:21Z",
            "2018-08-14T20:11:51Z",
            ["cs.DS", "cs.CV", "cs.IR"],
            doi="10.1109/TPAMI.2018.2889473",
        ),
        Paper(
            "2312.10997",
            5,
            "Retrieval-Augmented Generation for Large Language Models: A Survey",
            "Summary for tests: a survey of retrieval-augmented generation for large language models, organising "
            "the field into naive, advanced and modular RAG, and reviewing retrieval, generation and augmentation "
            "techniques together with evaluation frameworks and benchmarks.",
            [
                "Yunfan Gao",
                "Yun Xiong",
                "Xinyu Gao",
                "Kangxiang Jia",
                "Jinliu Pan",
                "Yuxi Bi",
                "Yi Dai",
                "Jiawei Sun",
                "Meng Wang",
                "Haofen Wang",
            ],
            "2023-12-18T07:47:33Z",
            "2024-03-27T08:39:41Z",
            ["cs.CL", "cs.AI"],
        ),
        Paper(
            "hep-ex/0307015",
            1,
            "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA",
            "Summary for tests: events with several electrons at high transverse momentum are studied in "
            "electron-proton collisions; the yields agree with the Standard Model except at the highest masses.",
            ["H1 Collaboration"],
            "2003-07-07T17:46:39Z",
            "2003-07-07T17:46:39Z",
            ["hep-ex"],
            doi="10.1140/epjc/s2003-01326-x",
            journal_ref="Eur.Phys.J. C31 (2003) 17-29",
        ),
    ]


# -- a small search_query evaluator ---------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r'\(|\)|\bAND\b|\bOR\b|\bANDNOT\b|[a-zA-Z]+:\[[^\]]*\]|[a-zA-Z]+:"[^"]*"|[a-zA-Z]+:[^\s()]+|"[^"]*"|[^\s()]+'
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class _Query:
    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN_RE.findall(text)
        self.pos = 0

    def parse(self):  # noqa: ANN201
        if not self.tokens:
            return lambda paper: 0
        node = self._or()
        return node

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _or(self):  # noqa: ANN202
        left = self._and()
        while self._peek() == "OR":
            self.pos += 1
            right = self._and()
            left = (lambda a, b: lambda p: a(p) + b(p))(left, right)
        return left

    def _and(self):  # noqa: ANN202
        left = self._atom()
        while self._peek() in ("AND", "ANDNOT") or (self._peek() not in (None, ")", "OR")):
            op = self._peek()
            if op in ("AND", "ANDNOT"):
                self.pos += 1
            right = self._atom()
            if op == "ANDNOT":
                left = (lambda a, b: lambda p: a(p) if a(p) and not b(p) else 0)(left, right)
            elif op == "AND":
                left = (lambda a, b: lambda p: a(p) + b(p) if a(p) and b(p) else 0)(left, right)
            else:  # bare juxtaposition: arXiv treats it as OR
                left = (lambda a, b: lambda p: a(p) + b(p))(left, right)
        return left

    def _atom(self):  # noqa: ANN202
        token = self._peek()
        if token is None:
            return lambda paper: 0
        self.pos += 1
        if token == "(":
            node = self._or()
            if self._peek() == ")":
                self.pos += 1
            return node
        fielded = ":" in token and not token.startswith('"')
        field_name, _, value = token.partition(":") if fielded else ("all", "", token)
        return _matcher(field_name.lower(), value.strip('"'))


def _matcher(field_name: str, value: str):  # noqa: ANN202
    if field_name == "submitteddate":
        match = re.match(r"\[\s*(\d{8,14})\s+TO\s+(\d{8,14})\s*\]", value)
        if not match:
            return lambda paper: 0
        low, high = (part.ljust(12, "0")[:12] for part in match.groups())

        def by_date(paper: Paper) -> int:
            stamp = paper.published[:16].replace("-", "").replace("T", "").replace(":", "")
            return 1 if low <= stamp <= high else 0

        return by_date
    wanted = _words(value)
    if not wanted:
        return lambda paper: 0

    def text_of(paper: Paper) -> str:
        if field_name == "ti":
            return paper.title
        if field_name == "abs":
            return paper.summary
        if field_name == "au":
            return " ".join(paper.authors)
        if field_name == "id":
            return paper.arxiv_id
        return f"{paper.title} {paper.summary} {' '.join(paper.authors)} {paper.comment or ''}"

    if field_name == "cat":
        return lambda paper: 1 if value.lower() in (c.lower() for c in paper.categories) else 0

    def score(paper: Paper) -> int:
        words = _words(text_of(paper))
        phrase = " ".join(wanted)
        if len(wanted) > 1:
            return 2 if phrase in " ".join(words) else 0
        return words.count(wanted[0]) + (2 if wanted[0] in _words(paper.title) else 0)

    return score


# -- the server -----------------------------------------------------------------------------------------------


def minimal_pdf(lines: list[str]) -> bytes:
    """A small valid PDF with `lines` as text on one page (what pypdf and other readers can extract)."""

    def pdf_text(line: str) -> str:
        text = line.encode("latin-1", "replace").decode("latin-1")
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    content_lines = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
    for line in lines:
        content_lines.append(f"({pdf_text(line)}) Tj T*")
    content_lines.append("ET")
    stream = "\n".join(content_lines).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class ArxivContractServer(ContractServer):
    """Answers the arXiv query API with Atom feeds and serves PDFs; see the module docstring."""

    name = "arxiv"
    malformed_body = b"<?xml version='1.0'?><feed xmlns='http://www.w3.org/2005/Atom'><entry><id>broken"
    malformed_content_type = ATOM

    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self.papers: dict[str, Paper] = {}
        self.reset_papers()

    @property
    def url(self) -> str:
        """The query endpoint to configure (`ARXIV_API_URL`)."""
        return f"{self.base_url}/api/query"

    def settings_lines(self) -> list[str]:
        return [f"ARXIV_API_URL={self.url}"]

    def reset(self) -> None:
        super().reset()
        self.reset_papers()

    def reset_papers(self) -> None:
        self.papers = {paper.arxiv_id: paper for paper in _papers()}

    def add_paper(self, paper: Paper) -> None:
        self.papers[paper.arxiv_id] = paper

    def query_requests(self) -> list[dict]:
        """The API requests received (not PDF downloads), oldest first."""
        return [request for request in list(self.requests) if request["path"] == "/api/query"]

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if method != "GET":
            return Reply(405, b"", "text/plain")
        if path.startswith("/pdf/"):
            return self._pdf(path[len("/pdf/") :])
        if path != "/api/query":
            return Reply(404, b"Not Found", "text/plain")
        params = self.query_params(query)
        id_list = [item.strip() for item in params.get("id_list", "").split(",") if item.strip()]
        for item in id_list:
            if not _ID_RE.match(item):
                feed = self._error_feed(f"incorrect_id_format_for_{item}", f"incorrect id format for {item}")
                return Reply(400, feed, ATOM)
        try:
            start = int(params.get("start", "0") or 0)
            max_results = int(params.get("max_results", "10") or 10)
        except ValueError:
            return Reply(400, self._error_feed("start_must_be_an_integer", "start must be an integer"), ATOM)
        search_query = params.get("search_query", "")
        papers = list(self.papers.values())
        if id_list:
            wanted = {item.split("v")[0] if re.match(r"^\d", item) else re.sub(r"v\d+$", "", item) for item in id_list}
            papers = [paper for paper in papers if paper.arxiv_id in wanted]
        if search_query:
            scorer = _Query(search_query).parse()
            scored = [(scorer(paper), paper) for paper in papers]
            papers_scored = [(score, paper) for score, paper in scored if score > 0]
        elif id_list:
            papers_scored = [(1, paper) for paper in papers]
        else:
            papers_scored = []
        sort_by = params.get("sortBy", "relevance")
        descending = params.get("sortOrder", "descending") != "ascending"
        if sort_by == "submittedDate":
            papers_scored.sort(key=lambda item: item[1].published, reverse=descending)
        elif sort_by == "lastUpdatedDate":
            papers_scored.sort(key=lambda item: item[1].updated, reverse=descending)
        else:
            papers_scored.sort(key=lambda item: item[0], reverse=descending)
        total = len(papers_scored)
        page = [paper for _, paper in papers_scored[start : start + max_results]]
        return Reply(200, self._feed(query, page, total, start), ATOM)

    def _pdf(self, name: str) -> Reply:
        arxiv_id = re.sub(r"v\d+$", "", name.removesuffix(".pdf"))
        paper = self.papers.get(arxiv_id)
        if paper is None:
            return Reply(404, b"Not Found", "text/plain")
        lines = [paper.title, ", ".join(paper.authors), "Abstract", paper.summary[:90], *paper.body]
        return Reply(200, minimal_pdf(lines), "application/pdf")

    def _feed(self, query: str, papers: list[Paper], total: int, start: int) -> bytes:
        now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        entries = "".join(self._entry(paper) for paper in papers)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
            'xmlns:arxiv="http://arxiv.org/schemas/atom">\n'
            f"  <id>https://arxiv.org/api/{abs(hash(query)) % 10**12}</id>\n"
            f"  <title>arXiv Query: {escape(query)}</title>\n"
            f"  <updated>{now}</updated>\n"
            f'  <link href={quoteattr(self.url + "?" + query)} type="application/atom+xml"/>\n'
            f"  <opensearch:itemsPerPage>{len(papers)}</opensearch:itemsPerPage>\n"
            f"  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
            f"  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
            f"{entries}</feed>\n"
        ).encode()

    def _entry(self, paper: Paper) -> str:
        versioned = f"{paper.arxiv_id}v{paper.version}"
        authors = "".join(f"    <author>\n      <name>{escape(name)}</name>\n    </author>\n" for name in paper.authors)
        categories = "".join(
            f'    <category term="{escape(c)}" scheme="http://arxiv.org/schemas/atom"/>\n' for c in paper.categories
        )
        optional = ""
        if paper.doi:
            optional += f"    <arxiv:doi>{escape(paper.doi)}</arxiv:doi>\n"
            optional += f'    <link title="doi" href="https://doi.org/{escape(paper.doi)}" rel="related"/>\n'
        if paper.comment:
            optional += f"    <arxiv:comment>{escape(paper.comment)}</arxiv:comment>\n"
        if paper.journal_ref:
            optional += f"    <arxiv:journal_ref>{escape(paper.journal_ref)}</arxiv:journal_ref>\n"
        return (
            "  <entry>\n"
            f"    <id>http://arxiv.org/abs/{versioned}</id>\n"
            f"    <title>{escape(paper.title)}</title>\n"
            f"    <updated>{paper.updated}</updated>\n"
            f'    <link href="https://arxiv.org/abs/{versioned}" rel="alternate" type="text/html"/>\n'
            f'    <link href="{self.base_url}/pdf/{versioned}" rel="related" type="application/pdf" title="pdf"/>\n'
            f"    <summary>  {escape(paper.summary)}\n</summary>\n"
            f"{categories}"
            f"    <published>{paper.published}</published>\n"
            f"{optional}"
            f'    <arxiv:primary_category term="{escape(paper.categories[0])}"/>\n'
            f"{authors}"
            "  </entry>\n"
        )

    def _error_feed(self, code: str, text: str) -> bytes:
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">\n'
            "  <opensearch:totalResults>1</opensearch:totalResults>\n"
            "  <entry>\n"
            f"    <id>http://arxiv.org/api/errors#{escape(code)}</id>\n"
            "    <title>Error</title>\n"
            f"    <summary>{escape(text)}</summary>\n"
            "    <updated>2026-01-01T00:00:00Z</updated>\n"
            "    <published>2026-01-01T00:00:00Z</published>\n"
            '    <link href="https://arxiv.org/api/errors" rel="alternate" type="text/html"/>\n'
            "    <author><name>arXiv api core</name></author>\n"
            "  </entry>\n"
            "</feed>\n"
        ).encode()

    def rate_limited_reply(self, headers: dict[str, str]) -> Reply:
        return Reply(429, b"Rate exceeded.", "text/plain", headers=headers)

    def server_error_reply(self) -> Reply:
        return Reply(500, b"<html><body><h1>500 Internal Server Error</h1></body></html>", "text/html")


arxiv_server_session, arxiv_server = contract_fixtures(ArxivContractServer, "arxiv")


if __name__ == "__main__":
    ArxivContractServer.serve_by_hand("Serve the arXiv contract server on 127.0.0.1.")
