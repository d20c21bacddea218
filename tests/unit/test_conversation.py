"""conversation_context: which preceding turns a turn is indexed with, table-driven."""

from __future__ import annotations

import pytest

from fused_memory import ConfigurationError, InvalidMemory, Memory, conversation_context


def turn(text: str, session: str | None = "s1", ns: str = "alice", context: str | None = None) -> Memory:
    return Memory(text=text, namespace=ns, session_id=session, context=context)


@pytest.mark.parametrize("memories, turns, expected", [
    # two turns of context: the first turn has none, then a sliding window, oldest first
    ([turn("a"), turn("b"), turn("c"), turn("d")], 2, [None, "a", "a\nb", "b\nc"]),
    ([turn("a"), turn("b"), turn("c")], 1, [None, "a", "b"]),
    ([turn("a"), turn("b")], 0, [None, None]),
    # sessions and namespaces do not bleed into each other
    ([turn("a", "s1"), turn("x", "s2"), turn("b", "s1"), turn("y", "s2")], 2, [None, None, "a", "x"]),
    ([turn("a", ns="alice"), turn("b", ns="bob"), turn("c", ns="alice")], 2, [None, None, "a"]),
    # no session: not a conversation, left alone and not a turn of any session
    ([turn("a", None), turn("b", None), turn("c")], 2, [None, None, None]),
    # a caller-given context wins, and that turn still counts for the next one
    ([turn("a"), turn("b", context="given"), turn("c")], 2, [None, "given", "a\nb"]),
])
def test_context_is_the_preceding_turns_of_the_same_session(memories, turns, expected) -> None:
    assert [m.context for m in conversation_context(memories, turns)] == expected


def test_texts_ids_and_order_are_unchanged() -> None:
    memories = [turn("first"), turn("second"), turn("third")]
    out = conversation_context(memories)
    assert [(m.id, m.text) for m in out] == [(m.id, m.text) for m in memories]


def test_context_is_capped_from_the_turn_backwards() -> None:
    out = conversation_context([turn("x" * 50 + "END"), turn("reply")], 1, max_chars=10)
    assert out[1].context == "xxxxxxxEND"


@pytest.mark.parametrize("kwargs", [{"turns": -1}, {"turns": 1.5}, {"turns": True}, {"max_chars": 0}])
def test_bad_arguments_are_refused(kwargs) -> None:
    with pytest.raises(ConfigurationError):
        conversation_context([turn("a")], **kwargs)


@pytest.mark.parametrize("context, error", [(42, "must be a string"), ("a\x00b", "NUL"),
                                            ("x" * (Memory.MAX_TEXT + 1), "limit")])
def test_bad_context_is_refused(context, error) -> None:
    with pytest.raises(InvalidMemory, match=error):
        Memory(text="reply", context=context)


def test_context_is_not_part_of_the_identity_or_text() -> None:
    plain, with_context = Memory(text="reply"), Memory(text="reply", context="the question")
    assert plain.id == with_context.id
    assert Memory(text="reply", context="   ").context is None
    assert with_context.to_json()["context"] == "the question"
    assert with_context.to_json()["text"] == "reply"
