"""Synthetic but realistic memories and queries for `fused-memory bench`.

Why synthetic: the bench must run at 100k memories on any machine, offline, reproducibly, and no
public conversational corpus is that large. What makes it realistic enough to time honestly:

* mixed types (facts, preferences, events, entity definitions) in roughly the proportions an
  assistant accumulates, so type filters and the temporal arm see realistic selectivity;
* event dates spread over two years before `now`, so time windows select a realistic slice;
* a Zipfian vocabulary (a few words everywhere, most rare) of ~21k real English words, as in real
  text: this is what decides BM25 candidate-set sizes, hence lexical latency;
* identifiers (badge ids, tickets, versions, hosts), the exact-match lookups BM25 exists for;
* entity mentions with Zipfian popularity, so the graph has hubs (a few people in thousands of
  memories) as real ones do.

Everything comes from one seeded `random.Random`: the same seed gives the same corpus.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from itertools import accumulate

from ..errors import FusedMemoryError
from ..types import Memory, MemoryType

__all__ = ["SYNTH_NOW", "SynthQuery", "Zipf", "synth_memories", "synth_queries", "simple_queries", "shape_queries",
           "SHAPES"]

#: "Today" for the synthetic corpus: events lie in the two years before it.
SYNTH_NOW = datetime(2025, 6, 30, 12, 0, tzinfo=timezone.utc)

_FIRST = ("Sarah Tom Priya Wei Lucas Amara Diego Hannah Kenji Fatima Oliver Mei Jonas Aisha Mateo Nora Ravi "
          "Elena Samuel Yuki Omar Clara Felix Ingrid Kwame Lena Marco Sofia Arjun Chloe Hugo Leila Daniel "
          "Zara Ethan Maya Noah Ines Victor Grace").split()
_LAST = ("Chen Novak Okafor Schmidt Patel Garcia Kim Rossi Dubois Nakamura Silva Haddad Johansson Kowalski "
         "Murphy Tanaka Costa Fischer Ahmed Larsen Moreau Ivanova Brennan Lopez Weber").split()
_ORGS = ("Acme,Globex,Initech,Umbrella,Hooli,Vandelay,Stark,Wayne,Cyberdyne,Tyrell,Soylent,Wonka,Aperture,"
         "Massive Dynamic,Oscorp,Gringotts,Monarch,Nakatomi,Pied Piper").split(",")
_PROJECTS = ("Kestrel Falcon Osprey Heron Lynx Badger Otter Marten Condor Ibis Puffin Tern Wren Finch Raven "
             "Sparrow Egret Plover Swift Merlin").split()
_CITIES = ("Berlin Lisbon Toronto Nairobi Osaka Austin Dublin Madrid Oslo Seoul Lagos Lyon Denver Porto "
           "Krakow Auckland").split()
_ROLES = ("engineer designer manager recruiter analyst researcher director consultant architect "
          "product owner").split()
_TOPICS = ("budget roadmap hiring migration launch outage security audit pricing onboarding analytics "
           "billing search caching latency retention compliance reporting backups forecast").split()
_FOODS = "sushi ramen tacos pasta curry dumplings falafel pho salad pizza".split()
_TOOLS = (("editor", ("vim", "emacs", "vscode", "helix")), ("shell", ("zsh", "bash", "fish")),
          ("browser", ("firefox", "chrome", "safari")), ("theme", ("dark mode", "light mode")))
_WORDS = ("meeting notes draft review plan team client deadline design schedule invoice contract "
          "feedback release sprint ticket server database cluster dashboard metric alert report "
          "call email document slide spreadsheet proposal estimate summary question answer issue "
          "bug fix patch deploy rollback config secret token password account profile laptop phone "
          "office travel flight hotel train dinner lunch coffee gym doctor dentist birthday gift "
          "weekend holiday vacation conference workshop talk paper book course lesson").split()
_SYLLABLES = "ka lo mi ren tor va sel dun pi gar fen shi bor quo zan el mor tin ca rud".split()
_MONTHS = ("January February March April May June July August September October November "
           "December").split()


def _english_words(rng: random.Random, skip_function_words: int = 150) -> list[str]:
    """~21k real English words in rough frequency order: the word pieces of MiniLM's WordPiece
    vocabulary (shipped with the default embedder) that are whole lower-case words. Real words
    matter: spaCy's NER tags made-up words as names, which would flood the graph with junk entities.
    Falls back to pronounceable pseudo-words if the tokenizer file is not installed."""
    try:
        import json

        from ..embeddings.minilm import default_tokenizer_path

        path = default_tokenizer_path()
        vocab: dict[str, int] = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
        words = [w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1])
                 if w.isascii() and w.isalpha() and w.islower() and len(w) >= 3]
        if len(words) > 5_000:
            return words[skip_function_words:]
    except (ImportError, OSError, KeyError, ValueError, FusedMemoryError):
        pass
    tail: dict[str, None] = {}
    while len(tail) < 20_000:
        tail["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(tail)


class Zipf:
    """Draws items with probability proportional to 1 / rank**s (rank 1 = first item)."""

    def __init__(self, items: list[str], rng: random.Random, s: float = 1.07) -> None:
        self.items, self.rng = items, rng
        self.cum = list(accumulate(1.0 / (r ** s) for r in range(1, len(items) + 1)))

    def draw(self, count: int = 1) -> list[str]:
        return self.rng.choices(self.items, cum_weights=self.cum, k=count)

    def one(self) -> str:
        return self.draw(1)[0]


@dataclass(frozen=True)
class SynthQuery:
    """A bench query. `kind` says what it exercises (identifier, entity, temporal, preference,
    simple; the shapes `time`, `identifier_only`, `name`); `target` is the memory it was built from
    (None for pure time queries)."""

    text: str
    kind: str
    target: str | None = None
    #: Every memory that answers the query as well as `target` does, for the queries that ask for a
    #: set: the window's events ("what happened yesterday?", empty when the window holds none), the
    #: memories holding an identifier or naming a person. None: `target` alone.
    relevant: frozenset[str] | None = None

    def answers(self) -> frozenset[str]:
        """The memories that answer the query (`relevant`, else the target)."""
        if self.relevant is not None:
            return self.relevant
        return frozenset({self.target}) if self.target else frozenset()


class _World:
    """The corpus's entities and vocabulary, drawn once from the seed."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        people = [f"{f} {last}" for f in _FIRST for last in _LAST]
        rng.shuffle(people)
        self.people = Zipf(people[:400], rng, 1.0)
        self.orgs = Zipf(list(_ORGS), rng, 1.0)
        self.projects = Zipf(list(_PROJECTS), rng, 1.0)
        self.cities = Zipf(list(_CITIES), rng, 1.0)
        self.topics = Zipf(list(_TOPICS), rng, 1.0)
        self.words = Zipf(list(dict.fromkeys([*_WORDS, *_english_words(rng)])), rng, 1.07)

    def ident(self, kind: str) -> str:
        r = self.rng
        if kind == "badge":
            return f"E-{r.randint(10000, 99999)}"
        if kind == "ticket":
            return f"JIRA-{r.randint(100, 9999)}"
        if kind == "version":
            return f"v{r.randint(1, 9)}.{r.randint(0, 20)}.{r.randint(0, 30)}"
        return f"{r.choice(('db', 'api', 'web', 'cache'))}-{r.randint(1, 40):02d}.prod"

    def detail(self) -> str:
        return " ".join(self.words.draw(self.rng.randint(3, 12)))


def _memory(world: _World, i: int, namespace: str, now: datetime) -> Memory:
    r = world.rng
    p, org, proj, city, topic = (world.people.one(), world.orgs.one(), world.projects.one(),
                                 world.cities.one(), world.topics.one())
    created = now - timedelta(seconds=r.randint(0, 730 * 86400))
    roll = r.random()
    ents: tuple[str, ...]
    event_at = None
    if roll < 0.35:
        mtype = MemoryType.FACT
        pick = r.randrange(4)
        if pick == 0:
            text, ents = f"{p}'s badge ID is {world.ident('badge')}.", (p,)
        elif pick == 1:
            text, ents = f"The {proj} service runs on {world.ident('host')} at {world.ident('version')}.", (proj,)
        elif pick == 2:
            text, ents = f"Ticket {world.ident('ticket')} tracks the {topic} issue in {proj}.", (proj,)
        else:
            text, ents = f"{p} works on the {proj} team at {org}.", (p, proj, org)
        predicate = None
    elif roll < 0.55:
        mtype = MemoryType.PREFERENCE
        pick = r.randrange(3)
        if pick == 0:
            kind, options = r.choice(_TOOLS)
            text, ents = f"My default {kind} is {r.choice(options)}.", ()
        elif pick == 1:
            a, b = r.sample(_FOODS, 2)
            text, ents = f"{p} likes {a} but hates {b}.", (p,)
        else:
            text, ents = f"I prefer {topic} reports on {r.choice(('Monday', 'Friday'))} mornings.", ()
        predicate = None
    elif roll < 0.85:
        mtype = MemoryType.EVENT
        event_at = created
        pick = r.randrange(3)
        if pick == 0:
            text, ents = f"Met {p} in {city} to discuss the {topic}.", (p, city)
        elif pick == 1:
            version, ticket = world.ident("version"), world.ident("ticket")
            text, ents = f"Deployed {proj} {version} to production, ticket {ticket}.", (proj,)
        else:
            text, ents = f"Attended the {org} {topic} workshop with {p}.", (org, p)
        predicate = None
    else:
        mtype = MemoryType.ENTITY
        pick = r.randrange(2)
        if pick == 0:
            text, ents = f"{p} is a {r.choice(_ROLES)} at {org} in {city}.", (p, org, city)
            predicate = f"{p} role"
        else:
            text, ents = f"{proj} is a {topic} project owned by {p}.", (proj, p)
            predicate = f"{proj} owner"
    text = f"{text[:-1]}, re {world.detail()}."
    return Memory(text=text, namespace=namespace, type=mtype, id=f"syn-{i}", predicate=predicate,
                  event_at=event_at, created_at=created, entities=ents, session_id=f"s{i // 40}")


def synth_memories(n: int, *, seed: int = 7, namespace: str = "bench",
                   now: datetime = SYNTH_NOW, namespaces: Sequence[str] = ()) -> list[Memory]:
    """`n` memories in one namespace, reproducible from `seed`; with `namespaces`, memory i goes to
    `namespaces[i % len(namespaces)]` instead (a store of many users, for the scale bench). The
    namespace draws nothing from the seed, so memory i has the same text whatever the namespaces,
    and the first n memories of a larger corpus are the corpus of n (a vectors file made once for
    1M serves every smaller n)."""
    world = _World(random.Random(seed))
    names = tuple(namespaces) or (namespace,)
    return [_memory(world, i, names[i % len(names)], now) for i in range(n)]


def synth_queries(memories: list[Memory], count: int, *, seed: int = 11) -> list[SynthQuery]:
    """A mixed query set the way agents ask: identifier lookups, entity questions, time questions,
    preference questions and plain topical ones, in fixed proportions."""
    rng = random.Random(seed)
    out: list[SynthQuery] = []
    kinds = ("identifier", "entity", "temporal", "preference", "simple")
    for i in range(count):
        kind = kinds[i % len(kinds)]
        m = rng.choice(memories)
        words = [w.strip(".,") for w in m.text.split()]
        if kind == "identifier":
            ids = [w for w in words if any(c.isdigit() for c in w)]
            text = (f"what was {rng.choice(ids)} about?" if ids
                    else f"what do I know about {m.entities[0] if m.entities else words[-1]}?")
        elif kind == "entity":
            text = f"tell me about {m.entities[0]}" if m.entities else f"who is {words[0]}?"
        elif kind == "temporal":
            month = rng.choice(_MONTHS)
            text = rng.choice((f"who did I meet in {month}?", "what happened last week?",
                               "what did we deploy a few months ago?", "what did I do recently?"))
        elif kind == "preference":
            text = rng.choice(("what editor do I prefer?", "which shell do I like?", "what food do I like?",
                               "my default theme setting"))
        else:
            text = " ".join(rng.sample(words[-8:], min(4, len(words[-8:]))))
        out.append(SynthQuery(text, kind, m.id))
    return out


def simple_queries(memories: list[Memory], count: int, *, seed: int = 13) -> list[SynthQuery]:
    """Plain topical queries (a few lower-case words of a memory's detail: no entity, no time cue,
    no type trigger), where the optimizer should skip the graph, temporal and type arms."""
    rng = random.Random(seed)
    out: list[SynthQuery] = []
    for _ in range(count):
        m = rng.choice(memories)
        tail = m.text.rsplit(".", 2)[-2].split()
        words = [w.lower() for w in (t.strip(".,") for t in tail) if w.isalpha() and len(w) >= 4]
        out.append(SynthQuery(" ".join(rng.sample(words, min(3, len(words)))) or "notes", "simple", m.id))
    return out


#: The seed's simple queries, by shape: a time alone, identifiers alone, a name alone.
SHAPES = ("time", "identifier_only", "name")
#: Mostly the day of one of the corpus's events, so that windows vary; a few relative ones as well.
_TIME_PHRASES = ("what happened on {date}?", "anything from {date}?", "what did I do on {date}?",
                 "what happened in {month}?", "what happened on {date}?", "anything from {date}?",
                 "what happened yesterday?", "anything from last week?", "what did I do last Tuesday?")
_ID_FORMS = ("{id}", "what was {id} about?", "{id} details")
_NAME_FORMS = ("{name}", "{name}", "tell me about {name}", "who is {name}?")


def shape_queries(memories: list[Memory], count: int, *, seed: int = 17, now: datetime = SYNTH_NOW
                  ) -> list[SynthQuery]:
    """`count` queries of the shapes a query optimizer can answer without embedding the query, in
    turn: only a time (its `relevant` memories are the window's events, as the query parser reads
    the window), only an identifier (the memories holding it) and only a person's name (the
    memories naming them). Each is built from a memory of the corpus (`target`)."""
    from ..query.temporal import parse_time
    from ..text import identifiers

    rng = random.Random(seed)
    events = sorted((m.event_at, m.id) for m in memories if m.type is MemoryType.EVENT and m.event_at is not None)
    holding: dict[str, set[str]] = {}
    with_ids: list[tuple[Memory, list[str]]] = []
    for m in memories:
        found = identifiers(m.text)
        if found:
            with_ids.append((m, found))
            for ident in found:
                holding.setdefault(ident, set()).add(m.id)
    people = [m for m in memories if m.entities and " " in m.entities[0] and m.entities[0] in m.text]
    naming: dict[str, set[str]] = {}
    for m in memories:  # a person's name is in the text of every memory whose entities list it
        for name in m.entities:
            naming.setdefault(name, set()).add(m.id)
    out: list[SynthQuery] = []
    for i in range(count):
        shape = SHAPES[i % len(SHAPES)]
        if shape == "time" and events:
            at, target = rng.choice(events)
            text = rng.choice(_TIME_PHRASES).format(date=f"{_MONTHS[at.month - 1]} {at.day}, {at.year}",
                                                    month=f"{_MONTHS[at.month - 1]} {at.year}")
            match = parse_time(text, now)
            window = match.window if match is not None else None
            inside = frozenset(mid for t, mid in events if window is not None and window.start <= t <= window.end)
            out.append(SynthQuery(text, shape, target, inside))
        elif shape == "identifier_only" and with_ids:
            m, found = rng.choice(with_ids)
            ident = rng.choice(found)
            out.append(SynthQuery(rng.choice(_ID_FORMS).format(id=ident), shape, m.id, frozenset(holding[ident])))
        elif people:
            m = rng.choice(people)
            name = m.entities[0]
            out.append(SynthQuery(rng.choice(_NAME_FORMS).format(name=name), "name", m.id, frozenset(naming[name])))
    return out
