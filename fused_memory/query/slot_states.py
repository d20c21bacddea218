"""Slot rules for states and labels: "my X is Y", "Y is my X", "new X: Y", "X: Y" opening a note,
"I drive a Y", "X is Y" opening a sentence, "call Name on <number>". Each reads one clause
(`slot_rules.Clause`); the docstring of each says what it reads.
"""

from __future__ import annotations

from .slot_rules import ADVERBS, BE, OPENERS, POSSESSIVE_1, Clause, SlotFact, fact, is_state, noun_phrase
from .slot_vocab import ATTRIBUTES, SYNONYMS, attribute, product_kind

__all__ = ["possessive", "is_my", "new_x", "the_x_is", "label", "drives", "bare", "phone"]

#: Words before "as my X" / "will be my X" that are no one: "week w camila as my boss" names camila.
_NOT_WHO = frozenset("will w with week first day is am was be been work working started start joined me him her "
                     "them it this that".split())


def possessive(c: Clause) -> list[SlotFact]:
    """"my/our X is|are|: Y", "Name's X is Y": X of the user (or of Name). Not a state ("my voice is
    gone", "my knee is killing me": `slot_vocab.STATE_WORDS`), nor "my manager's manager" as the
    manager (the possessive is part of the slot)."""
    words, kinds = c.words, c.kinds
    for i, w in enumerate(words):
        if not (w in POSSESSIVE_1 or (w in ("'s", "'") and i > 0 and kinds[i - 1] == "PERSON")):
            continue
        owner = c.user
        if w not in POSSESSIVE_1:
            j = i - 1
            while j > 0 and kinds[j - 1] == "PERSON":
                j -= 1
            owner = " ".join(words[j:i])
        elif i > 0 and words[i - 1] not in (",", "and", "but", "so", "since", "now", ":", "-", "–") \
                and not (i == 1 and words[0] in ("and", "so", "now", "oh", "btw", "also")):
            lead = [x for x in words[:i] if x not in ADVERBS]
            if lead and not all(k for k in kinds[:i]) and words[0] not in OPENERS:
                continue  # "the reorg made my manager ...": a clause's object, not its subject
        for j in range(i + 2, min(len(words), i + 7)):
            if words[j] in BE or words[j] == ":":
                if words[j] == "'s" and j + 1 < len(words) and words[j + 1] not in ("a", "an", "the"):
                    continue  # "my manager's manager is": the possessive is part of the slot
                noun = noun_phrase(words[i + 1:j], kinds[i + 1:j])
                follow = words[j + 1] if j + 1 < len(words) else ""
                if noun is None or is_state(follow):
                    break
                return [SlotFact(owner, attribute(noun), tuple(v for v in [c.value(j + 1)] if v), (), "possessive")]
    return []


def is_my(c: Clause) -> list[SlotFact]:
    """"Dr. Weber is my GP", "Aylin Demir is my manager as of today", "New GP is Dr Anjali Rao",
    "new wifi: network Eir-7F21", "new semester new locker: 87"."""
    words, kinds = c.words, c.kinds
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("as", "be") and i > 0 and nxt in ("my", "our") and (kinds[i - 1] or words[i - 1] == "will"
                                                                   or words[i - 1].isalpha() and w == "as"):
            noun = noun_phrase(words[i + 2:], [""] * (len(words) - i - 2), limit=2, cut=True)
            who: list[str] = []
            for x in reversed(words[:i - (1 if w == "be" else 0)]):  # the name just before: "camila ferraz will be"
                if not x.isalpha() or x in _NOT_WHO or len(who) == 3:
                    break
                who.insert(0, x)
            if noun and who:  # "first week w camila as my boss", "camila ferraz will be my supervisor"
                return [SlotFact(c.user, attribute(noun), (" ".join(who),), (), "is_my")]
        if w == "over" and i > 1 and words[i - 1] in ("taking", "takes", "took", "taken") and nxt in ("my", "our"):
            noun = noun_phrase(words[i + 2:], [""] * (len(words) - i - 2), limit=2, cut=True)
            who = [x for x, k in zip(words[:i], kinds[:i], strict=False) if k == "PERSON"]
            if noun:  # "prof marcos lima is taking over my IC"
                return [SlotFact(c.user, attribute(noun), (" ".join(who),) if who else (), (), "is_my")]
        if w == "is" and i > 0 and kinds[i - 1] and nxt in ("my", "our"):
            noun = noun_phrase(words[i + 2:], [""] * (len(words) - i - 2), limit=2, cut=True)
            if noun:
                return [SlotFact(c.user, attribute(noun), (" ".join(words[:i]),), (), "is_my")]
        if w == "is" and i > 0 and kinds[i - 1] and nxt == "the" and "now" in words[i + 2:i + 6]:
            rest = [x for x in words[i + 2:] if x not in ("now", ",", ".", "!")]  # "Mrs. Braun is the landlord now"
            noun = noun_phrase(rest, [""] * len(rest), limit=2)
            if noun and len(rest) <= 2:
                return [SlotFact(c.user, attribute(noun), (" ".join(words[:i]),), (), "is_my")]
        if w == "new" and all(x in ("my", "our", "a", "the", "new", "semester", "year", "month", "week", ",")
                              for x in words[:i]):
            end = i + 1
            while end < len(words) and words[end] not in BE and words[end] != ":" and end - i <= 6:
                end += 1
            if end < len(words) and (words[end] in ("is", ":") or words[end] == "'s"):
                head = []
                for x in words[i + 1:end]:  # "New plate after the move:" is the plate
                    if x in ("after", "for", "at", "in", "from", "since", "of"):
                        break
                    head.append(x)
                noun = " ".join(head)
                attr = attribute(noun)
                if attr in ATTRIBUTES or noun in SYNONYMS:
                    subject = c.subject(i - (1 if i > 0 and words[i - 1] in ("a", "my", "our") else 0)) or c.user
                    return [SlotFact(subject, attr, tuple(v for v in [c.value(end + 1)] if v), (), "is_my")]
    return []


def new_x(c: Clause) -> list[SlotFact]:
    """A new value named by its attribute at the end of a clause: "Ran my first half marathon, 21 km,
    new longest run", "got a haircut, new barber" (the value is what the clause said before it)."""
    words = c.words
    for i in range(len(words) - 1, 0, -1):
        if words[i] == "new" and (i == 0 or words[i - 1] in (",", "-", "–", "—", "and", "a", "my", "our")):
            noun = noun_phrase(words[i + 1:], c.kinds[i + 1:], limit=3)
            if noun and len(words) - i - 1 <= 3:
                return [SlotFact(c.user, attribute(noun), (), (), "new_x")]
    return []


def the_x_is(c: Clause) -> list[SlotFact]:
    """"The CTO is Helena Sousa" at a clause start ("Since January, the CTO is ..."): the user's X
    (of their company, their home). Not a state ("the house is sold", "the car is fine")."""
    words = c.words
    start = 0
    if words and words[0] in OPENERS and "," in words[:5]:  # "Since January, the CTO is ..."
        start = words.index(",") + 1
    if start >= len(words) or words[start] != "the":
        return []
    for j in range(start + 2, min(len(words), start + 5)):
        if words[j] in ("is", "are"):
            follow = words[j + 1] if j + 1 < len(words) else ""
            noun = noun_phrase(words[start + 1:j], c.kinds[start + 1:j], limit=3)
            if noun is None or is_state(follow) or follow.endswith("ed"):
                return []
            return [SlotFact(c.user, attribute(noun), tuple(v for v in [c.value(j + 1)] if v), (), "the_x_is")]
    return []


def label(c: Clause) -> list[SlotFact]:
    """A note that opens with an attribute: "bike: RE Classic 350", "wifi: AirFiber_704", "phone
    number: 0176 ...". Only attributes (`slot_vocab.ATTRIBUTES`):
    "note:", "ok decided:" or "sprint planning:" open no slot."""
    words = c.words
    if ":" not in words[:6]:
        return []
    colon = words.index(":")
    head = []
    for w in words[:colon]:  # the head noun: "wifi in the new house:" is the wifi
        if w in ("in", "at", "for", "of", "on", "from", "with"):
            break
        if w not in ("new", "changed", "updated", "current", "my", "our", "the"):
            head.append(w)
    noun = " ".join(head)
    attr = attribute(noun) if noun else ""
    if attr and (attr in ATTRIBUTES or noun in SYNONYMS):
        return [SlotFact(c.user, attr, tuple(v for v in [c.value(colon + 1)] if v), (), "label")]
    return []


def drives(c: Clause) -> list[SlotFact]:
    """"I drive a 2015 Honda Civic", "I now drive a Tesla", "my wife drives a Mini", "riding a
    Vespa these days": a car (or a bike) now. A trip ("drove the Golf to Cornwall") is no fact."""
    for i, w in enumerate(c.words):
        nxt = c.words[i + 1] if i + 1 < len(c.words) else ""
        if w in ("drive", "drives", "driving") and nxt in ("a", "an", "the", "my", "our"):
            value = c.value(i + 1)
            return fact(c, i, "car", [value], rule="drives") if value else []
        if w in ("ride", "rides", "riding") and nxt in ("a", "an", "my") and product_kind(" ".join(c.raw[i + 1:i + 5])):
            return fact(c, i, product_kind(" ".join(c.raw[i + 1:i + 5])) or "bike", [c.value(i + 1)], rule="drives")
    return []


def bare(c: Clause) -> list[SlotFact]:
    """A bare "X is ..." opening a sentence where X is an attribute: "Rent is 1200 euros a month.",
    "Landlord is Gary Petrosky". Only attributes: "Running is not happening" keys nothing."""
    words = c.words
    for j in (1, 2):
        if j < len(words) and words[j] in ("is", "are"):
            noun = " ".join(words[:j])
            attr = attribute(noun)
            if attr not in ATTRIBUTES and noun not in SYNONYMS and attribute(words[j - 1]) in ATTRIBUTES:
                attr = noun  # "Car insurance is with Allianz": a kind of insurance, its own slot
            if any(c.kinds[:j]) and not (noun in ATTRIBUTES or noun in SYNONYMS):
                continue  # a name ("Kestrel is ..."); a lone "landlord" spaCy read as one is a word we know
            follow = words[j + 1] if j + 1 < len(words) else ""
            if (attr in ATTRIBUTES or noun in SYNONYMS or attr == noun and attribute(words[j - 1]) in ATTRIBUTES) \
                    and not is_state(follow):
                return [SlotFact(c.user, attr, tuple(v for v in [c.value(j + 1)] if v), (), "bare")]
    return []


def phone(c: Clause) -> list[SlotFact]:
    """"Call Ines Ivanova on +49 170 ...", "can be reached at 0176 ...": a person's number."""
    words, kinds = c.words, c.kinds
    for i, w in enumerate(words):
        if w == "call" and i + 1 < len(words) and (kinds[i + 1] == "PERSON" or c.raw[i + 1][:1].isupper()):
            j = i + 1  # spaCy may read "Call Ines Ivanova" as one ORG: the capitalized words are the name
            while j < len(words) and (kinds[j] == "PERSON" or c.raw[j][:1].isupper()):
                j += 1
            if j < len(words) and words[j] in ("on", "at") and any(ch.isdigit() for x in words[j + 1:] for ch in x):
                return [SlotFact(" ".join(words[i + 1:j]), "phone number", (), (), "phone")]
        if w == "reached" and i + 1 < len(words) and words[i + 1] in ("at", "on"):
            return fact(c, i, "phone number", [c.value(i + 2)], rule="phone")
    return []


