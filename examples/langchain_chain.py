"""An LCEL chain over fused memory: retriever | format | prompt | chat model.

Runs offline: the store is embedded (in a temporary directory unless a path is given), the
embedder is the bundled MiniLM, and the chat model is LangChain's `ParrotFakeChatModel`, which
answers with the prompt it was given, so the output shows exactly which memories reached the model.

    python examples/langchain_chain.py
"""

from __future__ import annotations

import tempfile
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableParallel, RunnablePassthrough

from fused_memory import MemoryStore
from fused_memory.demo import DEMO_NAMESPACE, DEMO_NOW, DEMO_RELATIONS, demo_memories
from langchain_fused_memory import EnsembleMemoryRetriever

__all__ = ["main", "QUESTION"]

QUESTION = "what did I tell Sarah about the Berlin office last week?"

PROMPT = ChatPromptTemplate.from_messages([
    ("system", "You are a helpful assistant with a long-term memory of the user."),
    ("human", "Relevant memories:\n{memories}\n\nQuestion: {question}"),
])


def format_memories(docs: list[Document]) -> str:
    """One line per memory, with its date when it is an event: what a model needs, nothing more."""
    return "\n".join(f"- {d.page_content}" + (f" ({d.metadata['event_at'][:10]})" if d.metadata["event_at"] else "")
                     for d in docs)


def main(path: str | None = None, question: str = QUESTION) -> dict[str, Any]:
    """Build the store, run the chain once, print and return the answer and the retrieved documents."""
    with tempfile.TemporaryDirectory(prefix="fused-memory-example-") as tmp, MemoryStore.embedded(path or tmp) as store:
        store.add(demo_memories())
        for src, rel, dst, kind, confidence in DEMO_RELATIONS:
            store.relate(src, rel, dst, namespace=DEMO_NAMESPACE, kind=kind, confidence=confidence)
        retriever = EnsembleMemoryRetriever(store=store, namespace=DEMO_NAMESPACE, now=DEMO_NOW, k=3)
        retrieve = RunnableParallel(docs=retriever, question=RunnablePassthrough())
        answer = (
            {"memories": lambda x: format_memories(x["docs"]), "question": lambda x: x["question"]}
            | PROMPT | ParrotFakeChatModel() | StrOutputParser()
        )
        chain = retrieve.assign(answer=answer)
        result = chain.invoke(question)
    print(result["answer"])
    print("\nwhy these memories:")
    for d in result["docs"]:
        print(f"  {d.metadata['rank']}. {d.metadata['explain']}")
    return result


if __name__ == "__main__":
    main()
