"""A small realistic memory graph for the `graphmem demo` command."""

from __future__ import annotations

DEMO_USER = "demo-alice"

DEMO_FACTS: list[tuple[str, str, str, str]] = [
    ("Alice", "LIVES_IN", "Lisbon", "Alice lives in Lisbon"),
    ("Alice", "WORKS_AT", "Tidewater Labs", "Alice works at Tidewater Labs as a data engineer"),
    ("Alice", "FRIEND_OF", "John", "Alice's friend is John"),
    ("Alice", "FRIEND_OF", "Peter", "Alice's friend is Peter"),
    ("Alice", "SISTER_OF", "Emma", "Alice is Emma's sister"),
    ("Alice", "LIKES", "hiking", "Alice likes hiking"),
    ("Alice", "LIKES", "sourdough baking", "Alice likes baking sourdough bread"),
    ("Alice", "HATES", "badminton", "Alice hates playing badminton"),
    ("Alice", "ALLERGIC_TO", "peanuts", "Alice is allergic to peanuts"),
    ("Alice", "OWNS", "Miso", "Alice owns a cat named Miso"),
    ("Miso", "IS_A", "cat", "Miso is a cat"),
    ("John", "OWNS", "Tommy", "John has a dog named Tommy"),
    ("Tommy", "IS_A", "dog", "Tommy is a golden retriever"),
    ("John", "LIKES", "hiking", "John likes hiking"),
    ("John", "LIVES_IN", "Porto", "John lives in Porto"),
    ("John", "WORKS_AT", "Porto Hospital", "John is a nurse at Porto Hospital"),
    ("Peter", "IS", "Spider-Man", "Peter is Spider-Man"),
    ("Peter", "LIVES_IN", "New York", "Peter lives in New York"),
    ("Peter", "STUDIES_AT", "Empire State University", "Peter studies at Empire State University"),
    ("Emma", "LIVES_IN", "Berlin", "Emma lives in Berlin"),
    ("Emma", "PLAYS", "chess", "Emma plays chess"),
    ("Emma", "MARRIED_TO", "Lukas", "Emma is married to Lukas"),
    ("Lukas", "WORKS_AT", "Siemens", "Lukas works at Siemens"),
    ("Harry", "LIKES", "hiking", "Harry likes hiking"),
    ("Harry", "FRIEND_OF", "John", "Harry is John's friend"),
    ("Alice", "PLANS_TRIP_TO", "Japan", "Alice plans a trip to Japan in April"),
    ("Japan", "HAS_CITY", "Kyoto", "Kyoto is a city in Japan"),
    ("Alice", "WANTS_TO_VISIT", "Kyoto", "Alice wants to visit Kyoto"),
    ("Alice", "READS", "The Left Hand of Darkness", "Alice is reading The Left Hand of Darkness"),
    (
        "The Left Hand of Darkness",
        "WRITTEN_BY",
        "Ursula K. Le Guin",
        "The Left Hand of Darkness was written by Ursula K. Le Guin",
    ),
    ("Alice", "DRIVES", "Renault Zoe", "Alice drives a Renault Zoe"),
    ("Tidewater Labs", "LOCATED_IN", "Lisbon", "Tidewater Labs is in Lisbon"),
    ("Alice", "BIRTHDAY_ON", "March 14", "Alice's birthday is on March 14"),
    ("John", "BIRTHDAY_ON", "July 2", "John's birthday is on July 2"),
    ("Alice", "PREFERS", "oat milk", "Alice prefers oat milk in her coffee"),
]

DEMO_QUERIES = [
    "Who are Alice's friends?",
    "What pet does John have?",
    "Who is Spider-Man?",
    "Where does Alice's sister live?",
    "What should I avoid cooking for Alice?",
    "Who wrote the book Alice is reading?",
]
