"""A seeded mystery with ground truth: `python -m casebook generate --seed N --suspects K --out DIR`.

A theft at a house, 3-6 suspects with roles, motives and alibis, one culprit whose guilt only shows when several
records are read together: a vehicle seen near the house and the record of whose it is, a figure on camera and the
coat found in a search, a sale attempt and the lineup that names the seller. Records refer to people by role,
surname or pronoun as real reports do; every kind of record has several wordings, so no string trick solves it.
Each question knows its supporting documents and answer by construction, and `gold_triples.json` lists the facts
each document states (in the words it uses), with the questions that need them.
"""
from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.files import write_text_whole
from core.types import Case

from .loader import load_files

FIRST = {"m": ["Arthur", "Benedict", "Conrad", "Desmond", "Elliot", "Felix", "Gideon", "Hugo", "Ivan", "Jasper",
               "Leopold", "Milo", "Nathaniel", "Oscar", "Rupert", "Silas", "Tobias", "Walter"],
         "f": ["Adele", "Beatrice", "Cordelia", "Daphne", "Eleanor", "Flora", "Georgina", "Helena", "Iris", "Judith",
               "Lavinia", "Margot", "Nora", "Ophelia", "Rosalind", "Sylvia", "Theodora", "Vivian"]}
SURNAMES = ["Ashcombe", "Barrow", "Carrick", "Dunmore", "Everly", "Fairweather", "Greaves", "Hartwell", "Ingram",
            "Jessop", "Kendrick", "Lockhart", "Marlowe", "Northcott", "Oakley", "Pembroke", "Quarles", "Ravenscroft",
            "Sinclair", "Thorne", "Upton", "Vance", "Whitlock", "Yardley"]
HOUSES = ["Ashford Hall", "Greymoor House", "Larkspur Manor", "Hollowbrook Lodge", "Wexley Court", "Fenwick Grange"]
OBJECTS = [("sapphire brooch", "$180,000"), ("gold pocket watch", "$45,000"), ("diamond tiara", "$900,000"),
           ("emerald ring", "$320,000"), ("jade figurine", "$75,000"), ("silver chalice", "$60,000")]
ROOMS = ["study", "library", "conservatory", "music room", "gallery", "drawing room"]
ROLES = ["gardener", "housekeeper", "chauffeur", "business partner", "nephew", "art dealer", "cook", "secretary",
         "piano teacher", "accountant"]
PLACES = ["the Rose and Crown", "the Kingsway cinema", "St. Anne's church hall", "the Harbour Street casino",
          "the county library", "the Old Mill restaurant", "the railway station cafe", "the bowling club"]
VEHICLES = ["grey van", "red hatchback", "black sedan", "green pickup truck", "white estate car", "blue coupe"]
CLOTHES = ["long camel coat", "green wool scarf", "wide-brimmed hat", "yellow raincoat", "tweed cap",
           "leather driving gloves"]
STREETS = ["Lombard Street", "Cheapside", "Mercer Lane", "Tanner Row", "Bridge Street"]
MOTIVES = ["owed {money} to a moneylender", "had been cut out of the owner's will",
           "was about to be dismissed without a reference", "needed {money} to save a failing shop",
           "had quarrelled bitterly with the owner over an unpaid loan"]


@dataclass
class Person:
    first: str
    last: str
    sex: str
    role: str
    motive: str = ""
    alibi_place: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def title(self) -> str:
        return f"{'Mr.' if self.sex == 'm' else 'Ms.'} {self.last}"

    @property
    def they(self) -> str:
        return "he" if self.sex == "m" else "she"

    @property
    def their(self) -> str:
        return "his" if self.sex == "m" else "her"


@dataclass
class Mystery:
    documents: list[dict] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)
    triples: list[dict] = field(default_factory=list)     # gold facts, in the words of the document stating them

    def doc(self, title: str, sentences: list[str], facts: list[tuple[str, str, str]]) -> str:
        doc_id = f"D{len(self.documents) + 1}"
        self.documents.append({"id": doc_id, "title": title, "text": " ".join(sentences)})
        text = self.documents[-1]["text"].casefold()
        for s, r, o in facts:
            if s.casefold() not in text or o.casefold() not in text:   # a template that does not state its fact
                raise ValueError(f"{doc_id} does not state ({s}, {r}, {o}): {text}")
            self.triples.append({"doc_id": doc_id, "subject": s, "relation": r, "object": o, "questions": []})
        return doc_id

    def ask(self, kind: str, text: str, answer: str, needs: list[tuple[str, str]],
            answers: tuple[str, ...] | list[str] = ()) -> None:
        """A question whose answer needs the facts ``needs`` ((doc id, object) of gold triples)."""
        qid = f"Q{len(self.questions) + 1}"
        docs = list(dict.fromkeys(doc_id for doc_id, _ in needs))
        for doc_id, obj in needs:
            fact = next(t for t in self.triples if t["doc_id"] == doc_id and t["object"] == obj)
            fact["questions"].append(qid)
        self.questions.append({"id": qid, "question": text, "type": kind, "supporting_docs": docs,
                               "expected_answer": answer, "answers": [answer, *answers]})


def generate(seed: int, suspects: int = 4, timeline: bool = False) -> dict[str, Any]:
    """The case's files as JSON values: documents.json, questions.json, case.json and gold_triples.json.
    ``timeline``: one question more, what happened in a stretch of the evening (off by default, so the generated
    sets measured before it existed keep their questions; the documents are the same either way)."""
    if not 3 <= suspects <= 6:
        raise ValueError(f"suspects must be between 3 and 6, not {suspects}")
    rng = random.Random(seed)
    pick = rng.choice
    surnames = rng.sample(SURNAMES, suspects + 2)
    owner = Person(pick(FIRST["f"]), surnames[0], "f", "owner")
    people = []
    for last, role in zip(surnames[1:suspects + 1], rng.sample(ROLES, suspects), strict=True):
        sex = pick("mf")
        people.append(Person(pick(FIRST[sex]), last, sex, role))
    places = rng.sample(PLACES, suspects)
    for p, place in zip(people, places, strict=True):
        p.alibi_place = place
    culprit = pick(people)
    motives = rng.sample(MOTIVES, 2)
    culprit.motive = motives[0].format(money=f"${rng.randint(2, 9) * 10},000")
    red_herring = pick([p for p in people if p is not culprit])
    red_herring.motive = motives[1].format(money=f"${rng.randint(2, 9) * 10},000")
    house, (obj, value), room = pick(HOUSES), pick(OBJECTS), pick(ROOMS)
    vehicle, coat, street = pick(VEHICLES), pick(CLOTHES), pick(STREETS)
    plate = (f"{pick('KLMNPRSTVW')}{pick('ABCDEFGH')}{rng.randint(10, 99)} "
             f"{pick('XYZ')}{pick('JKLMN')}{pick('PQR')}")
    hour = rng.randint(8, 10)
    seen, camera = f"{hour}:{pick(['10', '20', '25'])} PM", f"{hour}:{pick(['35', '40', '50'])} PM"
    discovered = f"{hour + 1}:45 PM"
    sale = f"{rng.randint(9, 11)}:{pick(['05', '15', '30'])} AM"
    m = Mystery()

    theft = m.doc("Report of the theft", [
        pick([f"At {discovered} {owner.title} of {house} reported that her {obj} was missing from the {room}.",
              f"{owner.title} of {house} called the police at {discovered}: her {obj} had gone from the {room}."]),
        pick([f"The {obj} is insured for {value}.", f"Her insurers value the {obj} at {value}."]),
        pick(["The glass case had been opened without force.", "Nothing else in the room had been touched."])],
        [(owner.title, "reported missing", obj), (obj, "kept in", room), (obj, "valued at", value)])
    m.ask("simple", f"What was stolen from {house}?", obj, [(theft, obj)])
    m.ask("simple", f"How much is the {obj} worth?", value, [(theft, value)])

    interviews = {}
    for p in people:
        said = pick([f"{p.title} said {p.they} spent the evening at {p.alibi_place}.",
                     f"{p.title} told officers {p.they} was at {p.alibi_place} all evening.",
                     f"According to {p.title}, {p.they} was at {p.alibi_place} that night."])
        facts = [(p.name, "works as", p.role), (p.title, "claimed to be at", p.alibi_place)]
        sentences = [pick([f"Interview with {p.name}, the {p.role} at {house}.",
                           f"Statement of {p.name}, who works as the {p.role} at {house}."]), said]
        interviews[p.last] = m.doc(f"Interview: the {p.role}", sentences, facts)
    finances = {}
    for p in (culprit, red_herring):
        finances[p.last] = m.doc(pick(["Background check", "Financial inquiry"]), [
            pick([f"Inquiries show that the {p.role} {p.motive}.", f"Records show the {p.role} {p.motive}."]),
            pick([f"Colleagues describe {p.title} as worried for weeks.", f"Friends say {p.title} had seemed desperate."])],
            [(f"the {p.role}", "had motive", p.motive)])
    alibis = {}
    for p in people:
        if p is culprit:
            sentences = [pick([f"Staff at {p.alibi_place} do not remember seeing the {p.role} that evening.",
                               f"Nobody at {p.alibi_place} could confirm the {p.role}'s visit."])]
            facts = [(f"the {p.role}", "not confirmed at", p.alibi_place)]
        else:
            sentences = [pick([f"A waiter at {p.alibi_place} confirmed that the {p.role} stayed until midnight.",
                               f"Receipts and two witnesses place the {p.role} at {p.alibi_place} until midnight."])]
            facts = [(f"the {p.role}", "confirmed at", p.alibi_place)]
        alibis[p.last] = m.doc(f"Alibi check: {p.alibi_place}", sentences, facts)
    sighting = m.doc("Neighbour's statement", [
        pick([f"A neighbour walking a dog saw a {vehicle} parked by the gate of {house} at {seen}.",
              f"At {seen} a neighbour noticed a {vehicle} waiting with its lights off near {house}."]),
        pick([f"She noted the plate: {plate}.", f"The neighbour wrote down its registration, {plate}."])],
        [(vehicle, "seen near", house), (vehicle, "has plate", plate)])
    registry = m.doc("Vehicle registry", [
        pick([f"Registration {plate} belongs to a {vehicle} owned by {culprit.name}.",
              f"The registry lists {culprit.name} as the keeper of vehicle {plate}."])],
        [(plate, "registered to", culprit.name)])
    footage = m.doc("Security footage", [
        pick([f"The camera outside the {room} recorded a figure in a {coat} at {camera}.",
              f"At {camera} the {room} camera caught a figure wearing a {coat}."]),
        pick(["The face is not visible.", "The figure kept its head down."])],
        [("figure", "wore", coat), ("figure", "recorded outside", room)])
    search = m.doc("Search of a vehicle", [
        pick([f"Officers searched the {vehicle} and found a {coat} under the back seat.",
              f"In the boot of the {vehicle} officers found a {coat}, still damp."])],
        [(vehicle, "contained", coat)])
    seller = "man" if culprit.sex == "m" else "woman"
    pawn = m.doc("Pawn shop report", [
        pick([f"At {sale} the next day a {seller} tried to sell a {obj} at a pawn shop on {street}.",
              f"The next morning, at {sale}, a {seller} offered a {obj} to a pawnbroker on {street}."]),
        "The seller left before the paperwork was done."],
        [("seller", "tried to sell", obj), ("seller", "at pawn shop on", street)])
    lineup = m.doc("Photo lineup", [
        pick([f"The pawnbroker from {street} picked {culprit.name} out of a photo lineup as the seller.",
              f"Shown six photographs, the pawnbroker on {street} identified {culprit.name} as the seller."])],
        [(culprit.name, "identified at pawn shop on", street)])
    # (title, text, when it happened in minutes after midnight if the text says so in words, the fact it states)
    asides = {}
    for title, text, when, fact in rng.sample([
            ("Weather report", f"Rain began to fall over {house} shortly after ten and lasted until dawn.", 22 * 60 + 5,
             ("rain", "began to fall over", house)),
            ("Delivery note", f"A florist delivered lilies to {house} in the afternoon, signed for by the cook.", None,
             ("florist", "delivered lilies to", house)),
            ("Dinner guests", f"{owner.title} had hosted four guests for dinner; they left by half past eight.",
             20 * 60 + 30, ("four guests", "left by", "half past eight")),
            ("Power cut", f"The east wing of {house} lost power for ten minutes in the early evening.", None,
             ("east wing", "lost power in", "the early evening"))], 2):
        # their facts are gold only with the timeline question (the one question that needs one of them)
        asides[m.doc(title, [text], [fact] if timeline else [])] = (when, fact[2])

    name = culprit.name
    m.ask("multi-hop", f"Who owns the {vehicle} seen near {house} on the night of the theft?", name,
          [(sighting, plate), (registry, culprit.name)], [culprit.title, culprit.last])
    m.ask("multi-hop", "Who tried to sell the stolen item at the pawn shop?", name,
          [(pawn, obj), (lineup, street)], [culprit.title, culprit.last])
    m.ask("multi-hop", f"Where was the {coat} seen on camera found?", f"in the {vehicle}",
          [(footage, coat), (search, coat)], [vehicle])
    m.ask("multi-hop", f"Which suspect's alibi for the evening at {culprit.alibi_place} could not be confirmed?", name,
          [(interviews[culprit.last], culprit.alibi_place), (alibis[culprit.last], culprit.alibi_place)],
          [culprit.title, culprit.last])
    m.ask("sense-making", f"Who had both a motive and the opportunity to steal the {obj}?", name,
          [(finances[culprit.last], culprit.motive), (sighting, house), (registry, culprit.name)],
          [culprit.title, culprit.last])
    # The vehicle, not "what evidence": the lineup ties the culprit to the theft too, and is not in this chain.
    m.ask("sense-making", f"What ties {culprit.name}'s vehicle to the theft at {house}?",
          f"{culprit.their.capitalize()} {vehicle} was seen at the house and held the {coat} seen on camera",
          [(registry, culprit.name), (sighting, house), (search, coat), (footage, coat)])
    m.ask("sense-making", f"{red_herring.name} had a motive too. Why is {red_herring.they} not the thief?",
          f"{red_herring.their.capitalize()} alibi at {red_herring.alibi_place} was confirmed",
          [(finances[red_herring.last], red_herring.motive), (alibis[red_herring.last], red_herring.alibi_place)])
    if timeline:
        # The stretch from the hour before the sighting to the report, by the clock: the records of what happened in
        # it are the sighting, the footage, the report at its end, and an aside whose time is said in words.
        start, end = hour * 60 + 12 * 60, (hour + 1) * 60 + 45 + 12 * 60
        inside = [(doc, obj) for doc, (when, obj) in asides.items() if when is not None and start <= when <= end]
        m.ask("sense-making", f"What happened at {house} between {hour}:00 PM and {discovered}?",
              f"a {vehicle} was seen by the house at {seen}, a figure in a {coat} was filmed at {camera}, "
              f"and the {obj} was reported missing at {discovered}",
              [(sighting, house), (footage, coat), (theft, obj), *inside])
    case = {"title": f"The {obj.title()} of {house}", "description": (
        f"Generated mystery (seed {seed}, {suspects} suspects): a {obj} has vanished from {house}. "
        f"{len(m.documents)} short records; the thief is named only when several are read together."),
        "source": f"python -m casebook generate --seed {seed} --suspects {suspects}", "license": "CC0"}
    return {"documents.json": m.documents, "questions.json": m.questions, "case.json": case,
            "gold_triples.json": m.triples}


def gold_as_triples(gold: list[dict]) -> list[dict]:
    """The gold facts in triples.json's shape (their question links dropped): what a perfect OpenIE would give."""
    return [{k: t[k] for k in ("doc_id", "subject", "relation", "object")} for t in gold]


def load_mystery(seed: int, suspects: int = 4, triples: list[dict] | None = None,
                 timeline: bool = False) -> tuple[Case, list[dict]]:
    """The generated case, loaded like any case (``triples`` as its triples.json when given), and its gold
    triples (kept out of the case: they are the answer key, not input)."""
    files = generate(seed, suspects, timeline)
    parts = [(name, json.dumps(value).encode()) for name, value in files.items() if name != "gold_triples.json"]
    if triples is not None:
        parts.append(("triples.json", json.dumps(triples).encode()))
    return load_files(parts, name=f"mystery-{seed}-{suspects}"), files["gold_triples.json"]


def write(files: Mapping[str, object], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        write_text_whole(folder / name, json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    return folder
