"""A memory's times come back with the offset they were given, through both vector backends, the
ensemble, both frameworks' retrievers and tools and the LangGraph store, and still sort and
filter by their instant. Saved as `2026-06-01T00:00:00+02:00` ("I moved to Porto in June"), it
came back as `2026-05-31T22:00:00+00:00`, and a model read the June move as May 31. A payload
written before the offset was kept reads back in UTC. Hashing embedder: this is about storage."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from fused_memory import EnsembleMemory, Memory, MemoryStore
from fused_memory.backends.codec import from_payload, to_payload
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import FusedMemoryStore
from langchain_fused_memory import memory_tool as lc_tool
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_tool as li_tool

PORTO = datetime(2026, 6, 1, 0, 0, tzinfo=timezone(timedelta(hours=2)))
NEW_YORK = datetime(2026, 5, 31, 19, 0, tzinfo=timezone(timedelta(hours=-4)))  # 23:00 UTC, after Porto's
NOW = datetime(2026, 6, 20, tzinfo=timezone.utc)


def _seed(store: MemoryStore) -> None:
    store.add([Memory(text="I moved to Porto", namespace="u", event_at=PORTO),
               Memory(text="Dinner in New York with Tom", namespace="u", event_at=NEW_YORK)])


def test_the_store_and_the_ensemble_keep_the_offset(store_factory: Any) -> None:
    store = store_factory()
    _seed(store)
    listed = {m.text: m.event_at for m in store.memories("u")}
    assert listed["I moved to Porto"].isoformat() == "2026-06-01T00:00:00+02:00"
    assert listed["Dinner in New York with Tom"].isoformat() == "2026-05-31T19:00:00-04:00"
    hit = EnsembleMemory(store).retrieve("where did I move?", namespace="u", now=NOW).hits[0]
    assert hit.memory.text == "I moved to Porto" and hit.memory.event_at.isoformat() == "2026-06-01T00:00:00+02:00"
    assert hit.to_json()["memory"]["event_at"] == "2026-06-01T00:00:00+02:00"


def test_they_still_sort_and_filter_by_their_instant(store_factory: Any) -> None:
    store = store_factory()
    _seed(store)
    # "May 31" in UTC holds New York's dinner (23:00 UTC), not the move (22:00 UTC on May 31 too)
    ens = EnsembleMemory(store)
    may31 = ens.retrieve("what did I do on May 31, 2026?", namespace="u", now=NOW)
    assert {h.memory.text for h in may31.hits if any(c.arm == "temporal" for c in h.contributions)} == {
        "I moved to Porto", "Dinner in New York with Tom"}
    assert sorted(m.event_at for m in store.memories("u")) == [PORTO, NEW_YORK]  # by instant: Porto first


def test_both_frameworks_and_their_tools_show_the_offset_given(store_factory: Any) -> None:
    store = store_factory()
    _seed(store)
    doc = LCRetriever(store=store, namespace="u").invoke("where did I move?")[0]
    assert doc.metadata["event_at"] == "2026-06-01T00:00:00+02:00"
    node = LIRetriever(store, namespace="u").retrieve("where did I move?")[0]
    assert node.node.metadata["event_at"] == "2026-06-01T00:00:00+02:00"
    said = lc_tool(LCRetriever(store=store, namespace="u")).invoke({"query": "where did I move?"})
    assert "[event, 2026-06-01T00:00:00+02:00] I moved to Porto" in said
    said = li_tool(LIRetriever(store, namespace="u")).call(input="where did I move?").content
    assert "[event, 2026-06-01T00:00:00+02:00] I moved to Porto" in said
    items = FusedMemoryStore(store).search(("u",), query="where did I move?")
    assert items[0].value["event_at"] == "2026-06-01T00:00:00+02:00"


def test_a_payload_written_before_the_offset_was_kept_reads_in_utc() -> None:
    payload = to_payload(Memory(text="I moved to Porto", namespace="u", event_at=PORTO))
    payload.pop("event_at_iso")
    assert from_payload(payload).event_at.isoformat() == "2026-05-31T22:00:00+00:00"
