"""Slot rules for changes written as events: moving house, jobs, roles, managers, things bought and
sold, switching, amounts that changed, renaming. Each reads one clause (`slot_rules.Clause`); the
docstring of each says what it reads, with its examples (`slots.SLOT_RULES` lists them with the keys
they give).
"""

from __future__ import annotations

from .slot_rules import DETERMINERS, Clause, SlotFact, fact
from .slot_vocab import ATTRIBUTES, STATE_WORDS, SYNONYMS, attribute, product_kind

__all__ = ["moved", "lives", "employer", "role", "manager", "possession", "switched", "amount", "renamed", "dropped",
           "habit"]

_MOVE = ("moved", "move", "moving", "relocated", "relocating", "relocate")
#: Where a team moves that is no home: "we relocated to the Riverside campus" moves the office.
_WORKPLACES = frozenset("office offices campus building headquarters hq floor site plant warehouse".split())
_MOVE_OVER = frozenset({"back", "over", "house", "home", "out", "in", "here", "there", "finally", "all"})


def moved(c: Clause) -> list[SlotFact]:
    """Moving house: "we moved from York to Bristol" (old York, new Bristol), "relocated to Pune",
    "moved into a flat in Leith", "moved out of the Brooklyn place". Not "moved the meeting to Friday"
    (an object between the verb and "to"), nor "moved my account to AIB" (`_switched`)."""
    for i, w in enumerate(c.words):
        if w not in _MOVE:
            continue
        j = i + 1
        while j < len(c.words) and c.words[j] in _MOVE_OVER - {"out", "in"}:
            j += 1
        nxt = c.words[j] if j < len(c.words) else ""
        old = new = None
        if nxt == "from":
            old = c.value(j + 1)
            to = c.find("to", start=j + 1)
            new = c.value(to + 1) if to > 0 else None
        elif nxt in ("to", "into"):
            new = c.value(j + 1)
        elif nxt == "out" and j + 1 < len(c.words) and c.words[j + 1] == "of":
            old = c.value(j + 2)
            into = c.find("into", "to", start=j + 2)
            new = c.value(into + 1) if into > 0 else None
        elif nxt == "in" and j + 1 < len(c.words) and c.words[j + 1] in ("with", "to"):
            new = c.value(j + 2)
        else:
            continue
        if new in ("the meeting", "friday") or not (old or new):
            continue
        if any(x in _WORKPLACES for x in (new or "").split()):  # "relocated to the Riverside campus"
            return fact(c, i, "office", [new], [old], "moved")
        return fact(c, i, "home", [new], [old], "moved")
    return []


def lives(c: Clause) -> list[SlotFact]:
    """Where someone lives: "I live in Lisbon", "now living in Amsterdam", "based in Leeds",
    "got the keys to the new flat in Leith", "we're in Jersey City now"."""
    for i, w in enumerate(c.words):
        nxt = c.words[i + 1] if i + 1 < len(c.words) else ""
        if w in ("live", "lives", "living", "based", "settled") and nxt == "in":
            return fact(c, i, "home", [c.value(i + 2)], rule="lives")
        if w == "keys" and nxt == "to":
            place = c.find("in", start=i + 2)
            return fact(c, max(0, c.find("got", "get", "picked") if c.find("got", "get", "picked") >= 0 else i), "home",
                         [c.value(place + 1) if place > 0 else c.value(i + 2)], rule="lives")
        if w in ("'re", "are") and i > 0 and c.words[i - 1] == "we" and nxt == "in" and "now" in c.words[i:]:
            return fact(c, i - 1, "home", [c.value(i + 2)], rule="lives")
    return []


_JOIN = ("joined", "join", "joining")
_START = ("started", "starting", "start", "begin", "began")
_WORK = ("work", "works", "working")
_LEAVE = ("left", "quit", "quitting", "leaving", "leave")
_JOBS = frozenset("job internship position role placement apprenticeship residency contract".split())
_JOB_LEAD = frozenset({"a", "an", "my", "the", "new"})
_ROLE_NOUNS = frozenset("choir club society team gym band orchestra group class league".split())


def employer(c: Clause) -> list[SlotFact]:
    """Jobs: "joined Hooli", "left Initech and joined Hooli" (old Initech), "left Initech for Hooli",
    "first day at Kiezkraft", "started at Zalando as a designer" (and the role), "got the job at the
    Uniklinik", "works at Spotify", "employed by", "quit Initech", "handed in my notice at Zalando".
    Joining a choir or a club is joining that ("joined the Kinsale Choral Society" keys "choir"...
    only when the name says so: else a named organization is an employer)."""
    words = c.words
    new = old = role = None
    at = -1
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _JOIN and nxt not in ("us", "me", "them", "in", "the call", "forces"):
            named = i + 1 < len(words) and (c.kinds[i + 1] == "ORG" or c.raw[i + 1][:1].isupper()
                                            or (nxt == "the" and i + 2 < len(words) and c.raw[i + 2][:1].isupper()))
            if named:
                new, at = c.value(i + 1), i if at < 0 else at
        elif w in _START and nxt in ("at", "with") \
                or (w == "day" and i > 0 and words[i - 1] == "first" and nxt == "at"):
            new, at = c.value(i + 2), i if at < 0 else at
        elif w in _START and nxt in _JOB_LEAD | _JOBS or w in _JOBS and nxt in ("at", "with"):
            k = c.find("at", "with", start=i + 1)
            if 0 < k <= i + 4 and all(x in _JOB_LEAD | _JOBS for x in words[i + 1:k]):
                new, at = c.value(k + 1), i if at < 0 else at
        elif (w in ("job", "position", "role") and nxt in ("at", "with") and i + 2 < len(words)
              or w in _WORK and nxt in ("at", "for") or w in ("employed", "hired") and nxt in ("by", "at")):
            new, at = c.value(i + 2), i if at < 0 else at
        elif w in _LEAVE and i + 1 < len(words) and (c.kinds[i + 1] == "ORG" or c.raw[i + 1][:1].isupper()):
            old, at = c.value(i + 1), i if at < 0 else at
            for_ = c.find("for", start=i + 2)
            if for_ > 0 and new is None and (c.raw[for_ + 1][:1].isupper() if for_ + 1 < len(words) else False):
                new = c.value(for_ + 1)
        elif w == "notice" and nxt == "at":  # "gave notice at", "handed in my notice at"
            verb = next((k for k in range(i - 1, max(-1, i - 5), -1) if words[k] in ("gave", "handed", "give", "hand",
                                                                                      "put", "handing", "giving")), i)
            old, at = c.value(i + 2), verb if at < 0 else at
        if w == "as" and at >= 0 and i > at and role is None:
            role = c.value(i + 1, limit=4)
    if at < 0 or not (new or old):
        return []
    noun = next((n for n in (new or "").split() if n in _ROLE_NOUNS), None)
    attr = "choir" if noun in ("choir", "society") else noun or "employer"
    out = fact(c, at if words[at] not in ("day",) else max(0, at - 1), attr, [new], [old], "employer")
    if role and out:
        out.append(SlotFact(out[0].subject, "role", (role,), (), "employer"))
    return out


def role(c: Clause) -> list[SlotFact]:
    """Job titles: "promoted to Lead Designer", "became engineering manager", "I'm an ER nurse",
    "Yuki Kowalski is a site reliability engineer"."""
    words = c.words
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w == "promoted" and nxt == "to":
            return fact(c, i, "role", [c.value(i + 2, 4)], rule="role")
        if w == "promoted" and i + 1 == len([x for x in words if x.isalnum()]) or w == "promoted" and not nxt:
            return fact(c, max(0, i - 1) if i and words[i - 1] in ("got", "was", "been", "get") else i, "role",
                        rule="role")  # "Got promoted!! Lead Designer at ...": the title follows, unread
        if w in ("became", "become", "becomes") and nxt in ("a", "an", "the") or w == "became" and nxt.isalpha():
            value = c.value(i + 1, 4)
            if value and value.split()[0] not in STATE_WORDS:
                return fact(c, i, "role", [value], rule="role")
        if w in ("'m", "am", "is") and nxt in ("a", "an") and i + 2 < len(words) \
                and words[i + 2] not in STATE_WORDS | {"lot", "bit", "little", "few", "fan", "member", "part", "mess",
                                                       "day", "week", "year", "month", "chance", "pain", "nightmare"}:
            lead = words[:i]
            if w == "is" and lead and all(k == "PERSON" for k in c.kinds[:i]):
                return [SlotFact(" ".join(lead), "role", tuple(v for v in [c.value(i + 1, 4)] if v), (), "role")]
            if w != "is" and lead in (["i"], []):
                return [SlotFact(c.user, "role", tuple(v for v in [c.value(i + 1, 4)] if v), (), "role")]
    return []


_REPORT = ("report", "reports", "reporting")


def manager(c: Clause) -> list[SlotFact]:
    """Who someone reports to: "reporting to Tom now", "Sam reports to Elena", "X is my manager now"
    (`_is_my`), "my manager is Priya" (`_possessive`)."""
    for i, w in enumerate(c.words):
        if w in _REPORT and i + 1 < len(c.words) and c.words[i + 1] == "to":
            return fact(c, i, "manager", [c.value(i + 2)], rule="manager")
    return []


_SELL = ("sold", "sell", "selling", "traded", "trading", "trade", "scrapped", "returned", "gave")
_BUY = ("bought", "buy", "buying", "leased", "leasing", "lease", "ordered", "got", "picked", "purchased")
_THINGS = frozenset("car bike motorbike motorcycle scooter phone laptop tablet kindle ipad watch van truck".split())


def possession(c: Clause) -> list[SlotFact]:
    """Things bought and sold: "sold the Golf and bought a Zoe" (old Golf, new Zoe: both cars),
    "traded in my phone for a Pixel", "the Octavia is gone ... we're leasing a Cupra Born now",
    "got rid of the Kindle", "bought a used Honda PCX 125". The attribute is the thing's noun when
    the text names it ("sold my car"), else what the products are (`slot_vocab.product_kind`), else
    left open (the change is joined to the memory stating its old value)."""
    words = c.words
    old: list[str] = []
    new: list[str] = []
    at = -1
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in _SELL:
            j = i + 1 + (nxt == "in")
            if j < len(words) and words[j] in ("it", "them"):
                continue
            value = c.value(j)
            if value:
                old.append(value)
                at = i if at < 0 else at
            for_ = c.find("for", start=j)
            if w.startswith("trad") and for_ > 0 and for_ + 1 < len(words) and words[for_ + 1] in ("a", "an", "the"):
                new.append(c.value(for_ + 1) or "")
        elif w in ("treated", "treat") and nxt in ("myself", "ourselves") and c.find("to", start=i + 2) == i + 2:
            value = c.value(i + 3)  # "treated myself to a Yaris"
            if value:
                new.append(value)
                at = i if at < 0 else at
        elif (w in ("goodbye", "bye", "rip") or w == "farewell") and i + 1 < len(words):
            value = c.value(i + 1 + (nxt == "to"))  # "goodbye to the Nokia", "rip moto g"
            if value and (product_kind(value) or set(value.split()) & _THINGS):
                old.append(value)
                at = i if at < 0 else at
        elif w in ("rid",) and nxt == "of":
            value = c.value(i + 2)
            if value:
                old.append(value)
                at = i if at < 0 else at
        elif w in _BUY and nxt in ("a", "an", "the", "my", "our", "new", "used", "another"):
            if w in ("got", "picked", "ordered") and not (product_kind(" ".join(c.raw[i + 1:i + 5]))
                                                       or set(words[i + 1:i + 5]) & _THINGS):
                continue  # "got a haircut", "ordered a pizza": only things the rule knows
            value = c.value(i + 1)
            if value:
                new.append(value)
                at = i if at < 0 else at
        elif w in ("is", "'s") and nxt == "gone" and i > 0:
            head = " ".join(x for x in words[max(0, i - 3):i] if x.isalnum() and x not in DETERMINERS)
            if head and (product_kind(head) or set(head.split()) & _THINGS):
                old.append(head)
                at = 0 if at < 0 else at
    if at < 0 or not (old and new) and not any(product_kind(v) or set(v.split()) & _THINGS for v in old + new):
        return []  # a sale or a purchase of no known kind of thing, alone: "sold the house" is `_moved`'s
    noun = next((attribute(t) for v in old + new for t in v.split() if t in _THINGS), None)
    kind = noun or next((k for v in new + old if (k := product_kind(v))), "")
    subject = c.subject(at) if at > 0 else c.user
    if subject is None:
        return []
    return [SlotFact(subject, kind, tuple(v for v in new if v), tuple(v for v in old if v), "possession")]


_SWITCH = ("switched", "switch", "switching", "changed", "change", "changing", "swapped", "swap", "upgraded",
           "upgrade", "moved", "moving", "move", "transferred")


def switched(c: Clause) -> list[SlotFact]:
    """Switching: "switched car insurance to HUK" (insurance), "switched banks from N26 to DKB",
    "changed dentists", "switched contabilista", "moved my account from Millennium to Revolut"
    (bank), "upgraded to the iPhone 16" (phone), "switched from Spotify to Apple Music" (no
    attribute named: joined by the old value), "cancelled Smart Fit, switched to bouldering"."""
    words = c.words
    for i, w in enumerate(words):
        if w not in _SWITCH:
            continue
        j = i + 1
        while j < len(words) and words[j] in ("my", "our", "the", "their", "his", "her", "over", "back"):
            j += 1
        end = j
        while end < len(words) and words[end] not in ("to", "from", "for", ",", ".", "and", "!", "at", "with") \
                and end - j < 4:
            end += 1
        noun = " ".join(words[j:end]) if end > j else ""
        if w in ("moved", "transferred") and not noun:
            continue  # "moved to Leeds": `_moved`'s
        frm = c.find("from", start=i + 1)
        to = c.find("to", start=i + 1)
        old = c.value(frm + 1) if 0 < frm < (to if to > 0 else len(words)) else None
        new = c.value(to + 1) if to > 0 else None
        if not noun and not (old or new):
            continue
        if w.startswith(("chang", "switch", "swap")) and not (old or new) and noun.endswith("s"):
            noun = noun[:-1]  # "changed dentists", "switched banks"
        attr = attribute(noun) if noun and noun.replace(" ", "").isalpha() and noun not in ("it", "them") else ""
        if attr in ("account", "business account"):
            attr = "bank"
        if not attr:
            attr = product_kind(" ".join(v for v in (new, old) if v)) or ""
        if attr and attr not in ATTRIBUTES and attr not in SYNONYMS.values() and len(attr.split()) > 3:
            continue
        return fact(c, i, attr, [new], [old], "switched")
    return []


_AMOUNT = ("up", "down")
#: Units that say what an amount is when nothing else does ("down to 76 kg").
_UNITS = {"kg": "weight", "kgs": "weight", "kilos": "weight", "lbs": "weight", "pounds": "weight", "stone": "weight"}
_RAISE = ("raised", "increased", "put", "bumped", "lowered", "cut", "reduced", "upped")


def amount(c: Clause) -> list[SlotFact]:
    """An amount that changed: "rent goes to 1.010€ from July", "the amlodipine is going up to 10mg",
    "she's put the Eltroxin up to 75mcg", "the landlord raised the rent to 1350", "new rate: 380€"."""
    words = c.words
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("down", "up") and nxt == "to" and i <= 1:  # "Down to 76 kg!": the unit says what
            value = c.value(i + 2)
            unit = next((_UNITS[x] for x in (value or "").split() if x in _UNITS), None)
            if value and unit:
                return [SlotFact(c.user, unit, (value,), (), "amount")]
        if w in ("goes", "went", "going", "gone") and (nxt == "to" or nxt in _AMOUNT and c.find("to", start=i + 1) > 0):
            to = c.find("to", start=i + 1)
            value = c.value(to + 1)
            head: list[str] = []
            for x in reversed(words[max(0, i - 4):i]):
                if x in ("is", "'s", "are", "was"):
                    continue
                if not x.isalpha() or x in DETERMINERS:
                    break
                head.insert(0, x)
            if value and any(ch.isdigit() for ch in value) and head:
                return [SlotFact(c.user, attribute(" ".join(head[-2:])), (value,), (), "amount")]
        if w in _RAISE and i + 1 < len(words):
            to = c.find("to", start=i + 1)
            if to < 0 or to - i > 5:
                continue
            noun = [x for x in words[i + 1:to] if x not in ("the", "my", "our", "up", "down", "her", "his")]
            value = c.value(to + 1)
            if noun and all(x.isalpha() for x in noun) and value and any(ch.isdigit() for ch in value):
                return [SlotFact(c.user, attribute(" ".join(noun[-2:])), (value,), (), "amount")]
    return []


def renamed(c: Clause) -> list[SlotFact]:
    """A new name: "renamed the business to Lampejo Studio", "the team is now called Atlas"."""
    words = c.words
    for i, w in enumerate(words):
        if w == "renamed":
            to = c.find("to", start=i + 1)
            noun = [x for x in words[i + 1:to if to > 0 else i + 4] if x not in ("the", "my", "our", "it")]
            if noun and all(x.isalpha() for x in noun):
                named = tuple(v for v in [c.value(to + 1)] if v and to > 0)
                return [SlotFact(c.user, f"{' '.join(noun[-2:])} name", named,
                                 (), "renamed")]
        if w == "called" and i >= 2 and words[i - 1] == "now" and words[i - 2] in ("is", "'s"):
            noun = [x for x in words[:i - 2] if x not in ("the", "my", "our")]
            if noun and all(x.isalpha() for x in noun) and len(noun) <= 3:
                return [SlotFact(c.user, f"{' '.join(noun)} name", tuple(v for v in [c.value(i + 1)] if v), (),
                                 "renamed")]
    return []




_DROP = ("cancelled", "canceled", "cancel", "dropped", "ditched", "stopped", "quit", "left")


def dropped(c: Clause) -> list[SlotFact]:
    """Something given up, and what came instead, with no attribute named: "Cancelled Comcast, we
    have fiber from Sonic", "Gave up tennis, I'm into bouldering now", "Cancelled Netflix; only
    Disney+ now". Joined by its old value to the memory that states it (`ensemble.versions`)."""
    words = c.words
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if (w in _DROP or (w == "gave" and nxt == "up")) and i + 1 < len(words):
            j = i + 2 if w == "gave" else i + 1
            old = c.value(j, limit=3)
            if not old or old.split()[0] in ("the", "my", "a", "it", "them", "to", "on", "smoking", "drinking"):
                continue
            return fact(c, i, "", (), [old], "dropped")
    return []


#: Habits and subscriptions a person states in the first person: the verb is the attribute ("I play
#: tennis on weekends": user play = tennis; "we pay for Netflix": user subscription = netflix).
_HABITS = {"play": "play", "plays": "play", "smoke": "smoke", "smokes": "smoke", "drink": "drink", "vape": "vape",
           "weigh": "weight", "code": "editor", "pay": "subscription", "subscribe": "subscription",
           "use": "use", "teach": "teach", "take": "take"}


def habit(c: Clause) -> list[SlotFact]:
    """What someone does, plays, pays for or weighs, said in the first person and the present:
    "I play tennis on weekends", "I smoke about five cigarettes a day", "I weigh 82 kg", "we pay
    for Netflix", "I code in Vim"; and its end: "I no longer smoke" (the value "no"). A value that
    changes keys the next statement of it ("down to 76 kg": `amount`)."""
    words = c.words
    for i, w in enumerate(words):
        if w not in _HABITS or i == 0 or c.subject(i) != c.user:
            continue
        if not any(x in ("i", "we") for x in words[max(0, i - 3):i]):
            continue
        attr = _HABITS[w]
        if "longer" in words[max(0, i - 3):i] or "n't" in words[max(0, i - 3):i] or "not" in words[max(0, i - 3):i]:
            return [SlotFact(c.user, attr, ("no",), (), "habit")]
        j = i + 1
        while j < len(words) and words[j] in ("for", "in", "to", "about", "around", "my", "our", "the"):
            j += 1
        value = c.value(j, limit=4)
        if attr in ("use", "take") and not value:
            continue
        return [SlotFact(c.user, attr, (value,) if value else (), (), "habit")]
    return []
