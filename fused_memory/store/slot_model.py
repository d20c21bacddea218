"""An optional slot extractor that asks a chat model which fact a memory states (mem0-style).

The rules of `query.slots` key only what they are sure of; a user who wants more keys can hand the
store a LangChain chat model (`MemoryStore.slot_extractor = ChatSlotExtractor(model)`), asked for
each memory written without a predicate for which no rule found a key. The model answers
"<subject> | <slot>" ("user | manager") or "none". Whatever goes wrong - the model raises, takes
longer than `timeout_s`, or answers something that is not a short key - the memory is written
without a derived key and the log says why: a slot key is a ranking aid, never a reason to lose a
write.

No LangChain import here: the model is duck-typed (`invoke(str)` returning a message with
`.content`, or a string), so `import fused_memory` stays free of langchain-core, which is an extra.
"""

from __future__ import annotations

import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigurationError
from ..query.slots import normalize_slot
from ..types import Memory

__all__ = ["SlotExtractor", "ChatSlotExtractor", "PROMPT", "derived_slot"]

log = logging.getLogger(__name__)

PROMPT = (
    "Which fact does this memory state? Answer with the subject and the fact's slot, as "
    "'<subject> | <slot>', using 'user' for the speaker (e.g. 'user | manager', 'Dana | employer', "
    "'user | home city'); answer 'none' when it states no lasting fact.\n\nMemory: {text}"
)
_ANSWER = re.compile(r"^\s*([\w][\w .'-]{0,40}?)\s*\|\s*([\w][\w .'-]{0,40}?)\s*$")


@runtime_checkable
class SlotExtractor(Protocol):
    """Names the slot a memory states, or None. Called by `MemoryStore.add` for memories without a
    predicate that no rule keyed; must not raise (return None instead)."""

    def __call__(self, memory: Memory) -> str | None: ...


class ChatSlotExtractor:
    """A `SlotExtractor` backed by a LangChain chat model (any object with `invoke`)."""

    def __init__(self, model: Any, timeout_s: float = 10.0, prompt: str = PROMPT) -> None:
        if not callable(getattr(model, "invoke", None)):
            raise ConfigurationError(f"ChatSlotExtractor needs a chat model with invoke(), got {type(model).__name__}")
        self.model, self.timeout_s, self.prompt = model, timeout_s, prompt
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def __call__(self, memory: Memory) -> str | None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(2, thread_name_prefix="fused-memory-slot")
            pool = self._pool
        future = pool.submit(self.model.invoke, self.prompt.format(text=memory.text))
        try:
            answer = future.result(timeout=self.timeout_s)
        except FutureTimeout:
            log.warning("slot extractor: no answer within %.1f s for memory %s; written without a derived slot",
                        self.timeout_s, memory.id)
            return None
        except Exception as exc:  # noqa: BLE001 - a failed model call must not cost the write
            log.warning("slot extractor failed for memory %s (%s: %s); written without a derived slot",
                        memory.id, type(exc).__name__, exc)
            return None
        return self.parse(answer, memory.id)

    @staticmethod
    def parse(answer: Any, memory_id: str = "") -> str | None:
        """The key in a model's answer ("user | manager" -> "user manager"), None for "none" or
        anything else (logged)."""
        text = getattr(answer, "content", answer)
        if not isinstance(text, str):
            log.warning("slot extractor answered %r for memory %s; written without a derived slot", text, memory_id)
            return None
        if text.strip().casefold().strip(".") == "none":
            return None
        m = _ANSWER.match(text)
        if m is None:
            log.warning("slot extractor answered %r for memory %s, not '<subject> | <slot>'; written without a "
                        "derived slot", text[:200], memory_id)
            return None
        return normalize_slot(f"{m.group(1)} {m.group(2)}") or None

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def derived_slot(m: Memory, ruled: str | None, extractor: SlotExtractor | None) -> str | None:
    """The slot key derived for `m`: the rules' (`query.slots`), else `extractor`'s when one is
    set; None when the caller gave a predicate (theirs wins). An extractor that raises or returns a
    non-string, against its contract, is logged and costs the memory its key, not its write."""
    if m.predicate is not None and m.predicate.strip():
        return None
    if ruled is not None or extractor is None:
        return ruled
    try:
        found = extractor(m)
    except Exception as exc:  # noqa: BLE001 - a hook that breaks its contract must not cost the write
        log.warning("slot extractor raised for memory %s (%s: %s); written without a derived slot",
                    m.id, type(exc).__name__, exc)
        return None
    if found is not None and not isinstance(found, str):
        log.warning("slot extractor returned %r for memory %s; written without a derived slot", found, m.id)
        return None
    return found
