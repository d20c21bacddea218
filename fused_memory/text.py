"""Tokenization for the lexical arm and the query parser: small, pure and deterministic.

Why our own and not nltk/spaCy: BM25 lives or dies on identifiers ("E-47821", "v2.3.1",
"10.0.0.1", "user_id") surviving tokenization whole, which general-purpose word tokenizers break
apart; and the lexical arm is on the query hot path, where loading a model is not an option. The
same function tokenizes documents and queries, so any normalization it does (case, stemming,
identifier parts) matches on both sides by construction.

Rules, in order:
* NFKC-normalize, map typographic apostrophes and Unicode hyphens to ASCII, lowercase.
* A token is a run of letters/digits (any script), optionally joined by single ``- . _ ' @``
  characters between alphanumerics: "JIRA-9921", "foo.bar", "o'brien", "alice@example.com".
* A trailing possessive ``'s`` is stripped ("Alice's" -> "alice").
* A plain word is dropped if it is an English stopword, else stemmed (conservative Porter step
  1a/1b plus 5a, alphabetic words only: "meetings" -> "meet", "notes" -> "note").
* A joined token is emitted whole (unstemmed) *and* its parts (each treated as a plain word,
  parts shorter than 2 characters dropped), so "JIRA-9921" matches the queries "JIRA-9921",
  "jira 9921" and "9921".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["tokenize", "identifiers", "stem", "normalize_entity_id", "STOPWORDS"]

#: A small built-in English stopword list (no downloads). Contractions are listed whole because the
#: tokenizer keeps "don't" as one token; "what's"/"it's" reduce to "what"/"it" via the possessive rule.
STOPWORDS: frozenset[str] = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not of off on once only or other our ours ourselves out over own same she should
so some such than that the their theirs them themselves then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you
your yours yourself yourselves also may might must shall us let
s t d ll m re ve o y e.g i.e etc
don't doesn't didn't isn't aren't wasn't weren't hasn't haven't hadn't won't wouldn't can't cannot
couldn't shouldn't mustn't i'm i've i'd i'll you're you've you'd you'll we're we've we'd we'll
they're they've they'd they'll he'd he'll she'd she'll that'll there'd
""".split())

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'",
                              "\u2010": "-", "\u2011": "-"})
#: Alphanumeric runs (any script; "_" excluded so it can act as a joiner) joined by single
#: connector characters that sit *between* alphanumerics. A trailing "." or "-" is not part of it.
_TOKEN_RE = re.compile(r"[^\W_]+(?:[-._'@][^\W_]+)*")
_JOINER_RE = re.compile(r"[-._'@]")
_ID_JOINER_RE = re.compile(r"[^\W_][-.][^\W_]")
_VOWELS = frozenset("aeiou")


def _normalize(text: str) -> str:
    """NFKC so full-width/compatibility forms match their plain spelling; ASCII apostrophes/hyphens."""
    return unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)


def _strip_possessive(token: str) -> str:
    """ "alice's" -> "alice", "JIRA-9921's" -> "JIRA-9921" (case-insensitive on the 's)."""
    if len(token) > 2 and token[-2] == "'" and token[-1] in "sS":
        return token[:-2]
    return token


# ------------------------------------------------------------------ stemming (Porter 1a, 1b, 5a)
def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem_: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in `stem_`."""
    m, prev_vowel = 0, False
    for i in range(len(stem_)):
        cons = _is_consonant(stem_, i)
        if cons and prev_vowel:
            m += 1
        prev_vowel = not cons
    return m


def _has_vowel(stem_: str) -> bool:
    return any(not _is_consonant(stem_, i) for i in range(len(stem_)))


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w/x/y ("hop", not "how"): a short syllable."""
    return (len(word) >= 3 and _is_consonant(word, len(word) - 3) and not _is_consonant(word, len(word) - 2)
            and _is_consonant(word, len(word) - 1) and word[-1] not in "wxy")


@lru_cache(maxsize=131072)
def stem(word: str) -> str:
    """A conservative suffix stemmer for lowercase alphabetic words.

    Porter's step 1a (plurals), 1b (-ed/-ing with its clean-up) and 5a (final -e), which is enough
    for "meetings"/"meeting"/"meet", "notes"/"noted"/"note" and "used"/"use" to meet, without
    Porter's later steps that conflate unrelated words ("general"/"generate"). Deviations that make
    it safer for short words: "-ies" -> "-y" ("policies" -> "policy"), "-es" is only removed after
    sibilants ("boxes" -> "box"), and a final "s" stays after "s", "u", "i" ("status", "analysis")
    or when the word has fewer than four letters ("gas", "bus"). Non-alphabetic words are returned
    unchanged. Cached: vocabularies are Zipfian, so most calls are hits.
    """
    if len(word) < 3 or not word.isalpha():
        return word
    w = word
    # step 1a: plurals
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies"):
        w = w[:-3] + ("y" if len(w) > 4 else "ie")
    elif w.endswith(("ches", "shes", "xes", "zes")) and len(w) > 4:
        w = w[:-2]
    elif w.endswith("s") and len(w) >= 4 and w[-2] not in "sui":
        w = w[:-1]
    # step 1b: -eed / -ed / -ing
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    else:
        for suffix in ("ing", "ed"):
            if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
                w = w[: -len(suffix)]
                if w.endswith(("at", "bl", "iz")):
                    w += "e"
                elif len(w) >= 2 and w[-1] == w[-2] and _is_consonant(w, len(w) - 1) and w[-1] not in "lsz":
                    w = w[:-1]
                elif _measure(w) == 1 and _cvc(w):
                    w += "e"
                break
    # step 5a: final -e
    if w.endswith("e"):
        m = _measure(w[:-1])
        if m > 1 or (m == 1 and not _cvc(w[:-1])):
            w = w[:-1]
    return w


# ------------------------------------------------------------------ tokens
@lru_cache(maxsize=131072)
def _plain(word: str) -> str | None:
    """A lowercase plain word -> its index term, or None when it is a stopword.

    Only the surface form is checked: a stem that happens to spell a stopword ("used" -> "us")
    is a content word and is kept."""
    return None if word in STOPWORDS else stem(word)


def tokenize(text: str) -> list[str]:
    """Index terms of `text` for BM25 (documents and queries alike), in order, with repeats.

    Joined tokens contribute the whole token then their distinct parts (length >= 2, stopwords
    dropped, stemmed), so term frequency counts each once per occurrence. Empty or non-string
    input gives [].
    """
    if not isinstance(text, str) or not text:
        return []
    out: list[str] = []
    for tok in _TOKEN_RE.findall(_normalize(text).lower()):
        out.extend(_token_terms(tok))
    return out


@lru_cache(maxsize=262144)
def _token_terms(tok: str) -> tuple[str, ...]:
    """The index terms of one lowercase token. Cached: tokens are Zipfian, so this is mostly a hit."""
    tok = _strip_possessive(tok)
    if not _JOINER_RE.search(tok):
        term = _plain(tok)
        return () if term is None else (term,)
    if tok in STOPWORDS:  # "don't", "i'm", "e.g"
        return ()
    terms = [tok]
    for part in _JOINER_RE.split(tok):
        if len(part) >= 2:
            term = _plain(part)
            if term is not None and term not in terms:
                terms.append(term)
    return tuple(terms)


def _is_identifier(token: str) -> bool:
    has_digit = any(c.isdigit() for c in token)
    if not has_digit:
        return False
    return any(c.isalpha() for c in token) or _ID_JOINER_RE.search(token) is not None


def identifiers(text: str) -> list[str]:
    """Identifier-like tokens of `text` in their original case, first occurrence order, no repeats.

    An identifier contains a digit and either a letter ("E-47821", "v2", "user_1") or a hyphen/dot
    between alphanumerics ("10.0.0.1", "555-1234"). Plain numbers ("47821") and digit-free joined
    words ("foo.bar", "well-known") are not identifiers: the query parser uses this list to decide
    what must match exactly, and those are better served by ordinary term matching.
    """
    if not isinstance(text, str) or not text:
        return []
    found: list[str] = []
    seen: set[str] = set()
    for match in _TOKEN_RE.finditer(_normalize(text)):
        tok = _strip_possessive(match.group())
        if _is_identifier(tok) and tok not in seen:
            seen.add(tok)
            found.append(tok)
    return found


#: Kept at a name's ends by `normalize_entity_id` ("C#", "50%", "@handle").
_EDGE_KEEP = frozenset("#&%@")


def normalize_entity_id(name: str) -> str:
    """The canonical id of an entity name: NFKC, casefolded, whitespace collapsed, punctuation
    stripped at both ends ("  'Sarah  Chen.' " -> "sarah chen"). Ingest, the graph and the query
    side all key entities by this, so the same name always lands on the same node."""
    s = " ".join(unicodedata.normalize("NFKC", str(name)).casefold().split())
    start, end = 0, len(s)
    while start < end and _strippable(s[start]):
        start += 1
    while end > start and _strippable(s[end - 1]):
        end -= 1
    return s[start:end]


def _strippable(ch: str) -> bool:
    return ch.isspace() or (unicodedata.category(ch).startswith("P") and ch not in _EDGE_KEEP)
