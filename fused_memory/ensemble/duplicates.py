"""Near-duplicate collapse and maximal marginal relevance: a top k of k distinct memories.

An agent that saves "User prefers green tea" in five sessions (with five ids, or five phrasings)
filled the top 5 with one fact. Two memories of a result are near-duplicates when

* their texts are equal once normalized (`wording.text_key`: case, punctuation and spacing
  ignored), or
* their stored vectors have a cosine of at least `FusionConfig.duplicate_cosine` *and* they say
  the same thing in the same words (`same_content`): the same tokens with a digit ("E-12345",
  "3pm", "v0.9"), the same number of negations ("not", "never", "n't"...), and the same content
  words (`text.tokenize`: stemmed, stopwords out) but for at most one that only one of them has
  ("Note:", "still"). The vectors alone cannot tell "My badge ID is E-12345" from "... E-67890"
  (MiniLM cosine 0.948), "meeting at 3pm" from "at 4pm" (0.925), "... is allergic to peanuts" from
  "... is not allergic..." (0.966) or two people's identical wishes ("victor ivanova wants the
  weekly report on thursday" / "arjun ivanova ... monday": 0.929), and those are different facts,
  not copies. A paraphrase in other words ("Alice likes green tea" for "Alice prefers green tea")
  stays: two memories that may differ in more than a word are both shown.

Near-duplicates are grouped transitively (a ~ b and b ~ c: one group) and each group becomes one
hit, at the place of its best-ranked member, showing its newest member (`candidate.memory_time`;
a memory without a time counts as oldest) with the other ids in `collapsed`. The score and
contributions stay the best-ranked member's: they are what placed the hit.

Why the stored vectors: they are the ones the dense arm searched, read in one round trip
(`source.VectorLookup`), where re-embedding the result's texts with MiniLM would cost more than a
whole query (docs/decisions/0027-near-duplicate-collapse.md). And read only when needed: the words are
compared first, and only the memories of a pair that says the same thing in words (other texts than
equal ones) are read, so most queries read no vector. A store that cannot hand them out collapses
equal texts only. The words, values and negations are those the payload keeps (`backends.wording`,
read when the memory was written), so no candidate's text is read again here.

MMR (off unless `FusionConfig.mmr_lambda` is set) then orders the result by
`lambda * relevance - (1 - lambda) * (highest cosine to a hit already placed)`, relevance being the
fused score over the best one: diversity for results that are merely alike, not copies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from ..backends.wording import Content, content
from .candidate import Candidate, Groups, memory_time

__all__ = ["Content", "VectorRead", "content", "same_content", "alike_pairs", "duplicate_groups", "collapse", "mmr"]


def same_content(a: Content, b: Content) -> bool:
    """Copies, as far as the words tell: the same values and negations, and the same content words
    but for at most one that only one text has (see the module docstring)."""
    return a.values == b.values and a.negations == b.negations and len(a.words ^ b.words) <= 1


def _cosines(candidates: Sequence[Candidate], vectors: Mapping[str, np.ndarray]) -> np.ndarray | None:
    """The candidates' pairwise cosines (a row of zeros for a candidate without a vector)."""
    rows = [vectors.get(c.memory.id) for c in candidates]
    known = [v for v in rows if v is not None]
    if not known:
        return None
    dim = len(known[0])
    zero = np.zeros(dim, dtype=np.float32)
    matrix = np.stack([np.asarray(v, dtype=np.float32) if v is not None and len(v) == dim else zero for v in rows])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T


#: Reads the stored vectors of some memories by id (None: they cannot be had).
VectorRead = Callable[[Sequence[str]], "Mapping[str, np.ndarray] | None"]


def duplicate_groups(candidates: Sequence[Candidate], vectors: Mapping[str, np.ndarray] | VectorRead | None,
                     threshold: float | None) -> list[list[int]]:
    """The groups of near-duplicates (indices into `candidates`, each group in rank order, groups by
    their best member's rank); a candidate without a copy is a group of one. `vectors` are the
    stored vectors by id, or a function that reads them: it is called only when some pair of
    candidates of different texts says the same thing in words (`same_content`), with their ids,
    so most queries read no vector at all."""
    n = len(candidates)
    groups_of = Groups(range(n))

    first: dict[str, int] = {}
    for i, c in enumerate(candidates):
        key = c.wording().key
        if key in first:
            groups_of.join(first[key], i)
        else:
            first[key] = i
    if threshold is not None and vectors is not None and len(first) > 1:
        # one text of each group; the words first (they rule out most pairs), the values and
        # negations only for pairs whose words agree (same answer as `same_content` on every pair)
        read = {i: candidates[i].wording().content for i in first.values()}
        pairs = [(i, j) for i in read for j in read if i < j and len(read[i].words ^ read[j].words) <= 1
                 and same_content(read[i], read[j])]
        for i, j in alike_pairs(candidates, pairs, vectors, threshold):
            groups_of.join(i, j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(groups_of.root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def alike_pairs(candidates: Sequence[Candidate], pairs: Sequence[tuple[int, int]],
                vectors: Mapping[str, np.ndarray] | VectorRead, threshold: float) -> list[tuple[int, int]]:
    """Those of `pairs` (indices into `candidates`) whose stored vectors have a cosine of at least
    `threshold`. The vectors are read once, for the memories of `pairs` only (none when there is
    no pair); a pair missing a vector, or with vectors of two lengths, is not alike."""
    if not pairs:
        return []
    read = vectors(list(dict.fromkeys(candidates[x].memory.id for pair in pairs for x in pair))) \
        if callable(vectors) else vectors
    if not read:
        return []
    unit = {m: v / size if (size := float(np.linalg.norm(v))) > 0 else v for m, v in read.items()}
    out = []
    for i, j in pairs:
        a, b = unit.get(candidates[i].memory.id), unit.get(candidates[j].memory.id)
        if a is not None and b is not None and len(a) == len(b) and float(a @ b) >= threshold:
            out.append((i, j))
    return out


def collapse(candidates: Sequence[Candidate], vectors: Mapping[str, np.ndarray] | VectorRead | None = None,
             threshold: float | None = None) -> list[Candidate]:
    """One candidate per group of near-duplicates, at its best member's place, showing its newest
    member and listing the others (best-ranked first) in `collapsed`."""
    out: list[Candidate] = []
    for group in duplicate_groups(candidates, vectors, threshold):
        best = candidates[group[0]]
        if len(group) == 1:
            out.append(best)
            continue
        newest = min(group, key=lambda i: (-_epoch(candidates[i]), i))
        shown = candidates[newest]
        others = tuple(candidates[i].memory.id for i in group if i != newest)
        out.append(replace(best, memory=shown.memory, collapsed=others,
                           supersedes=shown.supersedes, superseded_by=shown.superseded_by,
                           version_slot=shown.version_slot, older_by_days=shown.older_by_days))
    return out


def _epoch(c: Candidate) -> float:
    when = memory_time(c.memory)
    return when.timestamp() if when is not None else float("-inf")


def mmr(candidates: Sequence[Candidate], vectors: Mapping[str, np.ndarray] | None, lam: float) -> list[Candidate]:
    """The candidates in maximal-marginal-relevance order (see the module docstring); without
    vectors, or with lambda 1, their order as given."""
    sims = _cosines(candidates, vectors) if vectors and lam < 1.0 and len(candidates) > 2 else None
    if sims is None:
        return list(candidates)
    top = max(c.score for c in candidates) or 1.0
    relevance = np.array([c.score / top for c in candidates], dtype=np.float64)
    left = list(range(len(candidates)))
    chosen: list[int] = []
    closest = np.zeros(len(candidates), dtype=np.float64)
    while left:
        gains = [lam * relevance[i] - (1.0 - lam) * closest[i] for i in left]
        pick = left[int(np.argmax(gains))]  # the first of equal gains: the better fused rank
        chosen.append(pick)
        left.remove(pick)
        closest = np.maximum(closest, sims[pick])
    return [candidates[i] for i in chosen]
