"""A memory's wording as the stage after fusion compares it, read once at write time and kept in
the payload (`codec.to_payload`), so a query reads fields instead of re-reading each candidate's
text (docs/decisions/0019-precompute-and-validation.md).

What is kept, under the payload key `WORDING`:

* `key`: a 64-bit digest of the text as duplicates compare it (`text_key`: NFKC, case-folded, every
  run of punctuation, symbols and spaces one space). Only ever compared for equality, so a digest
  stands in for a second copy of the text; two different texts share one at odds of 2^-64 a pair.
* `words`: its content words (`text.tokenize`: stemmed, stopwords out).
* `values`: its tokens with a digit and what they join ("e-12345", "3pm", "v0.9").
* `negations`: how many negations it has ("not", "never", "n't"...).
* `v`: the version of the rules that read them (`VERSION`): an entry of another version is not read.

How they reach the stage after fusion: a memory's wording is a pure function of its text, so it is
looked up by the text (`of_text`) in one bounded table that the reads of payloads fill
(`remember`: hydration's payloads, `MemoryStore.get_many`); a text not in it is read and kept
there. So the memories a query hydrates are compared by the fields their payloads keep, whatever
path read them (an arm's payload, a read by id, a wrapper around the store), and a payload written
before wordings were kept, or with a damaged entry (`of_payload` gives None), costs one reading
of its text, never a wrong answer. `store.upgrade()` writes them into older payloads; a search does
not, since a store without them answers the same.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..text import tokenize

__all__ = ["WORDING", "VERSION", "UPGRADE", "Content", "Wording", "content", "text_key", "read_text", "of_text",
           "of_payload", "remember", "to_json"]

#: The payload key of a memory's wording.
WORDING = "wording"

_NOT_WORD = re.compile(r"[\W_]+")
#: A token with a digit and what it joins ("e-12345", "3pm", "v0.9"). Written to start only at the
#: start of a run of letters and digits that holds a digit (the look-behind and look-ahead): the
#: same matches as `[^\W_]*\d[^\W_]*(?:[-.:/][^\W_]+)*`, which tried every position of every
#: word (tested equal on random text).
_VALUE = re.compile(r"(?<![^\W_])(?=[^\W_]*\d)[^\W_]+(?:[-.:/][^\W_]+)*")
#: Any digit: a text without one has no value, and `_VALUE` need not scan it (most texts).
_DIGIT = re.compile(r"\d")
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|cannot|without)\b|n't\b")
#: Texts up to this long are kept by `text_key`'s cache; a longer one is keyed anew.
_CACHED_CHARS = 2000
#: How many texts' wordings are kept (the candidates of the last few hundred queries; about 3 KB a
#: short text), long texts too: a long candidate would otherwise be read again on every query, two
#: to four times. Past it the table is emptied and refills from the next reads.
_KEPT = 8192
#: The version of the payload entry's rules (the tokenizer, the values and negations patterns). An
#: entry of another version is not read (the text is), and `store.upgrade` rewrites it: a change to
#: those rules bumps this, and the upgrade item's name with it (`UPGRADE`).
VERSION = 1
#: The name `store.upgrade` records once every memory keeps this version's wording.
UPGRADE = f"wording{VERSION}"


@dataclass(frozen=True)
class Content:
    """What near-duplicates compare of a text (`ensemble.duplicates.same_content`): its tokens with
    a digit, its number of negations and its content words."""

    values: frozenset[str]
    negations: int
    words: frozenset[str]


@dataclass(frozen=True)
class Wording:
    """A memory's wording: the digest of its text key (`key`) and its `content`."""

    key: str
    content: Content


def text_key(text: str) -> str:
    """A text as duplicates compare it: NFKC, case-folded, every run of punctuation, symbols and
    spaces one space ("User prefers green tea." and "user prefers  green tea!" are one text)."""
    return _cached_key(text) if len(text) <= _CACHED_CHARS else _key(text)


def _key(text: str) -> str:
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


_cached_key = lru_cache(maxsize=8192)(_key)


def content(text: str) -> Content:
    """The values, negations and content words of `text`."""
    folded = text.casefold().replace("\u2019", "'")
    values = frozenset(v for v in _VALUE.findall(folded) if any(ch.isdigit() for ch in v)) \
        if _DIGIT.search(folded) is not None else frozenset()
    return Content(values, len(_NEGATION.findall(folded)), frozenset(tokenize(text)))


def _digest(key: str) -> str:
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()


def read_text(text: str) -> Wording:
    """The wording of `text`, read now (what a write keeps in the payload)."""
    return Wording(_digest(text_key(text)), content(text))


_known: dict[str, Wording] = {}


def _keep(text: str, w: Wording) -> None:
    if len(_known) >= _KEPT:
        _known.clear()
    _known[text] = w


def of_text(text: str) -> Wording:
    """The wording of a memory's text: as its payload kept it when a read of that payload was
    `remember`ed, else read from the text (and kept for the next query)."""
    w = _known.get(text)
    if w is None:
        w = read_text(text)
        _keep(text, w)
    return w


def remember(p: Mapping[str, Any]) -> None:
    """Keep the wording a payload holds, for `of_text` of its text (nothing for a payload that holds
    none, a damaged one, or a text already kept)."""
    text = p.get("text")
    if isinstance(text, str) and text not in _known:
        w = of_payload(p)
        if w is not None:
            _keep(text, w)


def to_json(w: Wording) -> dict[str, Any]:
    """The payload entry (lists sorted, so the same text always writes the same payload)."""
    c = w.content
    return {"v": VERSION, "key": w.key, "words": sorted(c.words), "values": sorted(c.values),
            "negations": c.negations}


def of_payload(p: Mapping[str, Any]) -> Wording | None:
    """The wording a payload keeps; None when it keeps none, a damaged one or one of another
    `VERSION` (then read the text)."""
    entry = p.get(WORDING)
    if not isinstance(entry, Mapping) or entry.get("v") != VERSION:
        return None
    key, words, values, negations = (entry.get("key"), entry.get("words"), entry.get("values"),
                                     entry.get("negations"))
    if not (isinstance(key, str) and isinstance(words, list) and isinstance(values, list)
            and isinstance(negations, int) and not isinstance(negations, bool) and negations >= 0
            and all(isinstance(w, str) for w in words) and all(isinstance(v, str) for v in values)):
        return None
    return Wording(key, Content(frozenset(values), negations, frozenset(words)))
