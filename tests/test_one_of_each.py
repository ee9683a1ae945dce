"""One of each: the product has one tokeniser, one sentence splitter and one stop-word list, and a second copy of
any of them fails here (an AST scan of the product's packages)."""

from __future__ import annotations

import ast
from pathlib import Path

from components.text.analyzer import STOP_WORDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("components", "pipelines", "ingest", "app")
# The one tokeniser and stop-word list, and the one sentence splitter.
ANALYZER = Path("components/text/analyzer.py")
LANGUAGE = Path("components/text/language.py")
TOKENISER_NAMES = {"tokenize", "tokenise", "tokens", "words", "terms", "content_words", "content_tokens"}
SPLITTER_NAMES = {"sentence_spans", "sentences", "split_sentences", "sentence_split", "split_into_sentences"}


def _modules() -> list[tuple[Path, ast.Module]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found.append((path.relative_to(ROOT), ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _word_list(node: ast.AST) -> list[str]:
    """The words a literal spells out: a set, list or tuple of strings, or `"...".split()` (possibly inside a
    set()/frozenset() call)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset"):
        return _word_list(node.args[0]) if node.args else []
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "split"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return node.func.value.value.split()
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return []


def test_no_second_stop_word_list():
    """A literal list of 25 words or more, most of them stop words, is a second stop-word list: extend the one in
    the analyzer instead (shorter purpose lists, such as the words a yes/no question starts with, are not)."""
    copies = []
    for path, tree in _modules():
        if path == ANALYZER:
            continue
        for node in ast.walk(tree):
            words = _word_list(node)
            if len(words) >= 25 and sum(word.lower() in STOP_WORDS for word in words) >= 0.6 * len(words):
                copies.append(f"{path}:{node.lineno}")
    assert copies == [], f"hand-written stop-word lists outside {ANALYZER}: {copies}"


def test_no_second_tokeniser_or_sentence_splitter():
    """Functions that cut text into words or sentences are defined once, in the analyzer and the language module."""
    copies = []
    for path, tree in _modules():
        for node in tree.body:  # module-level functions (a method named `sentences` reads stored ones)
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if node.name in TOKENISER_NAMES and path != ANALYZER:
                copies.append(f"{path}:{node.lineno} {node.name}")
            if node.name in SPLITTER_NAMES and path not in (ANALYZER, LANGUAGE):
                copies.append(f"{path}:{node.lineno} {node.name}")
    assert copies == [], f"a second tokeniser or sentence splitter: {copies}"


def test_the_scan_finds_a_copy(tmp_path):
    """The stop-word scan recognises the usual ways of writing a list."""
    for source in (
        'STOP = frozenset("a an the of in on at to for from by with and or but is are".split())',
        'STOP = {"a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with"}',
    ):
        node = ast.parse(source).body[0].value  # type: ignore[attr-defined]
        words = _word_list(node)
        assert len(words) >= 12 and all(word in STOP_WORDS for word in words)
