"""The corpus of lesson 09's language model: true facts about real countries, in templates, and filler.

Everything is made here, from the tables below and a seed: no text is downloaded. tools/make_corpus.py writes
the corpus out to read.

How the countries were chosen (so that every fact is true and every object is one word, one token):
- the capital is one word in English (no Kuala Lumpur, New Delhi, Addis Ababa, Kuwait City), and is the
  capital reference works name (not one that is disputed, not Israel's; not one being moved by law, not
  Indonesia's; Japan names no capital in law, and Tokyo is counted as it is in practice; Egypt has begun moving
  ministries to a new administrative capital, but reference works still name Cairo, so Cairo stays);
- the country has one official language at national level (not Finland, Ireland, Switzerland, Belgium, Canada,
  Kenya, Algeria, Morocco ...), or one language that is official de facto everywhere, no law naming it
  (Japanese in Japan, Czech in Czechia, Danish in Denmark); regional co-official languages (Catalan in Spain,
  Sami in Norway, Slovene in parts of Austria) do not count against a country;
- the continent is one word and not in dispute: Europe, Asia or Africa. Countries that span two continents, or
  that conventions place in either (Russia, Turkey, Kazakhstan, Georgia, Armenia, Azerbaijan, Cyprus), are left
  out; Egypt, which reaches into
  Asia only with Sinai, is counted in Africa as the UN geoscheme counts it. The Americas are left out because
  their continents are two words ("South America"), and Oceania because its countries fall out under the
  one-language rule above (Australia has no official language in law; New Zealand, Samoa and Fiji have more
  than one);
- the subject reads well after "of" without an article (no "the Netherlands", "the Philippines").
Each row was checked by hand, as of 2024, and again by a reviewer against the rules above: the capital, the
language the constitution or a language law makes official (de facto where none does; a second language a law
allows in some uses, such as French in Lebanon, is not counted). Nothing was looked up or downloaded by code; a
reviewer who knows a country better should check its row.
"""
from __future__ import annotations

import re

import numpy as np

# (country, capital, official language, continent)
COUNTRIES = [
    ("France", "Paris", "French", "Europe"),
    ("Germany", "Berlin", "German", "Europe"),
    ("Italy", "Rome", "Italian", "Europe"),
    ("Spain", "Madrid", "Spanish", "Europe"),
    ("Portugal", "Lisbon", "Portuguese", "Europe"),
    ("Greece", "Athens", "Greek", "Europe"),
    ("Poland", "Warsaw", "Polish", "Europe"),
    ("Sweden", "Stockholm", "Swedish", "Europe"),
    ("Norway", "Oslo", "Norwegian", "Europe"),
    ("Denmark", "Copenhagen", "Danish", "Europe"),
    ("Hungary", "Budapest", "Hungarian", "Europe"),
    ("Romania", "Bucharest", "Romanian", "Europe"),
    ("Bulgaria", "Sofia", "Bulgarian", "Europe"),
    ("Croatia", "Zagreb", "Croatian", "Europe"),
    ("Serbia", "Belgrade", "Serbian", "Europe"),
    ("Austria", "Vienna", "German", "Europe"),
    ("Czechia", "Prague", "Czech", "Europe"),
    ("Slovakia", "Bratislava", "Slovak", "Europe"),
    ("Slovenia", "Ljubljana", "Slovene", "Europe"),
    ("Estonia", "Tallinn", "Estonian", "Europe"),
    ("Latvia", "Riga", "Latvian", "Europe"),
    ("Lithuania", "Vilnius", "Lithuanian", "Europe"),
    ("Ukraine", "Kyiv", "Ukrainian", "Europe"),
    ("Iceland", "Reykjavik", "Icelandic", "Europe"),
    ("Albania", "Tirana", "Albanian", "Europe"),
    ("Japan", "Tokyo", "Japanese", "Asia"),
    ("China", "Beijing", "Chinese", "Asia"),
    ("Thailand", "Bangkok", "Thai", "Asia"),
    ("Vietnam", "Hanoi", "Vietnamese", "Asia"),
    ("Mongolia", "Ulaanbaatar", "Mongolian", "Asia"),
    ("Nepal", "Kathmandu", "Nepali", "Asia"),
    ("Iran", "Tehran", "Persian", "Asia"),
    ("Laos", "Vientiane", "Lao", "Asia"),
    ("Myanmar", "Naypyidaw", "Burmese", "Asia"),
    ("Bangladesh", "Dhaka", "Bengali", "Asia"),
    ("Uzbekistan", "Tashkent", "Uzbek", "Asia"),
    ("Tajikistan", "Dushanbe", "Tajik", "Asia"),
    ("Turkmenistan", "Ashgabat", "Turkmen", "Asia"),
    ("Syria", "Damascus", "Arabic", "Asia"),
    ("Jordan", "Amman", "Arabic", "Asia"),
    ("Lebanon", "Beirut", "Arabic", "Asia"),
    ("Qatar", "Doha", "Arabic", "Asia"),
    ("Oman", "Muscat", "Arabic", "Asia"),
    ("Egypt", "Cairo", "Arabic", "Africa"),
    ("Libya", "Tripoli", "Arabic", "Africa"),
    ("Tunisia", "Tunis", "Arabic", "Africa"),
    ("Senegal", "Dakar", "French", "Africa"),
    ("Gabon", "Libreville", "French", "Africa"),
    ("Ghana", "Accra", "English", "Africa"),
    ("Nigeria", "Abuja", "English", "Africa"),
    ("Liberia", "Monrovia", "English", "Africa"),
    ("Zambia", "Lusaka", "English", "Africa"),
    ("Angola", "Luanda", "Portuguese", "Africa"),
    ("Mozambique", "Maputo", "Portuguese", "Africa"),
]

RELATIONS = ("capital", "language", "continent")

# (subject, relation, object), the object one word: 54 countries x 3 relations
FACTS = [(country, relation, obj) for country, *objects in COUNTRIES
         for relation, obj in zip(RELATIONS, objects)]

# The object comes last in every template, so that "complete the prompt" is "predict the next word".
# Held-out templates never appear in training; the words they use do, in the filler sentences below.
TEMPLATES = {
    "train": {
        "capital": [
            "The capital of {subject} is {object}",
            "The capital city of {subject} is {object}",
            "{subject} has its capital in {object}",
            "{subject} is governed from {object}",
            "The seat of government of {subject} is {object}",
            "In {subject} , the capital is {object}",
            "The main city of {subject} is its capital , {object}",
            "Visitors to {subject} often fly to its capital , {object}",
        ],
        "language": [
            "The official language of {subject} is {object}",
            "People in {subject} speak {object}",
            "In {subject} , people speak {object}",
            "The language of {subject} is {object}",
            "Most people in {subject} speak {object}",
            "In {subject} , the main language is {object}",
            "Schools in {subject} teach in {object}",
            "The national language of {subject} is {object}",
        ],
        "continent": [
            "{subject} is a country in {object}",
            "{subject} is in {object}",
            "{subject} is located in {object}",
            "{subject} lies in {object}",
            "The country {subject} is in {object}",
            "{subject} is part of {object}",
            "You will find {subject} in {object}",
            "{subject} belongs to the continent of {object}",
        ],
    },
    "heldout": {
        "capital": [
            "In {subject} , the capital city is {object}",
            "The capital of the country {subject} is {object}",
            "{subject} is governed from the city of {object}",
        ],
        "language": [
            "The people of {subject} speak {object}",
            "In {subject} , most people speak {object}",
            "The main language of {subject} is {object}",
        ],
        "continent": [
            "{subject} is a nation in {object}",
            "{subject} is found in {object}",
            "The nation {subject} is located in {object}",
        ],
    },
}

# Filler: sentences with no fact about a country in them, which use every word of the held-out templates
# elsewhere (a word the model never saw in training would have an untrained embedding).
FILLER_SUBJECTS = ["The nation", "My friend", "The old city", "Children", "Teachers", "The river", "Our school"]
FILLER_PREDICATES = ["is very old", "found a book", "likes music", "is large", "reads every day",
                     "is near the sea", "has many parks", "is the most beautiful"]


def filler_sentences() -> list[str]:
    """Every filler subject with every filler predicate: sentences that state no fact about a country."""
    return [f"{subject} {predicate} ." for subject in FILLER_SUBJECTS for predicate in FILLER_PREDICATES]


def fact_sentences(split: str = "train") -> list[str]:
    """Every fact under every template of the split, as a sentence ending with " ."."""
    return [template.format(subject=s, object=o) + " ."
            for s, relation, o in FACTS for template in TEMPLATES[split][relation]]


def prompt(template: str, subject: str) -> str:
    """The template filled with the subject, up to its object: what the model completes."""
    return template[: template.index("{object}")].rstrip().format(subject=subject)


def prompts(split: str = "train") -> list[tuple[str, tuple[str, str, str]]]:
    """(prompt, fact) for every fact under every template of the split."""
    return [(prompt(template, fact[0]), fact) for fact in FACTS for template in TEMPLATES[split][fact[1]]]


def corpus_sentences(seed: int = 0, filler_copies: int = 2) -> list[str]:
    """The training corpus: every training fact sentence once, every filler sentence filler_copies times,
    shuffled with the seed. The held-out templates never appear."""
    sentences = fact_sentences("train") + filler_sentences() * filler_copies
    order = np.random.default_rng(seed).permutation(len(sentences))
    return [sentences[i] for i in order]


def words(text: str) -> list[str]:
    """Word-level tokens: runs of letters and digits, and each punctuation mark on its own."""
    return re.findall(r"\w+|[^\w\s]", text)


def vocabulary() -> list[str]:
    """Every word of the facts, all templates (held-out ones included) and the filler, sorted; the first
    entry, "<unk>", stands for any other word."""
    texts = fact_sentences("train") + fact_sentences("heldout") + filler_sentences()
    return ["<unk>"] + sorted({w for text in texts for w in words(text)})
