"""Synthetic hub-heavy knowledge graphs with templated questions, for tests and benchmarks.

Six domains with their own relation vocabularies: a football league and a world of
organisations with upper-case relation types, families in the style of a Freebase dump
(lower-case `snake_case` names and relations, kinship asked for by synonyms: "father" for
`parents`, "wife" for `spouse`), and a software industry whose relations are nouns, as
Wikidata names its properties (`EMPLOYER`, `DEVELOPER`: "who makes X"), and bands named as
DBpedia names things (camelCase, `bandMember`), and politics with Wikidata's property labels
("member of political party"; the last two written after the engine was tuned); the families
graph is also asked as PathQuestion asks (`KINSHIP`: "X's wife's father", "X's son"). A few
nodes are hubs (a position, a field, an organisation with hundreds of members), every member has
several relations, and most relations are also stored the other way round: as an
`_INVERSE` twin (`PLAYS_IN_CLUB_INVERSE`) or as a twin named otherwise (`HAS_MEMBER` for
`MEMBER_OF`). Questions come from templates with many paraphrases, in five kinds: one hop,
two hops from a leaf, two hops from a hub, two anchors, three hops. Every name is invented
(seeded), so no model has seen the answers. The answer set of a question is computed by
walking its relation path over the generated triples.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

Triple = tuple[str, str, str]
KINDS = ("1-hop", "2-hop leaf", "2-hop hub", "two-anchor", "3-hop")

_ONSETS = "b d f g k l m n p r s t v z br dr gr kr pr st tr th sh ch".split()
_VOWELS = "a e i o u ai ea io".split()
_CODAS = "n r l s k m nd rt sk th".split()


@dataclass(frozen=True, slots=True)
class Question:
    kind: str
    text: str
    topics: tuple[str, ...]  # the entities the question names
    answers: frozenset[str]
    template: str
    hub_start: bool = False


@dataclass(slots=True)
class Graph:
    """The triples of one domain and the questions asked about it."""

    domain: str
    triples: list[Triple] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    out: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    back: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    classes: dict[str, list[str]] = field(default_factory=dict)
    hubs: set[str] = field(default_factory=set)
    relations: set[str] = field(default_factory=set)  # as a spec names them (no twins)

    def add(self, subject: str, relation: str, obj: str, twin: str | None) -> None:
        """A fact, and its twin stored the other way round (`~` + relation: `_INVERSE`)."""
        self.triples.append((subject, relation, obj))
        self.out[(subject, relation)].add(obj)
        self.back[(obj, relation)].add(subject)
        self.relations.add(relation)
        if twin is not None:
            self.triples.append((obj, relation + "_INVERSE" if twin == "~" else twin, subject))

    def walk(self, start: str, path: str) -> set[str]:
        """Follow `path` ("R1 ~R2": R1 forwards, then R2 backwards) from `start`."""
        frontier = {start}
        for step in self.steps(path):
            table, relation = (self.back, step[1:]) if step.startswith("~") else (self.out, step)
            frontier = {n for node in frontier for n in table[(node, relation)]}
        return frontier

    def steps(self, path: str) -> list[str]:
        """The relations of a spec's path, split at commas when its relation names have spaces
        ("place of birth, country"), else at spaces ("PLAYS_IN_CLUB ~LOCATED_IN")."""
        if "," in path:
            return [step.strip() for step in path.split(",")]
        return [path] if path.lstrip("~") in self.relations else path.split()


def _word(rng: random.Random, syllables: int) -> str:
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(syllables)]
    return ("".join(parts) + rng.choice(_CODAS)).capitalize()


def _names(rng: random.Random, n: int, pattern: str, taken: set[str]) -> list[str]:
    """`n` unique invented names; `pattern` has `{}` for each invented word."""
    out: list[str] = []
    while len(out) < n:
        name = pattern.format(*(_word(rng, rng.choice((1, 2))) for _ in range(pattern.count("{}"))))
        if name.casefold() not in taken:
            taken.add(name.casefold())
            out.append(name)
    return out


def _pick(rng: random.Random, items: list[str], skew: float) -> str:
    """One of `items`, the first ones more often (skew 0: uniform)."""
    weights = [1.0 / (1 + i) ** skew for i in range(len(items))]
    return rng.choices(items, weights)[0]


def football(seed: int = 0, players: int = 500) -> Graph:
    rng = random.Random(seed)
    taken: set[str] = set()
    g = Graph("football")
    countries = _names(rng, 14, "{}", taken)
    cities = _names(rng, 24, "{}", taken)
    clubs = _names(rng, 22, "FC {}", taken)
    coaches = _names(rng, 22, "{} {}", taken)
    positions = ["goalkeeper", "defender", "midfielder", "forward"]
    numbers = [str(n) for n in range(1, 24)]
    g.hubs |= {*positions, *numbers, *countries}
    g.classes |= {"country": countries, "club": clubs, "coach": coaches, "position": positions}
    g.classes["number"] = numbers
    for i, city in enumerate(cities):
        g.add(city, "LOCATED_IN", countries[i % len(countries)], "~")
    for i, club in enumerate(clubs):
        g.add(club, "BASED_IN", cities[i], "~")
        g.add(club, "COACHED_BY", coaches[i], "~")
        g.add(coaches[i], "BORN_IN", rng.choice(cities), None)
    g.classes["player"] = _names(rng, players, "{} {}", taken)
    for person in g.classes["player"]:
        club = _pick(rng, clubs, 0.3)
        home = countries[clubs.index(club) % len(countries)]
        country = home if rng.random() < 0.6 else _pick(rng, countries, 0.5)
        g.add(person, "PLAYS_IN_CLUB", club, "~")
        g.add(person, "IS_IN_COUNTRY", country, "~")
        g.add(person, "PLAYS_POSITION", _pick(rng, positions, 0.4), "~")
        g.add(person, "WEARS_NUMBER", rng.choice(numbers), "~")
    return g


def organisations(seed: int = 0, people: int = 500) -> Graph:
    rng = random.Random(seed + 1)
    taken: set[str] = set()
    g = Graph("organisations")
    countries = _names(rng, 12, "{}", taken)
    cities = _names(rng, 24, "{}", taken)
    orgs = _names(rng, 6, "{} Society", taken) + _names(rng, 4, "{} Institute", taken)
    universities = _names(rng, 10, "University of {}", taken)
    fields = ["astronomy", "linguistics", "geology", "economics", "botany", "medicine"]
    g.hubs |= {*orgs, *fields, *countries}
    g.classes |= {"country": countries, "org": orgs, "university": universities, "field": fields}
    for i, city in enumerate(cities):
        g.add(city, "CITY_OF", countries[i % len(countries)], "~")
    for i, uni in enumerate(universities):
        g.add(uni, "LOCATED_IN", cities[(i * 5) % len(cities)], "~")
    for i, org in enumerate(orgs):
        g.add(org, "HEADQUARTERED_IN", cities[(i * 7 + 3) % len(cities)], "~")
    names = g.classes["person"] = _names(rng, people, "{} {}", taken)
    for i, person in enumerate(names):
        g.add(person, "MEMBER_OF", _pick(rng, orgs, 0.8), "HAS_MEMBER")
        if rng.random() < 0.3:
            g.add(person, "MEMBER_OF", _pick(rng, orgs, 0.2), "HAS_MEMBER")
        g.add(person, "NATIONALITY", _pick(rng, countries, 0.3), "~")
        g.add(person, "WORKS_IN_FIELD", _pick(rng, fields, 0.5), "~")
        g.add(person, "GRADUATED_FROM", rng.choice(universities), "~")
        g.add(person, "LIVES_IN", rng.choice(cities), None)
        if i < len(orgs):
            g.add(orgs[i], "FOUNDED_BY", person, "~")
    return g


def families(seed: int = 0, couples: int = 60) -> Graph:
    """Three generations of families: each child has both parents (a married couple) and the
    father's surname; everyone has a gender, a religion, a nationality, a profession and a
    birthplace. Only kinship and birthplace have twins, so a hub start walks edges backwards."""
    rng = random.Random(seed + 2)
    taken: set[str] = set()
    g = Graph("families")
    countries = _snake(_names(rng, 10, "{}", taken))
    cities = _snake(_names(rng, 30, "{}", taken))
    religions = ["catholicism", "islam", "judaism", "buddhism", "hinduism", "protestantism"]
    professions = [
        "actor", "politician", "lawyer", "writer", "singer", "physician",
        "soldier", "journalist", "teacher", "farmer", "priest", "engineer",
    ]  # fmt: skip
    g.hubs |= {*countries, *religions, *professions, "male", "female"}
    g.classes |= {"country": countries, "religion": religions, "profession": professions}
    for i, city in enumerate(cities):
        g.add(city, "contained_by", countries[i % len(countries)], "contains")
    people: list[str] = []
    pairs = [
        (
            _person(g, rng, _word(rng, 2), taken, cities),
            _person(g, rng, _word(rng, 2), taken, cities),
        )
        for _ in range(couples)
    ]
    for _generation in range(2):
        children: list[str] = []
        for father, mother in pairs:
            for other in ((father, mother), (mother, father)):
                g.add(other[0], "spouse", other[1], None)
            surname = father.split("_")[-1].capitalize()
            for _child in range(rng.randint(1, 4)):
                child = _person(g, rng, surname, taken, cities)
                g.add(child, "parents", father, "children")
                g.add(child, "parents", mother, "children")
                children.append(child)
        people += [p for pair in pairs for p in pair]
        pairs = _marry(rng, children)[:couples]
    g.classes["person"] = people
    g.classes["parent"] = sorted({p for (p, r) in g.back if r == "parents"})
    g.classes["child"] = sorted({c for (c, r) in g.out if r == "parents"})
    return g


def companies(seed: int = 0, people: int = 600) -> Graph:
    """A software industry named the way Wikidata names its properties: nouns for relations
    (`EMPLOYER`, `DEVELOPER`, `HEADQUARTERS_LOCATION`), so a question's verb ("works at",
    "makes") never repeats a relation's name. Large employers, industries and programming
    languages are the hubs."""
    rng = random.Random(seed + 3)
    taken: set[str] = set()
    g = Graph("companies")
    countries = _names(rng, 10, "{}", taken)
    cities = _names(rng, 20, "{}", taken)
    firms = _names(rng, 8, "{} Labs", taken) + _names(rng, 12, "{} Systems", taken)
    schools = _names(rng, 8, "{} Polytechnic", taken)
    products = _names(rng, 60, "{}", taken)
    languages = ["rust", "python", "java", "haskell", "kotlin", "erlang"]
    industries = ["fintech", "robotics", "biotech", "gaming", "logistics"]
    g.hubs |= {*countries, *languages, *industries, *firms[:4]}
    g.classes |= {"country": countries, "company": firms, "product": products}
    g.classes |= {"language": languages, "industry": industries}
    for i, city in enumerate(cities):
        g.add(city, "COUNTRY", countries[i % len(countries)], "~")
    for i, school in enumerate(schools):
        g.add(school, "LOCATION", cities[(i * 3) % len(cities)], "~")
    staff = g.classes["person"] = _names(rng, people, "{} {}", taken)
    for i, firm in enumerate(firms):
        g.add(firm, "HEADQUARTERS_LOCATION", cities[(i * 7 + 1) % len(cities)], "~")
        g.add(firm, "INDUSTRY", _pick(rng, industries, 0.5), "~")
        g.add(firm, "CHIEF_EXECUTIVE_OFFICER", staff[i], "~")
    for product in products:
        g.add(product, "DEVELOPER", _pick(rng, firms, 0.6), "PRODUCT")
        g.add(product, "PROGRAMMING_LANGUAGE", _pick(rng, languages, 0.4), "~")
    for i, person in enumerate(staff):
        firm = firms[i] if i < len(firms) else _pick(rng, firms, 0.9)  # each firm's CEO first
        g.add(person, "EMPLOYER", firm, "EMPLOYEE")
        g.add(person, "CITIZENSHIP", _pick(rng, countries, 0.5), "~")
        g.add(person, "EDUCATED_AT", rng.choice(schools), "~")
        g.add(person, "RESIDENCE", rng.choice(cities), None)
    g.classes["school"] = schools
    return g


def music(seed: int = 0, musicians: int = 500) -> Graph:
    """Bands and their records with relations named as DBpedia names them (camelCase:
    `birthPlace`, `recordLabel`), written after the engine was tuned on the other four. A
    band's members are stored both ways, as `memberOf` and as `bandMember` from the band: the
    word "band" names the twin whose direction is not the question's. Genres, instruments,
    countries and labels are the hubs."""
    rng = random.Random(seed + 11)
    taken: set[str] = set()
    g = Graph("music")
    countries = _names(rng, 12, "{}", taken)
    cities = _names(rng, 26, "{}", taken)
    labels = _names(rng, 8, "{} Records", taken)
    bands = _names(rng, 45, "The {}s", taken)
    producers = _names(rng, 20, "{} {}", taken)
    albums = _names(rng, 160, "{} {}", taken)
    genres = ["jazz", "punk", "folk", "techno", "opera", "reggae"]
    instruments = ["guitar", "drums", "bass", "keyboards", "violin", "saxophone"]
    g.hubs |= {*countries, *genres, *instruments, *labels}
    g.classes |= {"country": countries, "label": labels, "band": bands, "genre": genres}
    g.classes |= {"instrument": instruments, "album": albums}
    for i, city in enumerate(cities):
        g.add(city, "country", countries[i % len(countries)], "~")
    for i, label in enumerate(labels):
        g.add(label, "basedIn", cities[(i * 5 + 2) % len(cities)], "~")
    for band in bands:
        g.add(band, "hometown", rng.choice(cities), "~")
        g.add(band, "genre", _pick(rng, genres, 0.5), "~")
        g.add(band, "recordLabel", _pick(rng, labels, 0.6), "signedArtist")
    for producer in producers:
        g.add(producer, "birthPlace", rng.choice(cities), None)
    for album in albums:
        g.add(album, "artist", _pick(rng, bands, 0.3), "~")
        g.add(album, "producer", rng.choice(producers), "~")
    g.classes["musician"] = _names(rng, musicians, "{} {}", taken)
    for person in g.classes["musician"]:
        g.add(person, "memberOf", _pick(rng, bands, 0.4), "bandMember")
        g.add(person, "instrument", _pick(rng, instruments, 0.4), "~")
        g.add(person, "birthPlace", rng.choice(cities), None)
    return g


def politics(seed: int = 0, politicians: int = 500) -> Graph:
    """Parties and politicians with relations named by Wikidata's property labels, spaces and
    all ("member of political party", "located in the administrative territorial entity"),
    stored one way only as Wikidata stores them, but for `spouse`, stored both ways under one
    name. Written after the engine was tuned on the other five. Countries, offices and
    ideologies are the hubs."""
    rng = random.Random(seed + 17)
    taken: set[str] = set()
    g = Graph("politics")
    countries = _names(rng, 8, "{}", taken)
    provinces = _names(rng, 16, "{}", taken)
    cities = _names(rng, 40, "{}", taken)
    parties = _names(rng, 12, "{} Party", taken) + _names(rng, 6, "{} Alliance", taken)
    universities = _names(rng, 10, "University of {}", taken)
    ideologies = ["liberalism", "socialism", "conservatism", "green politics", "nationalism"]
    offices = ["senator", "mayor", "governor", "ambassador", "minister", "judge"]
    people = g.classes["politician"] = _names(rng, politicians, "{} {}", taken)
    g.hubs |= {*countries, *offices, *ideologies}
    g.classes |= {"country": countries, "party": parties, "ideology": ideologies}
    g.classes["office"] = offices
    for i, province in enumerate(provinces):
        g.add(province, "country", countries[i % len(countries)], None)
    for i, city in enumerate(cities):
        g.add(city, "located in the administrative territorial entity", provinces[i % 16], None)
    for country, city in zip(countries, cities, strict=False):
        g.add(country, "capital", city, None)
    for university in universities:
        g.add(
            university, "located in the administrative territorial entity", rng.choice(cities), None
        )
    for i, party in enumerate(parties):
        g.add(party, "political ideology", _pick(rng, ideologies, 0.3), None)
        g.add(party, "country", countries[i % len(countries)], None)
        g.add(party, "chairperson", people[i], None)
    for i, person in enumerate(people):
        party = parties[i] if i < len(parties) else _pick(rng, parties, 0.5)
        g.add(person, "member of political party", party, None)
        g.add(person, "position held", _pick(rng, offices, 0.4), None)
        g.add(person, "place of birth", rng.choice(cities), None)
        g.add(person, "educated at", rng.choice(universities), None)
        g.add(person, "country of citizenship", _pick(rng, countries, 0.5), None)
    for a, b in _marry(rng, people)[: politicians // 4]:
        g.add(a, "spouse", b, None)
        g.add(b, "spouse", a, None)
    return g


def _marry(rng: random.Random, people: list[str]) -> list[tuple[str, str]]:
    """Couples from `people`, never two of the same family (surname)."""
    single = sorted(people)
    rng.shuffle(single)
    pairs = []
    while len(single) > 1:
        first = single.pop()
        other = next((p for p in single if p.split("_")[-1] != first.split("_")[-1]), None)
        if other is None:
            break
        single.remove(other)
        pairs.append((first, other))
    return pairs


def _snake(names: list[str]) -> list[str]:
    return [name.lower().replace(" ", "_") for name in names]


def _person(g: Graph, rng: random.Random, surname: str, taken: set[str], cities: list[str]) -> str:
    name = _snake(_names(rng, 1, "{} " + surname, taken))[0]
    g.add(name, "gender", rng.choice(("male", "female")), None)
    g.add(name, "religion", _pick(rng, g.classes["religion"], 0.6), None)
    g.add(name, "nationality", _pick(rng, g.classes["country"], 0.4), None)
    g.add(name, "profession", _pick(rng, g.classes["profession"], 0.3), None)
    g.add(name, "place_of_birth", rng.choice(cities), "people_born_here")
    return name


# (kind, class of the named entity, relation path, templates); for "two-anchor": the class of
# the entity both anchors are about, and its two relations (to {a}, to {b})
Spec = tuple[str, str, str, tuple[str, ...]]
FOOTBALL: list[Spec] = [
    ("1-hop", "player", "PLAYS_IN_CLUB", (
        "which club does {a} play for", "what team is {a} on", "{a} plays for which club?",
        "name the club of {a}", "which side does {a} turn out for")),
    ("1-hop", "player", "IS_IN_COUNTRY", (
        "what country is {a} from", "which national team does {a} represent",
        "{a} comes from which country", "what is the nationality of {a}")),
    ("1-hop", "player", "PLAYS_POSITION", (
        "what position does {a} play", "in which position does {a} play",
        "what is {a}'s role on the pitch")),
    ("1-hop", "player", "WEARS_NUMBER", (
        "what shirt number does {a} wear", "which number is on the jersey of {a}")),
    ("1-hop", "club", "COACHED_BY", (
        "who coaches {a}", "who is the manager of {a}", "name the head coach of {a}")),
    ("1-hop", "club", "~PLAYS_IN_CLUB", (
        "who plays for {a}", "name a player of {a}", "which footballers are in the squad of {a}")),
    ("2-hop leaf", "player", "PLAYS_IN_CLUB BASED_IN", (
        "in which city is the club of {a} based", "where is the team of {a} based",
        "what city is home to the club {a} plays for")),
    ("2-hop leaf", "player", "PLAYS_IN_CLUB COACHED_BY", (
        "who coaches the team {a} plays for", "who is the manager of {a}'s club",
        "name the coach of the club where {a} plays")),
    ("2-hop leaf", "coach", "~COACHED_BY BASED_IN", (
        "in which city is the club coached by {a} based",
        "where is the team managed by {a} located")),
    ("2-hop leaf", "player", "PLAYS_IN_CLUB ~PLAYS_IN_CLUB", (
        "who are the teammates of {a}", "which players play for the same club as {a}")),
    ("2-hop hub", "country", "~IS_IN_COUNTRY PLAYS_IN_CLUB", (
        "name a club that has a player from {a}", "which teams have players from {a}",
        "what clubs do players from {a} play for",
        "which clubs field footballers of {a} nationality")),
    ("2-hop hub", "position", "~PLAYS_POSITION PLAYS_IN_CLUB", (
        "which clubs have a {a}", "name a team whose squad includes a {a}",
        "for which clubs do the players in the {a} position play")),
    ("2-hop hub", "country", "~LOCATED_IN ~BASED_IN", (
        "which clubs are based in a city of {a}", "name a team based in a city located in {a}")),
    ("2-hop hub", "number", "~WEARS_NUMBER PLAYS_IN_CLUB", (
        "which clubs have a player wearing number {a}",
        "name a team with a player whose shirt number is {a}")),
    ("two-anchor", "player", "PLAYS_IN_CLUB IS_IN_COUNTRY", (
        "which player of {a} is from {b}", "who plays for {a} and comes from {b}",
        "name a footballer from {b} at {a}", "which {b} player is in the squad of {a}")),
    ("two-anchor", "player", "PLAYS_IN_CLUB PLAYS_POSITION", (
        "who is the {b} of {a}", "which {b} plays for {a}", "name a {b} in the squad of {a}")),
    ("3-hop", "player", "PLAYS_IN_CLUB BASED_IN LOCATED_IN", (
        "in which country is the city where the club of {a} is based",
        "which country is the team of {a} based in",
        "the club {a} plays for is based in a city of which country")),
    ("3-hop", "player", "PLAYS_IN_CLUB COACHED_BY BORN_IN", (
        "where was the coach of {a}'s club born",
        "in which city was the manager of the team {a} plays for born")),
    ("3-hop", "coach", "~COACHED_BY BASED_IN LOCATED_IN", (
        "in which country is the club coached by {a} based",
        "which country is home to the team managed by {a}")),
    ("3-hop", "player", "PLAYS_IN_CLUB ~PLAYS_IN_CLUB IS_IN_COUNTRY", (
        "which countries are the teammates of {a} from",
        "what nationalities do the teammates of {a} have")),
]  # fmt: skip
ORGANISATIONS: list[Spec] = [
    ("1-hop", "person", "MEMBER_OF", (
        "which organisation is {a} a member of", "what society does {a} belong to",
        "{a} is part of which group", "name an institution that {a} has joined")),
    ("1-hop", "person", "NATIONALITY", (
        "what is the nationality of {a}", "which country is {a} a citizen of",
        "where does {a} come from")),
    ("1-hop", "person", "WORKS_IN_FIELD", (
        "what field does {a} work in", "what is the discipline of {a}",
        "in which area does {a} do research")),
    ("1-hop", "person", "GRADUATED_FROM", (
        "where did {a} study", "which university did {a} graduate from",
        "what is the alma mater of {a}")),
    ("1-hop", "org", "FOUNDED_BY", (
        "who founded {a}", "who started {a}", "name the founder of {a}")),
    ("2-hop leaf", "person", "GRADUATED_FROM LOCATED_IN", (
        "in which city is the university {a} attended",
        "where is the alma mater of {a} located")),
    ("2-hop leaf", "person", "LIVES_IN CITY_OF", (
        "which country does {a} live in", "in what country is the city where {a} lives")),
    ("2-hop leaf", "person", "MEMBER_OF HEADQUARTERED_IN", (
        "where is the organisation of {a} headquartered",
        "in which city is the society {a} belongs to based")),
    ("2-hop leaf", "org", "FOUNDED_BY NATIONALITY", (
        "what is the nationality of the founder of {a}",
        "which country is the person who founded {a} from")),
    ("2-hop hub", "country", "~NATIONALITY MEMBER_OF", (
        "name an organisation that has a member from {a}",
        "which societies have members who are citizens of {a}",
        "what groups do people from {a} belong to")),
    ("2-hop hub", "org", "~MEMBER_OF WORKS_IN_FIELD", (
        "which fields do members of {a} work in", "what disciplines are represented in {a}",
        "name a field that a member of {a} works in")),
    ("2-hop hub", "field", "~WORKS_IN_FIELD GRADUATED_FROM", (
        "which universities did people working in {a} graduate from",
        "where did the researchers in {a} study")),
    ("2-hop hub", "org", "~MEMBER_OF NATIONALITY", (
        "what countries are the members of {a} from",
        "which nationalities do members of {a} have")),
    ("two-anchor", "person", "MEMBER_OF NATIONALITY", (
        "which member of {a} is from {b}", "who in {a} is a citizen of {b}",
        "name someone from {b} who belongs to {a}")),
    ("two-anchor", "person", "MEMBER_OF WORKS_IN_FIELD", (
        "who in {a} works in {b}", "which member of {a} is a {b} researcher",
        "name someone from {a} working in {b}")),
    ("two-anchor", "person", "GRADUATED_FROM NATIONALITY", (
        "which graduate of {a} is from {b}", "who studied at {a} and is a citizen of {b}")),
    ("3-hop", "person", "GRADUATED_FROM LOCATED_IN CITY_OF", (
        "in which country is the university {a} graduated from",
        "which country is the alma mater of {a} in")),
    ("3-hop", "person", "MEMBER_OF HEADQUARTERED_IN CITY_OF", (
        "in what country is the headquarters of the organisation {a} belongs to",
        "which country hosts the head office of the society of {a}")),
    ("3-hop", "org", "FOUNDED_BY GRADUATED_FROM LOCATED_IN", (
        "in which city is the university that the founder of {a} graduated from",
        "where is the alma mater of the founder of {a} located")),
    ("3-hop", "person", "MEMBER_OF FOUNDED_BY NATIONALITY", (
        "what is the nationality of the founder of the organisation {a} is a member of",
        "which country is the founder of the society of {a} from")),
]  # fmt: skip

FAMILIES: list[Spec] = [
    ("1-hop", "child", "parents", (
        "who are the parents of {a}", "who is {a}'s father", "name the mother of {a}",
        "who raised {a}")),
    ("1-hop", "parent", "~parents", (
        "who are the children of {a}", "name a son or daughter of {a}", "who are {a}'s kids")),
    ("1-hop", "parent", "spouse", (
        "who is {a} married to", "who is the wife of {a}", "name the husband of {a}")),
    ("1-hop", "person", "profession", (
        "what does {a} do for a living", "what is the profession of {a}",
        "what is {a}'s occupation")),
    ("1-hop", "person", "religion", ("what religion does {a} follow", "what is the faith of {a}")),
    ("1-hop", "person", "place_of_birth", ("where was {a} born", "what is the birthplace of {a}")),
    ("2-hop leaf", "child", "parents nationality", (
        "what is the nationality of {a}'s father", "which country are the parents of {a} from",
        "what citizenship does the mother of {a} hold")),
    ("2-hop leaf", "parent", "spouse profession", (
        "what does the spouse of {a} do for a living", "what is the occupation of {a}'s wife",
        "what job does the husband of {a} have")),
    ("2-hop leaf", "parent", "~parents religion", (
        "what religion do the children of {a} follow", "what is the faith of {a}'s kids")),
    ("2-hop leaf", "person", "place_of_birth contained_by", (
        "in which country was {a} born", "what country is the birthplace of {a} in")),
    ("2-hop leaf", "child", "parents parents", (
        "who are the grandparents of {a}", "who are the parents of {a}'s father",
        "name a grandmother of {a}")),
    ("2-hop hub", "religion", "~religion profession", (
        "what professions do followers of {a} have", "what jobs do people of the {a} faith do")),
    ("2-hop hub", "profession", "~profession place_of_birth", (
        "in which cities were people working as {a} born", "where were the {a}s born")),
    ("2-hop hub", "country", "~nationality religion", (
        "which religions do citizens of {a} follow",
        "what faiths are practised by people from {a}")),
    ("2-hop hub", "country", "~contained_by people_born_here", (
        "who was born in a city of {a}", "name someone born in a town located in {a}")),
    ("two-anchor", "child", "parents profession", (
        "which child of {a} is a {b}", "name a {b} whose parent is {a}",
        "which of {a}'s kids works as a {b}")),
    ("two-anchor", "person", "nationality religion", (
        "who from {a} follows {b}", "name a citizen of {a} whose religion is {b}")),
    ("3-hop", "child", "parents place_of_birth contained_by", (
        "in which country was the father of {a} born",
        "what country is the birthplace of {a}'s mother in")),
    ("3-hop", "parent", "spouse parents profession", (
        "what is the profession of the parents of {a}'s spouse",
        "what do the father and mother of the wife of {a} do for a living")),
    ("3-hop", "child", "parents parents nationality", (
        "what is the nationality of {a}'s grandparents",
        "which country are the grandparents of {a} from")),
]  # fmt: skip


# The families graph asked as PathQuestion asks: kinship chained by possessives and "of" in
# both orders ("X's wife's father", "the wife of X's father"), sons and daughters for
# `children`; written after the engine was tuned on FAMILIES (twenty-fourth session)
KINSHIP: list[Spec] = [
    ("2-hop leaf", "parent", "~parents profession", (
        "what is the job of {a}'s son", "what does {a}'s daughter do for a living",
        "what is the occupation of the kid of {a}", "what profession does {a}'s child have")),
    ("2-hop leaf", "parent", "spouse religion", (
        "which religion does {a}'s husband follow", "what faith is the partner of {a}",
        "what is the religion of {a}'s wife")),
    ("2-hop leaf", "child", "parents place_of_birth", (
        "where was {a}'s mother born", "what is the birthplace of {a}'s dad",
        "where was the father of {a} born")),
    ("2-hop leaf", "parent", "~parents spouse", (
        "who is the husband of {a}'s daughter", "who did {a}'s son marry",
        "who is married to the child of {a}")),
    ("2-hop leaf", "child", "parents nationality", (
        "what is the citizenship of {a}'s dad", "what nationality is {a}'s mom")),
    ("2-hop leaf", "child", "parents gender", (
        "what is the gender of {a}'s parent", "what sex is the parent of {a}")),
    ("2-hop leaf", "child", "parents ~parents", (
        "who is {a}'s brother", "who are the siblings of {a}", "name a sister of {a}")),
    ("3-hop", "parent", "spouse parents nationality", (
        "what is the nationality of {a}'s wife's father",
        "which country is the father of the wife of {a} from",
        "what citizenship do the parents of {a}'s spouse have")),
    ("3-hop", "child", "parents spouse religion", (
        "which faith does the wife of {a}'s father follow",
        "what is the religion of the spouse of {a}'s mother")),
    ("3-hop", "parent", "~parents spouse profession", (
        "what does the husband of {a}'s daughter do",
        "what is the occupation of the spouse of {a}'s child")),
    ("3-hop", "child", "parents place_of_birth contained_by", (
        "in what country was {a}'s mom born",
        "which country contains the birthplace of {a}'s father")),
    ("3-hop", "parent", "spouse ~parents place_of_birth", (
        "where were the children of {a}'s wife born",
        "what is the birthplace of the kids of {a}'s husband")),
    ("3-hop", "child", "parents parents profession", (
        "what is the profession of {a}'s grandfather",
        "what did the parents of {a}'s mother do for a living")),
]  # fmt: skip


def kinship(seed: int = 0, couples: int = 60) -> Graph:
    """The families graph, in a user of its own, for `KINSHIP`'s questions."""
    g = families(seed, couples)
    g.domain = "kinship"
    return g


COMPANIES: list[Spec] = [
    ("1-hop", "person", "EMPLOYER", (
        "where does {a} work", "which company employs {a}", "who is {a}'s employer",
        "{a} is on the staff of which firm")),
    ("1-hop", "person", "EDUCATED_AT", (
        "which school did {a} attend", "where was {a} educated", "where did {a} go to college")),
    ("1-hop", "product", "DEVELOPER", (
        "who makes {a}", "which company developed {a}", "what firm is behind {a}")),
    ("1-hop", "product", "PROGRAMMING_LANGUAGE", (
        "what language is {a} written in", "{a} is coded in which language")),
    ("1-hop", "company", "HEADQUARTERS_LOCATION", (
        "where is {a} headquartered", "in which city does {a} have its head office")),
    ("1-hop", "company", "~EMPLOYER", (
        "who works at {a}", "name an employee of {a}", "who is on the payroll of {a}")),
    ("2-hop leaf", "person", "EMPLOYER HEADQUARTERS_LOCATION", (
        "in which city is the employer of {a} headquartered",
        "where is the company {a} works for based")),
    ("2-hop leaf", "product", "DEVELOPER INDUSTRY", (
        "what industry is the maker of {a} in",
        "which sector does the company behind {a} operate in")),
    ("2-hop leaf", "product", "DEVELOPER CHIEF_EXECUTIVE_OFFICER", (
        "who runs the company that developed {a}", "who is the CEO of the firm that makes {a}")),
    ("2-hop leaf", "person", "EMPLOYER ~EMPLOYER", (
        "who are the colleagues of {a}", "who works at the same company as {a}")),
    ("2-hop hub", "industry", "~INDUSTRY HEADQUARTERS_LOCATION", (
        "in which cities are {a} companies headquartered",
        "where are the firms in the {a} sector based")),
    ("2-hop hub", "language", "~PROGRAMMING_LANGUAGE DEVELOPER", (
        "which companies build products in {a}",
        "name a firm that makes software written in {a}")),
    ("2-hop hub", "country", "~CITIZENSHIP EMPLOYER", (
        "which companies employ citizens of {a}", "name a firm with staff from {a}")),
    ("2-hop hub", "company", "~EMPLOYER EDUCATED_AT", (
        "which schools did the employees of {a} attend",
        "where were the people working at {a} educated")),
    ("two-anchor", "person", "EMPLOYER CITIZENSHIP", (
        "which employee of {a} is from {b}", "who works at {a} and holds {b} citizenship")),
    ("two-anchor", "product", "DEVELOPER PROGRAMMING_LANGUAGE", (
        "which product of {a} is written in {b}", "name a {b} program made by {a}")),
    ("3-hop", "product", "DEVELOPER HEADQUARTERS_LOCATION COUNTRY", (
        "in which country is the company that makes {a} headquartered",
        "the developer of {a} has its head office in which country")),
    ("3-hop", "person", "EMPLOYER CHIEF_EXECUTIVE_OFFICER EDUCATED_AT", (
        "where was the boss of {a}'s company educated",
        "which school did the chief executive of {a}'s employer attend")),
    ("3-hop", "person", "EMPLOYER ~DEVELOPER PROGRAMMING_LANGUAGE", (
        "what languages are the products of {a}'s employer written in",
        "in which languages does the company {a} works for write its software")),
]  # fmt: skip


MUSIC: list[Spec] = [
    ("1-hop", "musician", "birthPlace", (
        "where was {a} born", "what is the birthplace of {a}", "which city does {a} come from")),
    ("1-hop", "musician", "instrument", (
        "what does {a} play", "which instrument does {a} play", "what is {a}'s instrument")),
    ("1-hop", "band", "genre", (
        "what kind of music does {a} make", "what genre is {a}", "what style do {a} play")),
    ("1-hop", "album", "artist", (
        "who recorded {a}", "which band made the album {a}", "whose album is {a}")),
    ("1-hop", "band", "~memberOf", (
        "who plays in {a}", "name a member of {a}", "who are the members of {a}")),
    ("1-hop", "album", "producer", ("who produced {a}", "who was the producer of {a}")),
    ("2-hop leaf", "album", "artist recordLabel", (
        "which label is the band behind {a} signed to",
        "what record company does the artist of {a} belong to")),
    ("2-hop leaf", "musician", "memberOf hometown", (
        "where does the band of {a} come from", "in which city was {a}'s band formed")),
    ("2-hop leaf", "album", "producer birthPlace", (
        "where was the producer of {a} born", "what is the hometown of the man who produced {a}")),
    ("2-hop leaf", "musician", "memberOf ~memberOf", (
        "who are {a}'s bandmates", "who plays in the same band as {a}")),
    ("2-hop hub", "genre", "~genre recordLabel", (
        "which labels sign {a} bands", "name a record company with a {a} act")),
    ("2-hop hub", "instrument", "~instrument memberOf", (
        "which bands have a {a} player", "in which bands does someone play the {a}")),
    ("2-hop hub", "country", "~country ~hometown", (
        "which bands come from {a}", "name a group formed in a city of {a}")),
    ("2-hop hub", "label", "~recordLabel genre", (
        "what genres do the bands on {a} play", "which styles of music does {a} release")),
    ("two-anchor", "musician", "memberOf instrument", (
        "who in {a} plays {b}", "which {b} player is a member of {a}")),
    ("two-anchor", "album", "artist producer", (
        "which album by {a} was produced by {b}", "name a record of {a} that {b} produced")),
    ("3-hop", "album", "artist hometown country", (
        "in which country was the band that recorded {a} formed",
        "{a} was made by a band from which country")),
    ("3-hop", "musician", "memberOf recordLabel basedIn", (
        "where is the label of {a}'s band based",
        "in which city is the record company that signed {a}'s band")),
    ("3-hop", "album", "producer birthPlace country", (
        "which country does the producer of {a} come from",
        "in what country was the producer of {a} born")),
]  # fmt: skip


POLITICS: list[Spec] = [
    ("1-hop", "politician", "place of birth", (
        "where was {a} born", "what is {a}'s birthplace", "in which city was {a} born")),
    ("1-hop", "politician", "member of political party", (
        "which party does {a} belong to", "what party is {a} a member of",
        "{a} is in which party")),
    ("1-hop", "politician", "position held", (
        "what office does {a} hold", "what is {a}'s position", "what post does {a} have")),
    ("1-hop", "politician", "spouse", (
        "who is {a} married to", "who is the wife or husband of {a}", "who is {a}'s spouse")),
    ("1-hop", "country", "capital", (
        "what is the capital of {a}", "which city is the capital of {a}")),
    ("1-hop", "party", "~member of political party", (
        "who belongs to {a}", "name a member of {a}")),
    ("1-hop", "party", "political ideology", (
        "what does {a} stand for", "what is the ideology of {a}")),
    ("2-hop leaf", "politician", "member of political party, political ideology", (
        "what ideology does {a}'s party follow",
        "what political ideology does the party of {a} have")),
    ("2-hop leaf", "politician",
     "place of birth, located in the administrative territorial entity", (
        "in which province was {a} born", "which region is {a}'s birthplace in")),
    ("2-hop leaf", "politician", "spouse, member of political party", (
        "which party is {a}'s spouse in", "what party does the husband or wife of {a} belong to")),
    ("2-hop leaf", "politician", "member of political party, chairperson", (
        "who chairs {a}'s party", "who is the leader of the party {a} belongs to")),
    ("2-hop hub", "ideology", "~political ideology, ~member of political party", (
        "which politicians are in a party of {a}", "name a member of a {a} party")),
    ("2-hop hub", "office", "~position held, member of political party", (
        "which parties have a {a}", "name a party with a {a} among its members")),
    ("2-hop hub", "country", "~country of citizenship, educated at", (
        "where did citizens of {a} study", "which universities did people from {a} attend")),
    ("2-hop hub", "country", "~country, chairperson", (
        "who chairs a party of {a}", "who leads the parties of {a}")),
    ("two-anchor", "politician", "member of political party, position held", (
        "which {b} belongs to {a}", "name a member of {a} who is a {b}")),
    ("two-anchor", "politician", "member of political party, place of birth", (
        "which member of {a} was born in {b}", "who in {a} comes from {b}")),
    ("3-hop", "politician", "spouse, member of political party, political ideology", (
        "what ideology does the party of {a}'s spouse follow",
        "what does the party of the person married to {a} stand for")),
    ("3-hop", "party",
     "chairperson, place of birth, located in the administrative territorial entity", (
        "in which province was the chairperson of {a} born",
        "which region does the leader of {a} come from")),
    ("3-hop", "politician",
     "place of birth, located in the administrative territorial entity, country", (
        "in which country was {a} born", "which country is {a}'s birthplace in")),
]  # fmt: skip


def ask(g: Graph, specs: list[Spec], per_kind: int, seed: int = 0) -> list[Question]:
    """`per_kind` questions of each kind (fewer when a kind has no answerable start), spread
    over its specs and templates, each with a randomly drawn named entity."""
    rng = random.Random(seed)
    out: list[Question] = []
    for kind in KINDS:
        chosen = [s for s in specs if s[0] == kind]
        options = [(s, t) for s in chosen for t in s[3]]
        for i in range(per_kind * 4):
            if sum(q.kind == kind for q in out) >= per_kind or not options:
                break
            spec, template = options[i % len(options)]
            question = _two_anchor(g, spec, template, rng) if kind == "two-anchor" else None
            question = question or _path(g, spec, template, rng)
            if question is not None and question.answers:
                out.append(question)
    return out


def _path(g: Graph, spec: Spec, template: str, rng: random.Random) -> Question | None:
    kind, cls, path, _ = spec
    if kind == "two-anchor":
        return None
    start = rng.choice(g.classes[cls])
    answers = g.walk(start, path) - {start}
    text = template.format(a=start)
    return Question(kind, text, (start,), frozenset(answers), template, start in g.hubs)


def _two_anchor(g: Graph, spec: Spec, template: str, rng: random.Random) -> Question:
    _, cls, relations, _ = spec
    to_a, to_b = g.steps(relations)
    pivot = rng.choice(g.classes[cls])
    a = rng.choice(sorted(g.walk(pivot, to_a)))
    b = rng.choice(sorted(g.walk(pivot, to_b)))
    answers = g.walk(a, "~" + to_a) & g.walk(b, "~" + to_b)
    return Question("two-anchor", template.format(a=a, b=b), (a, b), frozenset(answers), template)
