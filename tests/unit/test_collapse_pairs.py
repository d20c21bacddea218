"""Collapse compares words before values and negations: the groups are those of `same_content` on
every pair (the definition), whatever the order the checks run in."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fused_memory.ensemble.candidate import Candidate
from fused_memory.ensemble.duplicates import content, duplicate_groups, same_content
from fused_memory.types import Memory

WORDS = ["badge", "meeting", "green", "tea", "report", "thursday", "alice", "prefers", "likes", "office"]
EXTRAS = ["", " not", " never", " E-12345", " E-67890", " at 3pm", " at 4pm", " still", " v0.9", " don't"]


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    base = [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(4)]
    out = []
    for _ in range(n):
        words = rng.choice(base).split()
        if rng.random() < 0.4:  # one word more or less: copies as far as the words tell
            words = words[:-1] if rng.random() < 0.5 else [*words, rng.choice(WORDS)]
        out.append(" ".join(words) + rng.choice(EXTRAS) + rng.choice(["", ".", "!"]))
    return out


def _reference(texts: Sequence[str]) -> list[list[int]]:
    """Union-find over every pair that `same_content` joins or that has equal texts."""
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    said = [content(t) for t in texts]
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            if texts[i] == texts[j] or same_content(said[i], said[j]):
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(texts)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


@pytest.mark.parametrize("seed", range(8))
def test_groups_are_same_content_on_every_pair(seed: int) -> None:
    texts = _texts(seed, 14)
    candidates = [Candidate(Memory(t, namespace="ns", id=f"m{i}"), 1.0 - i / 100, ()) for i, t in enumerate(texts)]
    same_vector = {f"m{i}": np.ones(4, dtype=np.float32) for i in range(len(texts))}  # cosine 1: words decide
    groups = duplicate_groups(candidates, same_vector, 0.9)
    assert groups == _reference(texts)
    assert any(len(g) > 1 for g in groups) and len(groups) > 1  # copies and distinct facts both


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab1 9-.:/_é٣²x'"), max_size=40) | st.text(max_size=40))
def test_a_texts_values_are_its_tokens_with_a_digit_as_first_written(text: str) -> None:
    """The values pattern starts only where a run of letters and digits holding a digit starts;
    it finds what the first pattern (which tried every position) found, on any text."""
    first = re.compile(r"[^\W_]*\d[^\W_]*(?:[-.:/][^\W_]+)*")
    folded = text.casefold().replace("\u2019", "'")
    assert content(text).values == frozenset(v for v in first.findall(folded) if any(ch.isdigit() for ch in v))
