"""Entity mentions at write time, with the real spaCy pipeline: what a memory links to in the graph."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from fused_memory.store.ingest import EntityExtractor, _capitalizes_names, extract_beside, load_nlp
from fused_memory.store.memory_store import MemoryStore
from fused_memory.types import Memory


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    return EntityExtractor()


@pytest.mark.slow
@pytest.mark.parametrize(("text", "must", "must_not"), [
    # LoCoMo turns on which spaCy's small model read the speaker label and the next word as one PERSON
    # (spaCy glued "Maria: Yep John" whole; the name after the label is lost, as it was before)
    ("Maria: Yep John, a bit of support can make an amazing change.", {"Maria"}, {"Maria: Yep John", "Yep John"}),
    ("Maria: Cool, John! It's inspiring to be around people like that.", {"Maria", "John"}, {"Maria: Cool"}),
    ("Maria: Yep, kindness is key and a little compassion can really turn someone's day around.",
     {"Maria"}, {"Maria: Yep"}),
    # a word that opens an utterance is never part of a name, nor a name of its own
    ("Nate: Woah Joanna, I won an international tournament yesterday!", {"Nate", "Joanna"}, {"Woah Joanna"}),
    ("Joanna: Pets sure do make life better! Glad Max is bringing you lots of joy.", {"Joanna", "Max"},
     {"Glad Max"}),
    ("Tim: Congrats, John! That is huge.", {"Tim"}, {"Congrats"}),
    # names without a label are left as spaCy found them
    ("Told Priya Natarajan about the Berlin office.", {"Priya Natarajan", "Berlin"}, set()),
    ("We flew to Great Britain last May.", {"Great Britain"}, {"Britain"}),
    # a possessive is not part of the name (spaCy keeps it at a sentence start)
    ("Aisha Weber's badge ID is E-94476.", {"Aisha Weber"}, {"Aisha Weber's"}),
    ("Peter Parker's suit was torn.", {"Peter Parker"}, {"Peter Parker's"}),
    # a writer who capitalizes names did not mean the lower-case words spaCy tagged as one
    ("Falcon is a hiring project owned by Ethan Rossi, re stevens meeting june ibm meeting meeting based.",
     {"Falcon", "Ethan Rossi"}, {"stevens meeting", "ibm"}),
    ("I prefer budget reports on Monday mornings, re meeting draft meeting anthony drew river shared women.",
     set(), {"anthony drew river shared women"}),
    # a writer who never capitalizes keeps every span: case says nothing there
    ("met sarah at acme in berlin yesterday", {"sarah", "berlin"}, set()),
])
def test_mentions_are_names_as_written(extractor: EntityExtractor, text: str, must: set[str],
                                        must_not: set[str]) -> None:
    names = {m.name for m in extractor.extract([Memory(text=text, namespace="ns")])[0]}
    assert must <= names, names
    assert not names & must_not and not any(":" in n for n in names), names


@pytest.mark.slow
@pytest.mark.parametrize(("text", "capitalizes"), [
    ("Met Nora Rossi in Osaka.", True),
    ("met nora in osaka. then went home", False),
    ("Met nora. Then went home. So tired!", False),     # sentence starts only
    ("so i said I would go", False),                     # "I" is always capital
    ("i love NYC and john", False),                      # an acronym is no capitalized name
    ("we met at the Hub", True),
    ("Caroline: hey! how are you", False),               # after a label colon: an utterance start
    ("", False),
])
def test_capitalizes_names(text: str, capitalizes: bool) -> None:
    assert _capitalizes_names(load_nlp().make_doc(text)) is capitalizes


# ------------------------------------------------------------------ NER beside the embedding
class _Where(EntityExtractor):
    """The real extractor, noting which thread ran it."""

    def __init__(self, enabled: bool = True) -> None:
        super().__init__(enabled=enabled)
        self.threads: list[str] = []

    def analyze(self, memories):  # type: ignore[no-untyped-def]
        self.threads.append(threading.current_thread().name)
        return super().analyze(memories)


BATCH = [Memory("Told Priya Natarajan about the Berlin office."), Memory("Maria: Cool, John! Nice."),
         Memory("the standup moved to 10am")]


@pytest.mark.slow
def test_ner_runs_on_the_pool_beside_the_work_with_the_same_mentions() -> None:
    alone = EntityExtractor().extract(BATCH)
    where = _Where()
    with ThreadPoolExecutor(1, thread_name_prefix="ner-pool") as pool:
        (mentions, _slots), out = extract_beside(where, BATCH, lambda: threading.current_thread().name, pool)
    assert mentions == alone
    assert where.threads[0].startswith("ner-pool") and out == threading.current_thread().name


def test_without_ner_or_pool_both_run_in_the_caller() -> None:
    for extractor, pool in ((_Where(enabled=False), ThreadPoolExecutor(1)), (_Where(enabled=False), None)):
        (mentions, _slots), _ = extract_beside(extractor, BATCH[1:2], lambda: None, pool)
        assert extractor.threads == [threading.current_thread().name]
        assert [m.name for m in mentions[0]] == ["Maria"]  # the speaker label, without spaCy
        if pool is not None:
            pool.shutdown()


@pytest.mark.slow
def test_a_failed_embedding_waits_for_the_extraction_then_raises() -> None:
    finished = threading.Event()

    class Slow(EntityExtractor):
        def analyze(self, memories):  # type: ignore[no-untyped-def]
            time.sleep(0.2)
            out = super().analyze(memories)
            finished.set()
            return out

    def fail() -> None:
        raise RuntimeError("embedder down")

    with ThreadPoolExecutor(1) as pool, pytest.raises(RuntimeError, match="embedder down"):
        extract_beside(Slow(), BATCH, fail, pool)
    assert finished.is_set()  # not left running behind the caller's back


def test_a_forked_child_gets_its_own_ner_worker(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A child forked after the store's NER worker started inherits the pool but not its thread:
    reusing that pool would hang the child's first add. The child must get a working pool."""
    store = MemoryStore.embedded(str(tmp_path), show_progress=False)  # no I/O until first use
    assert store._ner_pool().submit(lambda: 1).result(timeout=5) == 1  # the parent's worker runs
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if a job on the pool finishes
        try:
            ok = store._ner_pool().submit(lambda: 42).result(timeout=5) == 42
        except BaseException:  # noqa: BLE001 - any failure is a non-zero exit
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    store.close()


@pytest.mark.parametrize(("text", "names"), [
    ("Note: buy milk", []), ("TODO: renew the passport", []), ("Password: hunter2", []),
    ("Reminder: dentist at 3", []), ("Maria: Yep, see you at the shelter", ["Maria"]),
    ("Jon Smith: the studio opens Monday", ["Jon Smith"]),
])
def test_a_leading_label_is_a_speaker_unless_it_labels_a_note(text: str, names: list[str]) -> None:
    """Without spaCy too: "Note:" made an entity "Note"."""
    from fused_memory.types import Memory

    [mentions] = EntityExtractor(enabled=False).extract([Memory(text=text)])
    assert [m.name for m in mentions] == names


@pytest.mark.parametrize(("text", "speaker"), [
    ("Shopping: eggs and milk", None), ("Ideas: a podcast about birds", None),
    ("Customer: I want a refund", None), ("Groceries: oat milk, rye bread", None),
    ("Priya: the build is green again", "Priya"), ("Xu: see you at the stand-up", "Xu"),
    ("Caroline: Hey Mel! Good to see you!", "Caroline"), ("Dr. Alvarez: the filling is on Tuesday", "Dr. Alvarez"),
])
def test_with_spacy_a_label_is_a_speaker_only_if_it_reads_as_a_name(text: str, speaker: str | None) -> None:
    """"Shopping: eggs and milk" made a person "Shopping" (the note-label list cannot hold every
    heading); with NER on, the tagger must read the label as a proper noun. The PERSON kind is the
    speaker rule's: NER alone may still find a name in the text, under its own label."""
    from fused_memory.types import Memory

    [mentions] = EntityExtractor().extract([Memory(text=text)])
    speakers = [m.name for m in mentions if m.kind == "PERSON" and text.startswith(m.name + ":")]
    assert speakers == ([speaker] if speaker else []), mentions
