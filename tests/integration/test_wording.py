"""A memory's wording is read once, when it is written, and kept in its payload; the stage after
fusion compares those fields, not the text (`backends.wording`, issue "a million memories").

Real embedded and server Qdrant stores; the hashing embedder (no model) keeps the rankings exact and
the tests fast.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

from qdrant_client import QdrantClient

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.backends.lexical.engine import EngineLexicalIndex
from fused_memory.backends.vector.common import point_id
from fused_memory.backends.vector.server import QdrantClientBackend
from fused_memory.backends.wording import UPGRADE, VERSION, WORDING, of_payload, read_text, to_json
from fused_memory.embeddings import HashingEmbedder

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=timezone.utc)
EMB = HashingEmbedder(dim=64)
NS = "maya"


def _unique(text: str) -> str:
    """A text no other test of this process has read (the table of wordings is process-wide)."""
    return f"{text} ({uuid.uuid4().hex[:8]})"


def _memories(tag: str) -> list[Memory]:
    said = NOW - timedelta(days=3)
    return [
        Memory(f"My badge ID is E-47821, not the old one {tag}", namespace=NS, id="badge", created_at=said),
        Memory(f"I never drink coffee after 3pm {tag}", namespace=NS, id="coffee", created_at=said),
        Memory(f"i never drink coffee after 3pm!! {tag}", namespace=NS, id="coffee-again",
               created_at=said + timedelta(hours=1)),
        Memory(f"The climbing gym opens at 7am on Saturdays {tag}", namespace=NS, id="gym", created_at=said),
    ]


def test_a_written_memory_keeps_its_wording_in_its_payload(tmp_path: Path) -> None:
    text = _unique("I'm not moving to Berlin before v2.3 ships on 12 May")
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False) as store:
        store.add([Memory(text, namespace=NS, id="m")])
        [payload] = store.vectors.get(NS, ["m"])
    kept = payload[WORDING]
    assert kept == to_json(read_text(text))
    assert len(kept["key"]) == 16 and text not in kept["key"]  # a digest of the text key, not a second copy
    assert {"berlin", "move", "ship"} <= set(kept["words"]) and "not" not in kept["words"]
    assert {"v2.3", "12"} <= set(kept["values"]) and kept["negations"] == 1
    assert kept["words"] == sorted(kept["words"])  # the same text always writes the same payload


def test_collapse_compares_the_wording_the_payload_keeps_not_the_text(tmp_path: Path) -> None:
    tea, coffee = _unique("User prefers green tea in the morning"), _unique("User drinks black coffee at night")
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False) as store:
        store.add([Memory(tea, namespace=NS, id="tea", created_at=NOW - timedelta(days=2)),
                   Memory(coffee, namespace=NS, id="coffee", created_at=NOW - timedelta(days=1))])
        [tea_payload] = store.vectors.get(NS, ["tea"])
        # the coffee memory's payload now says it is worded as the tea memory is: collapse believes it
        store.vectors.set_payload(NS, ["coffee"], {WORDING: tea_payload[WORDING]})
        ens = EnsembleMemory(store)
        hits = ens.retrieve("what does the user drink?", namespace=NS, now=NOW).hits
    assert [h.memory.id for h in hits] == ["coffee"]  # one hit, the newer, the other collapsed into it
    assert hits[0].collapsed == ("tea",)


def test_a_damaged_wording_is_read_from_the_text_and_answers_the_same(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    with MemoryStore.embedded(tmp_path, embedder=EMB, ner=False) as store:
        store.add(_memories(tag))
        ens = EnsembleMemory(store)
        before = ens.retrieve("do I drink coffee in the afternoon?", namespace=NS, now=NOW)
        for mid, bad in [("coffee", {"key": 5}), ("coffee-again", "not a mapping"), ("badge", {"key": "x"})]:
            store.vectors.set_payload(NS, [mid], {WORDING: bad})
        [damaged] = store.vectors.get(NS, ["coffee"])
        assert of_payload(damaged) is None
        after = ens.retrieve("do I drink coffee in the afternoon?", namespace=NS, now=NOW)
    assert [(h.memory.id, h.collapsed) for h in after.hits] == [(h.memory.id, h.collapsed) for h in before.hits]
    assert ("coffee-again", ("coffee",)) in [(h.memory.id, h.collapsed) for h in after.hits]  # copies still one hit


def _server(client: QdrantClient) -> MemoryStore:
    vectors = QdrantClientBackend(client=client, sparse=True)
    return MemoryStore(vectors, EngineLexicalIndex(vectors), EMB, graph=None).open()


def test_an_older_store_answers_the_same_and_gets_its_wording_by_upgrade() -> None:
    client = QdrantClient(location=":memory:")
    tag = uuid.uuid4().hex[:8]
    memories = _memories(tag)
    ids = [m.id for m in memories]
    with _server(client) as store:
        store.add(memories)
        ens = EnsembleMemory(store)
        questions = ["do I drink coffee in the afternoon?", "what is my badge ID?", "when does the gym open?"]
        written = [ens.retrieve(q, namespace=NS, now=NOW) for q in questions]
        meta = store.vectors.read_meta()
        assert meta is not None and UPGRADE in meta["upgraded"]
        store.vectors.write_meta({**meta, "upgraded": [u for u in meta["upgraded"] if u != UPGRADE]})
    # what an older release wrote: no wording in any payload, and a meta that does not promise one
    client.delete_payload("fused_memory", keys=[WORDING], points=[point_id(NS, i) for i in ids])
    with _server(client) as older:
        ens = EnsembleMemory(older)
        served = [ens.retrieve(q, namespace=NS, now=NOW) for q in questions]  # the texts read at query time
        assert all(WORDING not in p for p in older.vectors.get(NS, ids))  # a search writes nothing
        assert older.upgrade() == {UPGRADE: len(ids)}
        assert all(p[WORDING] == to_json(read_text(p["text"])) for p in older.vectors.get(NS, ids))
        assert UPGRADE in older.vectors.read_meta()["upgraded"]  # type: ignore[index]
        upgraded = [ens.retrieve(q, namespace=NS, now=NOW) for q in questions]
    for a, b, c in zip(written, served, upgraded, strict=True):
        assert [(h.memory.id, h.collapsed, h.superseded_by) for h in a.hits] == \
               [(h.memory.id, h.collapsed, h.superseded_by) for h in b.hits] == \
               [(h.memory.id, h.collapsed, h.superseded_by) for h in c.hits]


def test_a_store_whose_payloads_cannot_be_written_still_answers(tmp_path: Path) -> None:
    """The wording is optional: a store that cannot take it (a read-only key on a server) answers
    from the texts, and no search tries to write it."""
    tag = uuid.uuid4().hex[:8]
    client = QdrantClient(location=":memory:")
    with _server(client) as store:
        store.add(_memories(tag))
        meta = store.vectors.read_meta()
        assert meta is not None
        store.vectors.write_meta({**meta, "upgraded": [u for u in meta["upgraded"] if u != UPGRADE]})
    client.delete_payload("fused_memory", keys=[WORDING], points=[point_id(NS, m.id) for m in _memories(tag)])

    def refused(*_a: object, **_k: object) -> None:
        raise PermissionError("403 forbidden: this key reads only")

    with _server(client) as older:
        older.vectors.set_payload = refused  # type: ignore[method-assign]
        answer = EnsembleMemory(older).retrieve("do I drink coffee in the afternoon?", namespace=NS, now=NOW)
    assert answer.hits and not answer.failures
    assert answer.hits[0].memory.id in {"coffee", "coffee-again"}


def test_an_entry_of_another_version_is_not_read() -> None:
    text = _unique("My badge ID is E-47821")
    entry = {**to_json(read_text(text)), "v": VERSION + 1}
    assert of_payload({"text": text, WORDING: entry}) is None
    assert of_payload({"text": text, WORDING: to_json(read_text(text))}) == read_text(text)
