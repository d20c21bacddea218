"""Memories that change and memories saved again: the synthetic set the stage after fusion is measured on.

Two problems agents have with a memory, and no public dataset to measure them on (LoCoMo's
conversations are read once, its facts rarely change and nothing is saved twice):

* **Facts change.** `changing_facts` gives `slots` facts (where someone lives, works, what role
  they hold, which editor or service version is in use...), each stated 2 to 4 times over the two
  years before `SYNTH_NOW`, in varied words, and a question about its current value per fact
  ("Where does Sarah Chen live now?"). Whether the newest version ranks first is the measure. The
  words vary on purpose: the oldest version is as likely as the newest to share the question's
  words ("lives in" / "live"), so text alone cannot tell them apart. Half the facts carry a
  predicate (the fact's key, "Sarah Chen home city"), as an agent that stores structured memories
  writes them; half do not, as a chat agent's do.
* **Agents repeat themselves.** `repeated_saves` gives `facts` facts, each saved 3 to 6 times in
  separate sessions under new ids, as agents save them: again verbatim, in lower case, with other
  punctuation, or with a "Note:" or "Remember:" in front; and a question per fact.
  The measure is how many distinct facts the top 5 holds (the copies of one fact count once).

Both are mixed into `synth.synth_memories`' corpus (people, projects and events over the same two
years, the same names as these facts' subjects), so each question competes with unrelated and
related memories, recent ones included. Everything is drawn from one seed.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from ..types import Memory, MemoryType
from .synth import SYNTH_NOW, synth_memories

__all__ = ["ChurnQuery", "ChurnSet", "changing_facts", "repeated_saves", "churn_set"]

_CITIES = "Berlin Lisbon Toronto Nairobi Osaka Austin Dublin Madrid Oslo Seoul Lagos Lyon Denver Porto".split()
_ORGS = "Acme Globex Initech Umbrella Hooli Vandelay Cyberdyne Tyrell Soylent Aperture Oscorp Monarch".split()
_ROLES = ("staff engineer", "engineering manager", "product designer", "data analyst", "head of research",
          "solutions architect", "director of sales", "site reliability engineer")
_EDITORS = ("vim", "emacs", "VS Code", "Helix", "Zed", "Sublime Text")
_DRINKS = ("green tea", "black coffee", "oat milk lattes", "sparkling water", "chai", "espresso")
_FOODS = ("ramen", "tacos", "dumplings", "falafel", "pho", "sushi")

#: (kind, version phrasings, current-value questions). {s} subject, {v} value. Each fact's versions
#: are drawn from the phrasings in random order, so no phrasing is tied to the newest.
_SLOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "home": (("{s} lives in {v}.", "{s} moved to {v}.", "{s} relocated to {v} with the family.",
              "{s}'s home is in {v} these days.", "{s} has settled in {v}."),
             ("Where does {s} live now?", "Which city is {s} living in currently?", "Where is {s} based these days?")),
    "employer": (("{s} works at {v}.", "{s} joined {v}.", "{s} took a job at {v}.", "{s} is employed by {v}.",
                  "{s} started a new position at {v}."),
                 ("Where does {s} work now?", "Which company is {s} at currently?",
                  "Who is {s}'s employer these days?")),
    "role": (("{s} is a {v}.", "{s} was promoted to {v}.", "{s}'s title is {v}.", "{s} became {v}.",
              "{s} now works as {v}."),
             ("What is {s}'s current role?", "What does {s} do now?", "What is {s}'s job title at the moment?")),
    "editor": (("{s}'s editor of choice is {v}.", "{s} switched editors to {v}.", "{s} writes all their code in {v}.",
                "{s} moved from their old editor to {v}.", "{v} is {s}'s main editor."),
               ("Which editor does {s} use now?", "What is {s}'s current code editor?",
                "What editor is {s} using these days?")),
    "phone": (("{s}'s phone number is {v}.", "{s} has a new phone number: {v}.", "{s} can be reached at {v}.",
               "{s} changed their number to {v}.", "Call {s} on {v}."),
              ("What is {s}'s phone number now?", "What is {s}'s current phone number?",
               "How do I reach {s} by phone these days?")),
}


@dataclass(frozen=True)
class ChurnQuery:
    """A question of the set: `kind` is "current" (a changing fact: `expected` is its newest version,
    `group` every version) or "repeated" (a fact saved again: `group` all its copies, `expected` the
    newest copy)."""

    text: str
    kind: str
    expected: str
    group: tuple[str, ...]
    keyed: bool = False


@dataclass(frozen=True)
class ChurnSet:
    """Memories (the background corpus, then the set's own) and the questions, all in `namespace`."""

    memories: tuple[Memory, ...]
    queries: tuple[ChurnQuery, ...]
    namespace: str
    now: datetime


def _people(background: list[Memory], rng: random.Random, n: int) -> list[str]:
    """`n` people the background corpus also mentions (the subjects of its "Sarah Chen's badge ID
    is...", "Sarah Chen works on..." and the people of "Met Sarah Chen in..."), so the questions
    compete with their meetings, workshops and badges. Each is the subject of one fact only, and
    none has a background entity memory ("Sarah Chen is a designer at Acme in Oslo"), which states
    a role, an employer and a home of its own and would make the newest version ambiguous."""
    described = {m.entities[0] for m in background if m.type is MemoryType.ENTITY and m.entities}
    names = sorted({m.entities[0] for m in background
                    if m.entities and len(m.entities[0].split()) == 2 and m.entities[0] not in described
                    and (m.text.startswith(m.entities[0]) or m.text.startswith(f"Met {m.entities[0]} "))})
    if len(names) < n:
        raise ValueError(f"the background corpus names {len(names)} people; {n} are needed (give more memories)")
    rng.shuffle(names)
    return names[:n]


def _value(kind: str, rng: random.Random, used: list[str]) -> str:
    pools = {"home": _CITIES, "employer": _ORGS, "role": _ROLES, "editor": _EDITORS}
    if kind == "phone":
        return f"+49 {rng.randint(150, 179)} {rng.randint(1000000, 9999999)}"
    return rng.choice([v for v in pools[kind] if v not in used])


def changing_facts(background: list[Memory], slots: int, *, seed: int = 17, namespace: str = "bench",
                   now: datetime = SYNTH_NOW) -> tuple[list[Memory], list[ChurnQuery]]:
    """`slots` changing facts (2-4 versions each) and a current-value question per fact."""
    rng = random.Random(seed)
    people = _people(background, rng, slots)
    memories: list[Memory] = []
    queries: list[ChurnQuery] = []
    kinds = list(_SLOTS)
    for i in range(slots):
        kind = kinds[i % len(kinds)]
        subject = people[i]
        phrasings, questions = _SLOTS[kind]
        n = rng.randint(2, 4)
        ages = sorted((rng.uniform(5, 700) for _ in range(n)), reverse=True)  # days before now, oldest first
        keyed = i % 2 == 0
        predicate = f"{subject} {kind}" if keyed else None
        used: list[str] = []
        ids = []
        for j, (age, text) in enumerate(zip(ages, rng.sample(phrasings, n), strict=False)):
            value = _value(kind, rng, used)
            used.append(value)
            mid = f"churn-{i}-{j}"
            ids.append(mid)
            memories.append(Memory(text=text.format(s=subject, v=value), namespace=namespace, id=mid,
                                   type=MemoryType.FACT, predicate=predicate,
                                   created_at=now - timedelta(days=age), session_id=f"churn-s{i}-{j}"))
        question = rng.choice(questions).format(s=subject)
        queries.append(ChurnQuery(question, "current", ids[-1], tuple(ids), keyed))
    return memories, queries


#: How an agent saves a fact again: verbatim, in lower case, with other punctuation, with a preamble.
_COPY_STYLES = ("{t}", "{t}", "{lower}", "{bare}!", "Note: {t}", "Remember: {t}")


def repeated_saves(background: list[Memory], facts: int, *, seed: int = 19, namespace: str = "bench",
                   now: datetime = SYNTH_NOW) -> tuple[list[Memory], list[ChurnQuery]]:
    """`facts` facts, each saved 3-6 times (new id, new session, another day) and a question per fact."""
    rng = random.Random(seed)
    people = _people(background, rng, facts)
    memories: list[Memory] = []
    queries: list[ChurnQuery] = []
    for i in range(facts):
        person = people[i]
        pick = i % 3
        if pick == 0:
            drink = rng.choice(_DRINKS)
            text, question = f"{person} prefers {drink} in the morning.", f"What does {person} like to drink?"
        elif pick == 1:
            food = rng.choice(_FOODS)
            text, question = f"{person} is allergic to {food}.", f"What is {person} allergic to?"
        else:
            day = rng.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))
            text = f"{person} wants the weekly report on {day}."
            question = f"When does {person} want the weekly report?"
        n = rng.randint(3, 6)
        ages = sorted((rng.uniform(1, 600) for _ in range(n)), reverse=True)
        ids = []
        for age in ages:
            style = rng.choice(_COPY_STYLES)
            copy = style.format(t=text, lower=text.lower(), bare=text.rstrip("."))
            mid = str(uuid.UUID(int=rng.getrandbits(128)))  # agents key saves by uuid: no upsert folds them
            ids.append(mid)
            memories.append(Memory(text=copy, namespace=namespace, id=mid, type=MemoryType.PREFERENCE if pick != 1
                                   else MemoryType.FACT, created_at=now - timedelta(days=age),
                                   session_id=f"repeat-s{i}-{len(ids)}"))
        queries.append(ChurnQuery(question, "repeated", ids[-1], tuple(ids)))
    return memories, queries


def churn_set(n_background: int = 2000, slots: int = 100, facts: int = 100, *, seed: int = 7,
              namespace: str = "bench") -> ChurnSet:
    """The background corpus (`synth_memories`) with `slots` changing facts and `facts` repeated ones."""
    background = synth_memories(n_background, seed=seed, namespace=namespace)
    changing, current = changing_facts(background, slots, seed=seed + 10, namespace=namespace)
    repeated, again = repeated_saves(background, facts, seed=seed + 12, namespace=namespace)
    return ChurnSet((*background, *changing, *repeated), (*current, *again), namespace, SYNTH_NOW)
