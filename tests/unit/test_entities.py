"""Entity matching and resolution: the phrase matcher, ambiguity, the spaCy fallback."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

import fused_memory.query.entities as entities_mod
from fused_memory.errors import MissingDependency
from fused_memory.query.entities import EntityMatcher, load_nlp, ner_mentions, ner_refs
from fused_memory.text import normalize_entity_id
from fused_memory.types import Entity
from tests.conftest import cpu_time

ENTITIES = [
    Entity("sarah chen", "Sarah Chen", ("Sarah", "Chen"), "PERSON", mentions=10),
    Entity("sarah park", "Sarah Park", ("Sarah",), "PERSON", mentions=3),
    Entity("berlin office", "Berlin office", ("Berlin",), "FAC", mentions=2),
    Entity("berlin", "Berlin", (), "GPE", mentions=5),
    Entity("kestrel", "Kestrel", ("Project Kestrel", "Kestrel project"), "PRODUCT", mentions=1),
    Entity("jose", "José Álvarez", ("José",), "PERSON", mentions=1),
    Entity("will", "Will", (), "PERSON", mentions=1),
    Entity("c. s. lewis", "C. S. Lewis", (), "PERSON", mentions=1),
    Entity("o'brien", "O'Brien", (), "PERSON", mentions=1),
]


@pytest.fixture(scope="module")
def matcher() -> EntityMatcher:
    return EntityMatcher(ENTITIES)


def ids(ref) -> list[str]:  # type: ignore[no-untyped-def]
    return [c.entity_id for c in ref.candidates]


@pytest.mark.parametrize("raw,expected", [
    ("Sarah Chen", "sarah chen"), ("  'Sarah   Chen.' ", "sarah chen"), ("SARAH\tCHEN", "sarah chen"),
    ("(Berlin)", "berlin"), ("O'Brien", "o'brien"), ("C#", "c#"), ("AT&T", "at&t"), ("“Kestrel”", "kestrel"),
    ("Straße", "strasse"), ("ﬁnance", "finance"), ("...", ""), ("", ""),
])
def test_normalize_entity_id(raw: str, expected: str) -> None:
    assert normalize_entity_id(raw) == expected


def test_unambiguous_match_is_confident(matcher: EntityMatcher) -> None:
    (ref,) = matcher.match("what did Sarah Chen say?")
    assert ref.text == "Sarah Chen" and ids(ref) == ["sarah chen"]
    assert ref.candidates[0].confidence >= 0.7 and not ref.ambiguous and ref.source == "known"


def test_alias_match_is_confident_but_below_name(matcher: EntityMatcher) -> None:
    (ref,) = matcher.match("status of the kestrel project")
    assert ids(ref) == ["kestrel"] and ref.text == "kestrel project"
    assert 0.7 <= ref.candidates[0].confidence < 1.0


def test_longest_match_wins(matcher: EntityMatcher) -> None:
    (ref,) = matcher.match("news from the Berlin office")
    assert ids(ref) == ["berlin office"]
    (ref,) = matcher.match("news from Berlin")
    assert set(ids(ref)) == {"berlin", "berlin office"}  # "Berlin" names one and aliases the other


def test_case_insensitive_and_word_boundaries(matcher: EntityMatcher) -> None:
    assert ids(matcher.match("WHO IS SARAH CHEN")[0]) == ["sarah chen"]
    assert matcher.match("the kestrels flew") == []  # no match inside a longer word
    assert matcher.match("Berliner Weisse") == []
    assert ids(matcher.match("Sarah Chen's team")[0]) == ["sarah chen"]  # possessive


def test_ambiguous_mention_keeps_all_candidates_split_by_prior_use(matcher: EntityMatcher) -> None:
    (ref,) = matcher.match("who reports to Sarah?")
    assert ids(ref) == ["sarah chen", "sarah park"]  # best first: Sarah Chen is mentioned more
    conf = [c.confidence for c in ref.candidates]
    assert ref.ambiguous and conf[0] > conf[1] and conf[0] < 0.7
    assert sum(conf) == pytest.approx(1.0, abs=1e-3)


def test_context_shifts_resolution() -> None:
    ents = [Entity("jordan lee", "Jordan Lee", ("Jordan",), "PERSON", 4), Entity("jordan", "Jordan", (), "GPE", 4)]
    m = EntityMatcher(ents)
    assert m.match("who is Jordan?")[0].candidates[0].entity_id == "jordan lee"  # "who" -> a person
    assert m.match("my trip to Jordan")[0].candidates[0].entity_id == "jordan"  # "trip to" -> a place
    assert m.match("Jordan")[0].candidates[0].entity_id == "jordan"  # no cue: its own name beats an alias
    # the query names another token of the entity ("Lee") -> that candidate gains
    lee = {c.entity_id: c.confidence for c in m.match("Jordan said Lee would come")[0].candidates}
    assert lee["jordan lee"] > 0.5


def test_exact_name_beats_alias_among_candidates() -> None:
    ents = [Entity("sarah", "Sarah", (), "PERSON", 1), Entity("sarah chen", "Sarah Chen", ("Sarah",), "PERSON", 1)]
    (ref,) = EntityMatcher(ents).match("call Sarah")
    assert ref.candidates[0].entity_id == "sarah"


def test_names_are_separate_across_punctuation(matcher: EntityMatcher) -> None:
    refs = matcher.match("Sarah, Chen and Park")
    assert [r.text for r in refs] == ["Sarah", "Chen"]  # not "Sarah Chen"


def test_everyday_words_need_a_capital(matcher: EntityMatcher) -> None:
    assert matcher.match("what will happen?") == []
    assert ids(matcher.match("what did Will say?")[0]) == ["will"]


def test_accents_initials_and_apostrophes(matcher: EntityMatcher) -> None:
    assert ids(matcher.match("what did jose say")[0]) == ["jose"]
    assert ids(matcher.match("books by C.S. Lewis")[0]) == ["c. s. lewis"]
    assert ids(matcher.match("ask o'brien")[0]) == ["o'brien"]


def test_each_entity_once_in_order(matcher: EntityMatcher) -> None:
    refs = matcher.match("Kestrel and Sarah Chen, then Kestrel again")
    assert [r.text for r in refs] == ["Kestrel", "Sarah Chen"]
    spans = matcher.find("ask Sarah Chen about Kestrel")
    assert [(m.start, m.end) for m in spans] == [(4, 14), (21, 28)]


def test_empty_and_rebuilt_matchers() -> None:
    empty = EntityMatcher([])
    assert empty.match("Sarah Chen") == [] and len(empty) == 0
    rebuilt = EntityMatcher([*ENTITIES, Entity("nova", "Nova", (), "PRODUCT", 0)])
    assert ids(rebuilt.match("launch Nova")[0]) == ["nova"] and len(rebuilt) == len(ENTITIES) + 1


def test_matcher_is_fast_with_a_thousand_entities() -> None:
    ents = [Entity(f"person {i}", f"Person{i} Surname{i}", (f"Person{i}",), "PERSON", i % 7) for i in range(1000)]
    m = EntityMatcher(ents)
    q = "what did Person17 tell Person512 Surname512 about the Berlin office last week?"
    with cpu_time() as took:  # CPU, no collection counted: a busy test machine does not count
        for _ in range(200):
            refs = m.match(q)
    per_call_ms = took() / 200 * 1000
    assert [r.text for r in refs] == ["Person17", "Person512 Surname512"]
    assert per_call_ms < 1.0  # generous bound; measured ~0.02 ms


# ------------------------------------------------------------------ spaCy fallback
@dataclass
class _Ent:
    text: str
    label_: str
    start_char: int
    end_char: int


class _FakeNlp:
    """Stands in for spaCy: returns the entities it was built with."""

    def __init__(self, ents: list[tuple[str, str]]) -> None:
        self.ents = ents

    def __call__(self, text: str):  # type: ignore[no-untyped-def]
        found = []
        for name, label in self.ents:
            at = text.find(name)
            if at >= 0:
                found.append(_Ent(name, label, at, at + len(name)))
        return type("Doc", (), {"ents": found})()


def test_ner_refs_from_a_pipeline() -> None:
    nlp = _FakeNlp([("Priya Natarajan's", "PERSON"), ("the Acme Corp", "ORG"), ("last week", "DATE")])
    refs = ner_refs("did Priya Natarajan's memo reach the Acme Corp last week?", nlp)
    assert [(r.text, r.source) for r in refs] == [("Priya Natarajan", "ner"), ("Acme Corp", "ner")]
    assert refs[0].candidates[0].entity_id == "priya natarajan" and refs[0].candidates[0].confidence == 0.5
    m = ner_mentions("ask Priya Natarajan's team", nlp)[0]
    assert "ask Priya Natarajan's team"[m.start:m.end] == "Priya Natarajan"


def test_missing_models_raise_missing_dependency(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entities_mod, "_NLP", {})
    monkeypatch.setattr(entities_mod, "SPACY_MODELS", ("no_such_model_xyz", "nor_this_one_xyz"))
    with pytest.raises(MissingDependency, match="spaCy model"):
        load_nlp()


@pytest.mark.slow
def test_real_spacy_ner_only_and_cached() -> None:
    nlp = load_nlp()
    assert nlp.pipe_names == ["ner"] and load_nlp() is nlp
    refs = ner_refs("what did I tell Priya Natarajan about the Berlin office?", nlp)
    assert "priya natarajan" in {r.candidates[0].entity_id for r in refs}
