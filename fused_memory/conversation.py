"""Conversation context: index each turn together with the turns just before it.

Why: in a conversation the answer rarely repeats the question. "They were scared but we reassured
them" answers "How did the kids handle the accident?", and a later query asks in the question's
words. Indexing a turn with the preceding turns (`Memory.context`: BM25 at half weight, blended
into the embedding, never returned as text) lets the reply be found by them; two turns of context
beat one, and three or four add nothing (docs/decisions/0009-conversation-context.md).

Only preceding turns are used, never following ones: a store that ingests a conversation as it
happens knows the past of a turn but not its future, and the result must not depend on whether
the conversation was ingested live or in one batch.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from .errors import ConfigurationError
from .types import Memory

__all__ = ["conversation_context", "DEFAULT_CONTEXT_TURNS", "MAX_CONTEXT_CHARS"]

#: Preceding turns indexed with each turn (see the module docstring for the measurements).
DEFAULT_CONTEXT_TURNS = 2
#: Longest context kept, in characters, counted from the turn backwards: the embedder reads only
#: its first 256 word pieces anyway, and BM25 should not let one long monologue flood a reply.
MAX_CONTEXT_CHARS = 2_000


def conversation_context(memories: Iterable[Memory], turns: int = DEFAULT_CONTEXT_TURNS,
                         max_chars: int = MAX_CONTEXT_CHARS) -> list[Memory]:
    """Copies of `memories` whose `context` holds the texts of the `turns` memories before each
    one in the same (namespace, session_id), in the order given (oldest first).

    Memories without a `session_id` are not a conversation and are returned unchanged, as are
    memories whose `context` is already set (the caller knows better); both still count as turns
    for the memories after them. `turns=0` returns the memories unchanged."""
    if not isinstance(turns, int) or isinstance(turns, bool) or turns < 0:
        raise ConfigurationError(f"turns must be an int >= 0, got {turns!r}")
    if not isinstance(max_chars, int) or isinstance(max_chars, bool) or max_chars <= 0:
        raise ConfigurationError(f"max_chars must be an int > 0, got {max_chars!r}")
    history: dict[tuple[str, str], deque[str]] = {}
    out: list[Memory] = []
    for m in memories:
        if m.session_id is None or turns == 0:
            out.append(m)
            continue
        before = history.setdefault((m.namespace, str(m.session_id)), deque(maxlen=turns))
        if m.context is None and before:
            out.append(m.with_(context="\n".join(before)[-max_chars:]))
        else:
            out.append(m)
        before.append(m.text)
    return out
