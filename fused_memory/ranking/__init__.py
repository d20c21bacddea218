"""The learned order over the fused candidates: features, the numpy model and the reordering.

At query time this is numpy only (the model is a small JSON file, `ranker.json` shipped here);
training lives in `fused_memory.evaluation.learning` and needs the `[train]` extra.
"""

from .features import FEATURE_GROUPS, FEATURE_NAMES, FEATURE_VERSION, candidate_features, feature_names
from .model import Ranker, default_ranker, load_ranker, parse_ranker
from .order import Learned, applies, learned_order

__all__ = ["FEATURE_GROUPS", "FEATURE_NAMES", "FEATURE_VERSION", "candidate_features", "feature_names", "Ranker",
           "default_ranker", "load_ranker", "parse_ranker", "Learned", "applies", "learned_order"]
