"""The words the slot rules (`slots`) and the question's slot (`asked_slot`) share: the attributes
people have one of at a time, their other names, and the products whose name says what they are.

A version of a fact is a newer value of the same slot: the same subject (the user, or a named
person) and the same attribute ("home", "employer", "car"...). People name an attribute many ways
("boss", "manager", "line manager"; "GP", "doctor") and often not at all ("sold the Golf and bought
a Zoe" names no car: the products do), so both sides of retrieval read attributes through these
tables: a memory's slot (write time) and the slot a question asks (query time) meet on one name.
"""

from __future__ import annotations

import re

__all__ = ["SYNONYMS", "ATTRIBUTES", "attribute", "PRODUCTS", "product_kind", "STATE_WORDS", "ASKED_AS"]

#: Other names of an attribute -> the name slots use. Keys are case-folded words or phrases.
SYNONYMS: dict[str, str] = {
    "boss": "manager", "line manager": "manager", "supervisor": "manager", "team lead": "manager",
    "gp": "doctor", "family doctor": "doctor", "physician": "doctor", "doc": "doctor",
    "address": "home", "home address": "home", "flat": "home", "apartment": "home", "apt": "home", "place": "home",
    "house": "home", "home city": "home", "city": "home", "neighbourhood": "home", "neighborhood": "home",
    "job title": "role", "title": "role", "position": "role", "job": "role",
    "company": "employer", "workplace": "employer", "firm": "employer",
    "number": "phone number", "mobile number": "phone number", "mobile": "phone", "cell": "phone",
    "cell phone": "phone", "smartphone": "phone", "handset": "phone",
    "plate": "license plate", "number plate": "license plate", "plates": "license plate", "rego": "license plate",
    "reg": "license plate", "registration": "license plate",
    "licence plate": "license plate",
    "motorbike": "bike", "motorcycle": "bike", "scooter": "bike", "two-wheeler": "bike", "bicycle": "bike",
    "vehicle": "car", "ride": "car",
    "accountant": "accountant", "accounting": "accountant", "bookkeeper": "accountant", "contabilista": "accountant",
    "wi-fi": "wifi", "wifi password": "wifi", "wi-fi password": "wifi", "network": "wifi",
    "favourite": "favorite", "editors": "editor", "uni": "university", "college": "university", "school": "school",
    "salary": "pay", "wage": "pay", "day rate": "rate", "hourly rate": "rate",
    "partner": "partner", "girlfriend": "partner", "boyfriend": "partner", "fiancée": "partner", "fiance": "partner",
    "fiancé": "partner", "husband": "spouse", "wife": "spouse",
    "bank account": "bank", "current account": "bank", "business account": "bank", "account": "bank",
    "checking": "bank", "checking account": "bank", "savings account": "bank",
    "internet provider": "internet", "broadband": "internet", "isp": "internet",
    "gym membership": "gym", "studio": "gym",
    "dentist": "dentist", "landlady": "landlord",
    "medication": "medication", "meds": "medication", "tablets": "medication", "pills": "medication",
}

#: Attributes a person has one of at a time: a statement of one is a version of the others. Used
#: where a rule reads an attribute from a looser pattern ("new X: ...", "X: ..." opening a note).
ATTRIBUTES: frozenset[str] = frozenset("""
home employer role manager car bike phone laptop tablet doctor dentist school university gym bank landlord rent
pay rate partner spouse wifi internet email phone number license plate locker team office desk accountant
insurance provider pharmacy therapist coach teacher nursery daycare kindergarten church club choir hairdresser
vet babysitter nanny mortgage plan password pin medication dose
""".split()) | frozenset({"phone number", "license plate"})

#: What a question word asks for, when the question names no attribute ("where do I live?" asks
#: for home, "where do I work?" for the employer).
ASKED_AS: dict[str, tuple[str, ...]] = {
    "live": ("home",), "living": ("home",), "stay": ("home",), "staying": ("home",), "based": ("home",),
    "work": ("employer", "role"), "working": ("employer", "role"),
    "drive": ("car",), "driving": ("car",), "ride": ("bike", "car"), "riding": ("bike", "car"),
    "report": ("manager",), "reporting": ("manager",),
    "bank": ("bank",), "banking": ("bank",),
}


def attribute(noun: str) -> str:
    """The attribute a noun names: its slot name when it has another ("boss" -> "manager"), else
    the noun itself, singular where that is plain ("dentists" -> "dentist")."""
    noun = " ".join(noun.casefold().split())
    if noun in SYNONYMS:
        return SYNONYMS[noun]
    if noun.endswith("s") and not noun.endswith("ss") and noun[:-1] in SYNONYMS.keys() | ATTRIBUTES:
        return SYNONYMS.get(noun[:-1], noun[:-1])
    return noun


#: Products whose name says what kind of thing they are: the makes and models people buy, sell and
#: switch between ("sold the Golf and bought a Zoe": both cars). A gazetteer, as NER systems keep
#: one: what it does not list, a rule reads from the nouns around it ("bought a new car"), and
#: `store.slot_model.ChatSlotExtractor` is the escape hatch for the rest.
PRODUCTS: dict[str, str] = {
    **dict.fromkeys("""
    golf polo passat tiguan touran octavia fabia kodiaq yaris corolla prius rav4 camry auris aygo micra
    qashqai juke civic cr-v crv fiesta kuga mondeo mustang clio zoe megane captur twingo corsa astra mokka ibiza
    leon cooper e-tron 3-series 5-series c-class a-class e-class glc outback forester impreza crosstrek sienna
    odyssey elantra tucson kona ioniq sportage ceed niro picanto carnival cx-5 cx-30 mazda3 mazda2 mx-5 xc40
    xc60 xc90 ev6 id3 id.3 id4 id.4 kangoo berlingo hilux wrangler cherokee renegade f-150 silverado tacoma
    tundra highlander 4runner altima sentra outlander vitara jimny nexon creta baleno wagonr innova fortuner
    xuv700 thar
    """.split(), "car"),
    **dict.fromkeys("""
    volkswagen vw skoda toyota nissan renault peugeot citroen citroën opel vauxhall fiat seat cupra audi bmw
    mercedes mercedes-benz tesla volvo kia hyundai mazda subaru suzuki mitsubishi jeep chevrolet chevy ford
    dodge lexus jaguar land-rover landrover porsche dacia polestar byd mahindra tata maruti lancia alfa
    """.split(), "car"),
    **dict.fromkeys("""
    iphone pixel galaxy oneplus xiaomi redmi moto nokia fairphone huawei oppo realme
    """.split(), "phone"),
    **dict.fromkeys("macbook thinkpad chromebook xps zenbook ideapad inspiron".split(), "laptop"),
    **dict.fromkeys("ipad kindle kobo".split(), "tablet"),
    **dict.fromkeys("vim neovim emacs vscode vs-code sublime intellij pycharm webstorm xcode cursor zed".split(),
                    "editor"),
    "vs code": "editor", "visual studio": "editor",
    **dict.fromkeys("""
    vespa ather activa pcx himalayan enfield yamaha ducati kawasaki harley brompton btwin b'twin cannondale
    vanmoof
    """.split(), "bike"),
}

#: Words after "is" / "are" that describe a state, not a value: "my voice is gone", "my knee is
#: killing me", "the Octavia is gone". No slot of "voice" or "knee" follows from them.
STATE_WORDS: frozenset[str] = frozenset("""
gone fine ok okay good great bad better worse sore broken dead done over back here there ready busy sick ill
tired sluggish killing hurting playing acting due late early full empty closed open finished off on out up down
still so very really too not n't never always just bit lovely awful terrible amazing huge tiny small big
""".split())

_WORD = re.compile(r"[\w'.+-]+")


def product_kind(words: str) -> str | None:
    """What kind of product a name is ("Toyota Yaris hybrid" -> "car", "iPhone 13" -> "phone"), by
    its first word the gazetteer knows (models before makes: "Honda PCX" is a bike); None when it
    knows none."""
    found = [w.casefold() for w in _WORD.findall(words)]
    found += [f"{a} {b}" for a, b in zip(found, found[1:], strict=False)]  # "vs code", "visual studio"
    kinds = [PRODUCTS[w] for w in found if w in PRODUCTS]
    if not kinds:
        return None
    bikes = [k for k in kinds if k != "car"]  # a model says more than a make that also builds cars
    return bikes[0] if bikes and len(set(kinds)) > 1 else kinds[0]
