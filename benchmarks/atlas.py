"""An invented encyclopedia with MuSiQue's shape, for choosing the investigation loop's defaults (``--sets atlas``).

Every choosing set at 5 came from 2Wiki or HotpotQA: one passage a page, questions of two hops. MuSiQue, a report
set, has several paragraphs under one title and questions of three and four hops whose bridges the question never
names. This world is made from a seed, so no report set is read to make it:

- countries, cities, people, companies and works (films, novels, albums), every name invented (the model cannot
  answer from memory);
- each page one to three paragraphs under its title (a person's early life, career and personal life), each fact
  stated in one paragraph only, and beside the facts the mentions an encyclopedia makes (a film's cast, a rival
  compared, a neighbouring country, the university someone attended), so the question's words and the graph offer
  lookalikes;
- questions of two, three and four hops, composed from chains of those facts (the director of a film, where that
  person was born, the country of that city, its capital), worded several ways, each knowing its supporting
  paragraphs by construction.

Its difficulty was set before any run of the loop on it: by its counts (pages, paragraphs, hops) alone.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from casebook.loader import load_files
from core.types import Case

SEED = 1
COUNTRIES, CITIES_PER_COUNTRY, PEOPLE, COMPANIES, WORKS = 8, 4, 120, 30, 70
QUESTIONS = {"2hop": 30, "3hop": 30, "4hop": 20}

ONSETS = ["b", "br", "c", "d", "dr", "f", "g", "gr", "h", "k", "l", "m", "n", "p", "r", "s", "st", "t", "tr", "v",
          "w"]
VOWELS = ["a", "e", "i", "o", "u", "a", "e", "o"]
CODAS = ["", "", "n", "r", "l", "s", "m", "nd"]
# Endings that make an invented word read as a surname, a town or a country
SURNAME_ENDS = ["son", "er", "ley", "ton", "ard", "ing", "", ""]
CITY_ENDS = ["burg", "by", "ford", "stad", "wick", "mouth", "a", ""]
COUNTRY_ENDS = ["ia", "and", "ova", "istan", "ania"]
FIRST = ["Aldric", "Bertram", "Casimir", "Dorian", "Emeric", "Florian", "Gaspard", "Hollis", "Ignatz", "Jorund",
         "Lucan", "Marek", "Nils", "Osric", "Pavel", "Quentin", "Rurik", "Stellan", "Tamas", "Ulric", "Anton", "Bruno",
         "Cyril", "Daniel", "Edgar", "Fabian", "Gregor", "Henrik", "Jonas", "Konrad", "Lorenz", "Matthias", "Oskar",
         "Roland", "Severin", "Viktor", "Anselma", "Brisa", "Celestine", "Dagny", "Elowen", "Fenna", "Greta", "Hedda",
         "Isolde", "Jolanta", "Katrin", "Liesel", "Mireille", "Nadia", "Odile", "Petra", "Ragna", "Solveig", "Tilde",
         "Verena", "Agnes", "Birgit", "Clara", "Dorothea", "Edith", "Frida", "Hanna", "Ingrid", "Johanna", "Klara",
         "Lotte", "Marta", "Paula", "Ruth", "Sabine", "Ursula"]
FEMALE_FROM = 36
ADJECTIVES = ["Silent", "Crimson", "Hollow", "Last", "Golden", "Distant", "Broken", "Winter", "Paper", "Iron",
              "Quiet", "Burning", "Lost", "Northern", "Glass", "Velvet", "Bitter", "Scarlet", "Wandering", "Sleeping",
              "Painted", "Borrowed", "Forgotten", "Seventh", "Amber", "Salt", "Drowned", "Restless", "Early", "Wild"]
NOUNS = ["Harbour", "Orchard", "Lantern", "Meridian", "Tide", "Garden", "Frontier", "Cathedral", "Bridge", "Mirror",
         "Season", "Compass", "Archive", "Storm", "Vineyard", "Island", "Kingdom", "Letter", "Voyage", "Mountain",
         "Daughter", "Machine", "Carnival", "River", "Fortress", "Promise", "Lighthouse", "Summer", "Shadow", "Station"]
# How a work's title is put together from those words, an invented place or a name (as real titles vary)
TITLES = ["The {adj} {noun}", "{noun} of the {adj} {noun2}", "A {noun} in {place}", "{place}", "The {noun} and the "
          "{noun2}", "{adj} {noun}", "Return to {place}", "The {place} {noun}"]
INDUSTRIES = ["fishing", "textiles", "timber", "copper mining", "wine", "shipbuilding", "tourism", "grain"]
SUBJECTS = ["law", "painting", "physics", "history", "architecture", "music", "economics", "literature"]
RIVERS = ["Aven", "Brue", "Caldor", "Dunne", "Esk", "Fal", "Greta", "Hull"]


@dataclass
class Entity:
    name: str
    kind: str                                  # country, city, person, company, work
    facts: dict[str, str] = field(default_factory=dict)        # relation -> the other entity's name
    where: dict[str, str] = field(default_factory=dict)        # relation -> the paragraph that states it
    sex: str = ""
    medium: str = ""                           # a work's: film, novel or album


# How each relation reads as a noun phrase about the thing before it ("the director of X"), by the medium of a work
CREATOR = {"film": ["the director of {}", "the person who directed {}", "the filmmaker behind {}"],
           "novel": ["the author of {}", "the writer of {}", "the person who wrote {}"],
           "album": ["the musician who recorded {}", "the artist behind {}", "the performer of {}"]}
MAKER = {"film": ["the studio that produced {}", "the production company of {}"],
         "novel": ["the publisher of {}", "the house that published {}"],
         "album": ["the label that released {}", "the record company behind {}"]}
PHRASES = {"founder": ["the founder of {}", "the person who founded {}"],
           "spouse": ["the spouse of {}", "the person married to {}"]}
# How a question ends on its last relation, about the noun phrase of the chain before it
ENDINGS = {"born": ["Where was {} born?", "In which city was {} born?", "What is the birthplace of {}?"],
           "country": ["In which country was {} born?", "Which country is {} from by birth?"],
           "capital": ["What is the capital of the country where {} was born?"],
           "founder": ["Who founded {}?", "Who established {}?"],
           "spouse": ["Who was {} married to?", "Who is the spouse of {}?"],
           "hq_country": ["In which country is {} headquartered?"]}


class Atlas:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.names: set[str] = set()
        self.entities: dict[str, Entity] = {}
        self.documents: list[dict] = []
        self.questions: list[dict] = []

    def word(self, syllables: int, suffix: str = "") -> str:
        while True:
            text = "".join(self.rng.choice(ONSETS) + self.rng.choice(VOWELS) + self.rng.choice(CODAS)
                           for _ in range(syllables)) + suffix
            name = text.capitalize()
            if name not in self.names and 4 <= len(name) <= 12:
                self.names.add(name)
                return name

    def add(self, entity: Entity) -> Entity:
        self.entities[entity.name] = entity
        return entity

    def page(self, title: str, sentences: list[str], states: Sequence[tuple[Entity, str]] = ()) -> str:
        """One paragraph under ``title``; ``states`` the (entity, relation) facts it is the one place of."""
        doc_id = f"A{len(self.documents) + 1:04d}"
        text = " ".join(sentences)
        for entity, relation in states:
            if entity.facts[relation] not in text:   # a template that does not state its fact
                raise ValueError(f"{doc_id} does not state {entity.name} {relation} {entity.facts[relation]}")
            entity.where[relation] = doc_id
        self.documents.append({"id": doc_id, "title": title, "text": text})
        return doc_id

    def pick(self, items: Sequence[Entity], but: Sequence[Entity] = ()) -> Entity:
        return self.rng.choice([i for i in items if i not in but])


def he(p: Entity) -> str:
    return "She" if p.sex == "f" else "He"


def his(p: Entity) -> str:
    return "her" if p.sex == "f" else "his"


@dataclass
class World:
    countries: list[Entity]
    cities: list[Entity]
    people: list[Entity]
    companies: list[Entity]
    works: list[Entity]


KINDS = {"film": "studio", "novel": "publishing house", "album": "record label"}
COMPANY_ENDS = {"film": "Pictures", "novel": "Press", "album": "Records"}


def invent(a: Atlas) -> World:
    """The entities and the facts between them, before any page is written."""
    rng = a.rng
    countries = [a.add(Entity(a.word(rng.choice([1, 2]), rng.choice(COUNTRY_ENDS)), "country"))
                 for _ in range(COUNTRIES)]
    cities: list[Entity] = []
    for country in countries:
        own = [a.add(Entity(a.word(rng.choice([1, 2]), rng.choice(CITY_ENDS)), "city", {"country": country.name}))
               for _ in range(CITIES_PER_COUNTRY)]
        country.facts["capital"] = own[0].name
        cities += own
    people: list[Entity] = []
    while len(people) < PEOPLE:
        first = rng.randrange(len(FIRST))
        name = f"{FIRST[first]} {a.word(rng.choice([1, 2]), rng.choice(SURNAME_ENDS))}"
        people.append(a.add(Entity(name, "person", sex="f" if first >= FEMALE_FROM else "m")))
    for person in people:
        person.facts["born"] = a.pick(cities).name
        person.facts["studied"] = a.pick(cities, but=(a.entities[person.facts["born"]],)).name
    shuffled = people[:]
    rng.shuffle(shuffled)
    for one, other in zip(shuffled[0:80:2], shuffled[1:80:2], strict=True):   # 40 couples, stated on one's page
        one.facts["spouse"] = other.name
        one.facts["died"] = a.pick(cities).name
    companies: list[Entity] = []
    for n in range(COMPANIES):
        medium = ("film", "novel", "album")[n % 3]
        name = f"{a.word(2)} {COMPANY_ENDS[medium]}"
        companies.append(a.add(Entity(name, "company", {"founder": a.pick(people).name, "hq": a.pick(cities).name},
                                      medium=medium)))
    works: list[Entity] = []
    while len(works) < WORKS:
        medium = rng.choice(["film", "film", "novel", "album"])
        noun, noun2 = rng.sample(NOUNS, 2)
        title = rng.choice(TITLES).format(adj=rng.choice(ADJECTIVES), noun=noun, noun2=noun2, place=a.word(2))
        if title in a.entities:
            continue
        maker = a.pick([c for c in companies if c.medium == medium])
        works.append(a.add(Entity(title, "work", {"creator": a.pick(people).name, "maker": maker.name},
                                  medium=medium)))
    return World(countries, cities, people, companies, works)


def write_places(a: Atlas, w: World) -> None:
    rng = a.rng
    for country in w.countries:
        neighbours = [c.name for c in rng.sample([c for c in w.countries if c is not country], 2)]
        port = a.entities[[c.name for c in w.cities if c.facts["country"] == country.name][1]]
        a.page(country.name, [f"{country.name} is a country whose capital and largest city is "
                              f"{country.facts['capital']}.", f"It borders {neighbours[0]} and {neighbours[1]}.",
                              f"Its currency is the {a.word(2)}."], [(country, "capital")])
        a.page(country.name, [f"{country.name} declared independence in {rng.randrange(1810, 1960)}.",
                              f"Its economy rests on {rng.choice(INDUSTRIES)} and {rng.choice(INDUSTRIES)}, and "
                              f"{port.name} is its main port.",
                              "Its parliament meets for two sessions a year."])
    for city in w.cities:
        size = rng.choice(["small", "large", "historic", "coastal"])
        river = rng.choice(RIVERS)
        known = rng.choice(["cathedral", "harbour", "market", "university", "bridges"])
        a.page(city.name, [f"{city.name} is a {size} city in {city.facts['country']}, on the {river} river.",
                           f"It is known for its {known} and has about {rng.randrange(20, 900)},000 inhabitants."],
               [(city, "country")])
        if rng.random() < 0.5:
            a.page(city.name, [f"The {city.name} {rng.choice(['film', 'music', 'book', 'lantern'])} festival has "
                               f"been held each summer since {rng.randrange(1900, 2000)}.",
                               f"In {rng.randrange(1950, 2015)} the festival was opened by {a.pick(w.people).name}."])


def write_people(a: Atlas, w: World) -> None:
    rng = a.rng
    for person in w.people:
        year = rng.randrange(1900, 1980)
        a.page(person.name, [f"{person.name} was born in {person.facts['born']} in {year}.",
                             f"{he(person)} studied {rng.choice(SUBJECTS)} at the University of "
                             f"{person.facts['studied']}, graduating in {year + rng.randrange(20, 26)}."],
               [(person, "born")])
        rival = a.pick(w.people, but=(person,))
        a.page(person.name, [f"{person.name} worked for many years in {a.pick(w.cities).name}.",
                             f"Critics often compared {his(person)} work with that of {rival.name}, with whom "
                             f"{he(person).lower()} shared a {rng.choice(['prize', 'stage', 'teacher', 'studio'])} "
                             f"in {year + rng.randrange(30, 45)}."])
        if "spouse" in person.facts:
            a.page(person.name, [f"In {year + rng.randrange(22, 35)}, {person.name} married {person.facts['spouse']}.",
                                 f"{he(person)} later settled in {person.facts['died']}."],
                   [(person, "spouse")])


def write_companies_and_works(a: Atlas, w: World) -> None:
    rng = a.rng
    for company in w.companies:
        founded = rng.randrange(1920, 2000)
        a.page(company.name, [f"{company.name} is a {KINDS[company.medium]} founded in {founded} by "
                              f"{company.facts['founder']}.", "Its first release was a commercial failure."],
               [(company, "founder")])
        rival = a.pick([c for c in w.companies if c is not company])
        a.page(company.name, [f"{company.name} is headquartered in {company.facts['hq']}.",
                              f"In {founded + rng.randrange(5, 25)} it acquired a stake in {rival.name}."],
               [(company, "hq")])
    for work in w.works:
        year = rng.randrange(1950, 2020)
        cast = [p.name for p in rng.sample(w.people, 2)]
        creator, maker = work.facts["creator"], work.facts["maker"]
        if work.medium == "film":
            text = [f"{work.name} is a {year} film directed by {creator} and produced by {maker}.",
                    f"It stars {cast[0]} and {cast[1]}."]
        elif work.medium == "novel":
            text = [f"{work.name} is a {year} novel by {creator}, published by {maker}.",
                    f"Its cover was painted by {cast[0]}, and {cast[1]} reviewed it warmly."]
        else:
            text = [f"{work.name} is a {year} album recorded by {creator} and released on {maker}.",
                    f"{cast[0]} and {cast[1]} play on it."]
        a.page(work.name, text, [(work, "creator"), (work, "maker")])


def build(seed: int = SEED) -> tuple[dict, list[Entity]]:
    """The world's files as JSON values (documents.json, questions.json, case.json), and its entities."""
    a = Atlas(seed)
    world = invent(a)
    write_places(a, world)
    write_people(a, world)
    write_companies_and_works(a, world)
    a.rng.shuffle(a.documents)   # the corpus in no order a page's paragraphs could be found by
    ask_all(a, world.works, world.companies, world.people)
    case = {"title": f"Atlas (seed {seed}): an invented encyclopedia",
            "description": f"{len(a.documents)} paragraphs of {len(a.entities)} invented pages; questions of two to "
                           "four hops (benchmarks/atlas.py). For choosing only.",
            "source": f"benchmarks/atlas.py, seed {seed}", "license": "CC0"}
    return {"documents.json": a.documents, "questions.json": a.questions, "case.json": case}, list(a.entities.values())


# A chain: the relations followed from a named start, and how the question ends
Chain = tuple[str, tuple[str, ...], str]
CHAINS: dict[str, list[Chain]] = {
    "2hop": [("work", ("creator",), "born"), ("work", ("maker",), "founder"), ("work", ("creator",), "spouse"),
             ("company", ("founder",), "born"), ("person", (), "country"), ("company", (), "hq_country")],
    "3hop": [("work", ("creator",), "country"), ("work", ("maker", "founder"), "born"),
             ("work", ("maker",), "hq_country"), ("work", ("creator", "spouse"), "born"),
             ("company", ("founder",), "country"), ("person", ("spouse",), "country")],
    "4hop": [("work", ("creator",), "capital"), ("work", ("maker", "founder"), "country"),
             ("work", ("creator", "spouse"), "country"), ("company", ("founder",), "capital")],
}
# The facts each ending reads, after the chain: a person's birthplace, its country, that country's capital
ENDING_FACTS = {"born": ("born",), "country": ("born", "country"), "capital": ("born", "country", "capital"),
                "founder": ("founder",), "spouse": ("spouse",), "hq_country": ("hq", "country")}


def ask_all(a: Atlas, works: list[Entity], companies: list[Entity], people: list[Entity]) -> None:
    starts = {"work": works, "company": companies, "person": people}
    used: set[str] = set()
    for kind, count in QUESTIONS.items():
        made = tries = 0
        while made < count and tries < 10_000:
            tries += 1
            start_kind, relations, ending = a.rng.choice(CHAINS[kind])
            start = a.rng.choice(starts[start_kind])
            if start.name in used:   # one question a start: a page asked about twice would be half seen
                continue
            question = chain_question(a, start, relations, ending)
            if question is None:
                continue
            used.add(start.name)
            text, answer, docs = question
            a.questions.append({"id": f"atlas-{len(a.questions) + 1:03d}", "question": text, "type": kind,
                                "supporting_docs": docs, "expected_answer": answer, "answers": [answer]})
            made += 1


def chain_question(a: Atlas, start: Entity, relations: tuple[str, ...], ending: str
                   ) -> tuple[str, str, list[str]] | None:
    """The question, its answer and supporting paragraphs, or None where the chain breaks (no spouse stated)."""
    phrase, here, docs = start.name, start, []
    words: dict[str, list[str] | Callable[[Entity], list[str]]] = {
        "creator": lambda e: CREATOR[e.medium], "maker": lambda e: MAKER[e.medium], **PHRASES}
    for relation in relations:
        if relation not in here.facts:
            return None
        options = words[relation]
        phrase = a.rng.choice(options(here) if callable(options) else options).format(phrase)
        docs.append(here.where[relation])
        here = a.entities[here.facts[relation]]
    for fact in ENDING_FACTS[ending]:
        if fact not in here.facts:
            return None
        docs.append(here.where[fact])
        here = a.entities[here.facts[fact]]
    text = a.rng.choice(ENDINGS[ending]).format(phrase)
    return text[0].upper() + text[1:], here.name, list(dict.fromkeys(docs))


def load_atlas(seed: int = SEED) -> Case:
    """The world as a case, loaded like any case."""
    files, _ = build(seed)
    return load_files([(name, json.dumps(value).encode()) for name, value in files.items()], name=f"atlas-{seed}")


if __name__ == "__main__":
    files, entities = build()
    docs, questions = files["documents.json"], files["questions.json"]
    titles = {d["title"] for d in docs}
    print(f"{len(docs)} paragraphs, {len(titles)} titles, {len(docs) - len(titles)} paragraphs share a title; "
          f"{len(questions)} questions")
    for q in questions[:: max(1, len(questions) // 12)]:
        print(q["type"], q["question"], "->", q["expected_answer"], q["supporting_docs"])
