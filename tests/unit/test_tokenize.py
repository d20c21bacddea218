"""Tokenizer tables: what BM25 indexes for a given text, and which identifiers a query carries."""

from __future__ import annotations

import pytest

from fused_memory.text import STOPWORDS, identifiers, stem, tokenize

TOKENIZE_CASES: list[tuple[str, list[str]]] = [
    # identifiers stay whole, then their parts (length >= 2) follow
    ("E-47821", ["e-47821", "47821"]),
    ("JIRA-9921", ["jira-9921", "jira", "9921"]),
    ("v2.3.1", ["v2.3.1", "v2"]),
    ("10.0.0.1", ["10.0.0.1", "10"]),
    ("user_id", ["user_id", "user", "id"]),
    ("foo.bar", ["foo.bar", "foo", "bar"]),
    ("alice@example.com", ["alice@example.com", "alic", "exampl", "com"]),
    # trailing punctuation is not part of a token; sentence punctuation splits words
    ("Ticket JIRA-9921.", ["ticket", "jira-9921", "jira", "9921"]),
    ("coffee,tea;milk!", ["coffe", "tea", "milk"]),
    # lowercase, stopwords dropped, possessive 's stripped (also on identifiers)
    ("What's my badge E-47821?", ["badg", "e-47821", "47821"]),
    ("Alice's car", ["alic", "car"]),
    ("JIRA-9921's status", ["jira-9921", "jira", "9921", "status"]),
    ("I don't like it", ["like"]),
    ("the of and to", []),
    # stemming: plurals, -ing, -ed meet their base form
    ("meetings meeting meet", ["meet", "meet", "meet"]),
    ("notes noted note", ["note", "note", "note"]),
    ("policies policy", ["policy", "policy"]),
    ("boxes box", ["box", "box"]),
    ("hoping hope", ["hope", "hope"]),
    ("running runs", ["run", "run"]),
    ("status analysis gas", ["status", "analysis", "gas"]),
    # Unicode: NFKC folding, other scripts, typographic apostrophes and hyphens
    ("ＡＢＣ１２３", ["abc123"]),
    ("Café Straße", ["café", "straße"]),
    ("Zoë’s JIRA\u20119921", ["zoë", "jira-9921", "jira", "9921"]),
    ("東京 タワー", ["東京", "タワー"]),
    ("", []),
    ("   ", []),
]


@pytest.mark.parametrize(("text", "expected"), TOKENIZE_CASES)
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


IDENTIFIER_CASES: list[tuple[str, list[str]]] = [
    ("what's my badge E-47821?", ["E-47821"]),
    ("see JIRA-9921 and jira-9921", ["JIRA-9921", "jira-9921"]),
    ("upgrade to v2.3.1 on 10.0.0.1", ["v2.3.1", "10.0.0.1"]),
    ("call 555-1234 or user_1", ["555-1234", "user_1"]),
    ("E-47821's owner, E-47821 again", ["E-47821"]),
    ("order A12B", ["A12B"]),
    # not identifiers: plain numbers, digit-free joined words, ordinary words
    ("badge ID is 47821", []),
    ("foo.bar and user_id and well-known", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), IDENTIFIER_CASES)
def test_identifiers(text: str, expected: list[str]) -> None:
    assert identifiers(text) == expected


STEM_CASES: list[tuple[str, str]] = [
    ("meetings", "meet"), ("cats", "cat"), ("ponies", "pony"), ("ties", "tie"), ("caresses", "caress"),
    ("matches", "match"), ("agreed", "agre"), ("agree", "agre"), ("hopping", "hop"), ("sized", "size"),
    ("bus", "bus"), ("sing", "sing"), ("need", "need"), ("x1", "x1"), ("ab", "ab"), ("naïve", "naïv"),
]


@pytest.mark.parametrize(("word", "expected"), STEM_CASES)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize("query", ["jira 9921", "JIRA-9921", "9921", "Jira-9921's"])
def test_identifier_parts_let_split_queries_match(query: str) -> None:
    doc = set(tokenize("opened JIRA-9921 yesterday"))
    assert set(tokenize(query)) <= doc


def test_tokenize_is_pure_and_deterministic() -> None:
    text = "Meeting notes for JIRA-9921: v2.3.1 deployed to 10.0.0.1 by Alice's team"
    assert tokenize(text) == tokenize(text) == tokenize(str(text))


@pytest.mark.parametrize("bad", [None, 42, b"bytes"])
def test_non_string_input_gives_nothing(bad: object) -> None:
    assert tokenize(bad) == []  # type: ignore[arg-type]
    assert identifiers(bad) == []  # type: ignore[arg-type]


def test_stopwords_are_lowercase_and_small() -> None:
    assert all(w == w.lower() for w in STOPWORDS)
    assert 100 < len(STOPWORDS) < 300
    assert "id" not in STOPWORDS and "badge" not in STOPWORDS
