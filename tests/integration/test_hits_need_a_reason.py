"""No hit with nothing to show for itself: a memory every arm scored 0 (`dense#3(0.00) k=10 ->
0.0000`: the vector arm returns its whole depth) is not a result, so a small store answers
"badge" with the badge alone, not padded with zero scores. `min_score` is a floor above that, in
`FusionConfig` and per call; the CLI, the tools and both frameworks apply it alike. Hashing
embedder: unrelated texts score 0 by cosine, which is the case under test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fused_memory import ConfigurationError, EnsembleMemory, FusionConfig, Memory, MemoryStore, QueryError
from fused_memory.cli import main
from langchain_fused_memory import EnsembleMemoryRetriever as LCRetriever
from langchain_fused_memory import memory_tool as lc_tool
from llama_index.retrievers.fused_memory import EnsembleMemoryRetriever as LIRetriever
from llama_index.retrievers.fused_memory import memory_tool as li_tool

TEXTS = ["My badge ID is E-47821", "Lunch with Tom at noon", "The payments service leaks memory",
         "I prefer aisle seats"]


@pytest.fixture
def small(store_factory: Any) -> MemoryStore:
    store = store_factory()
    store.add([Memory(text=t, namespace="u") for t in TEXTS])
    return store


def test_a_hit_needs_a_positive_contribution(small: MemoryStore) -> None:
    for optimizer in (True, False):
        result = EnsembleMemory(small, optimizer=optimizer).retrieve("badge", namespace="u", k=10)
        assert [h.memory.text for h in result.hits] == ["My badge ID is E-47821"]
        assert all(h.score > 0 and any(c.contribution > 0 for c in h.contributions) for h in result.hits)
    dense_alone = EnsembleMemory(small).retrieve("badge", namespace="u", k=10, arms=["dense"])
    assert all(h.score > 0 for h in dense_alone.hits) and len(dense_alone.hits) < len(TEXTS)


def test_min_score_is_a_floor_in_the_config_and_per_call(small: MemoryStore) -> None:
    query = "what did I tell Sarah about my badge or the aisle seats?"
    every = EnsembleMemory(small).retrieve(query, namespace="u", k=10)
    assert len(every.hits) >= 2
    floor = (every.hits[0].score + every.hits[1].score) / 2
    floored = EnsembleMemory(small, FusionConfig(min_score=floor)).retrieve(query, namespace="u", k=10)
    assert [h.memory.id for h in floored.hits] == [every.hits[0].memory.id]
    per_call = EnsembleMemory(small).retrieve(query, namespace="u", k=10, min_score=floor)
    assert [h.memory.id for h in per_call.hits] == [every.hits[0].memory.id]
    lowered = EnsembleMemory(small, FusionConfig(min_score=floor)).retrieve(query, namespace="u", k=10, min_score=0)
    assert len(lowered.hits) == len(every.hits)
    with pytest.raises(ConfigurationError, match="min_score"):
        FusionConfig(min_score=-1)
    with pytest.raises(QueryError, match="min_score"):
        EnsembleMemory(small).retrieve(query, namespace="u", min_score="high")


def test_both_frameworks_and_their_tools_apply_min_score_alike(small: MemoryStore) -> None:
    query = "what did I tell Sarah about my badge or the aisle seats?"
    every = EnsembleMemory(small).retrieve(query, namespace="u", k=10)
    floor = (every.hits[0].score + every.hits[1].score) / 2
    top = every.hits[0].memory.text
    assert [d.page_content for d in LCRetriever(store=small, namespace="u", min_score=floor).invoke(query)] == [top]
    assert [d.page_content for d in LCRetriever(store=small, namespace="u").invoke(query, min_score=floor)] == [top]
    assert [n.node.get_content() for n in LIRetriever(small, namespace="u", min_score=floor).retrieve(query)] == [top]
    lc = lc_tool(LCRetriever(store=small, namespace="u", min_score=floor)).invoke({"query": query})
    li = li_tool(LIRetriever(small, namespace="u", min_score=floor)).call(input=query).content
    assert lc == li and lc.count("\n\n") == 0 and top in lc


@pytest.mark.slow
def test_the_cli_applies_min_score(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("".join(json.dumps({"text": t, "namespace": "u"}) + "\n" for t in TEXTS))
    path = str(tmp_path / "store")
    assert main(["ingest", str(notes), "--path", path]) == 0
    capsys.readouterr()
    assert main(["query", "badge E-47821", "--path", path, "--namespace", "u"]) == 0
    assert "My badge ID is E-47821" in capsys.readouterr().out
    assert main(["query", "badge E-47821", "--path", path, "--namespace", "u", "--min-score", "1"]) == 0
    assert capsys.readouterr().out.strip() == ""  # no fused score reaches 1
    assert main(["query", "badge E-47821", "--path", path, "--namespace", "u", "--min-score", "-1"]) == 2
    assert "min_score" in capsys.readouterr().err
