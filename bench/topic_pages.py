"""Generated pages of two topics (sports and cooking), for training and testing classifiers.

Used by the classifier tests (a fixture site and a held-out set) and by
``bench/process_bench.py`` (a trained model whose per-page cost is measured). Every page is
English text: a few words of its topic, some words both topics use in their own sense ("serve",
"bowl", "season", "pitch"...), and many general words; the share of topic words varies from
page to page (between :data:`TOPIC_SHARE`), so some pages are easy and some are hard. Page ``i``
of a seed is always the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

TOPICS = ("sports", "cooking")
SPORTS = (
    "football soccer basketball tennis cricket hockey rugby baseball golf athlete athletes "
    "coach referee stadium tournament league championship goal goals striker goalkeeper "
    "midfielder defender quarterback inning wicket racket dribble tackle penalty offside "
    "marathon sprint relay medal olympic olympics fans playoff playoffs semifinal final "
    "victory defeat scored kickoff halftime umpire batting bowler pitcher homerun slam "
    "squad roster transfer trophy").split()
COOKING = (
    "recipe recipes oven bake baking flour sugar butter garlic onion onions simmer boil "
    "saute skillet saucepan whisk knead dough yeast oregano basil pepper salt vinegar olive "
    "roast roasted grill braise marinade broth stock soup stew pasta noodles rice dumpling "
    "dumplings cinnamon vanilla chocolate dessert pastry tart casserole chef kitchen ladle "
    "spatula teaspoon tablespoon ingredients minced chopped diced fillet").split()
# words both topics use, each in its own sense
SHARED = ("serve bowl season pitch plate cup heat court course net match board box draw "
          "fry score batter punch crumble spin toss club round").split()
GENERAL = (
    "the a of and to in is was for on that with as it at by from this be are or an have "
    "not they which one you had were but all we there can been has more if will so about "
    "out up what when who would their them some time into only other new people could "
    "very after first also two way well even because any these most day over back just "
    "how year good make much before here through where long right still great last old "
    "place same another while found small under three never against again each left "
    "home hand part few city began second later world end country week morning evening "
    "friends family local weekend favourite simple quick easy best every often together "
    "start started finish finished watch watched try tried keep kept learn learned").split()
TOPIC_SHARE = (0.06, 0.30)
SHARED_SHARE = 0.10


@dataclass(frozen=True, slots=True)
class TopicPage:
    number: int
    topic: str
    title: str
    description: str

    @property
    def path(self) -> str:
        return f"/{self.topic}/{self.number}.html"

    def html(self) -> str:
        return (f"<html><head><title>{self.title}</title></head><body><h1>{self.title}</h1>"
                f"<p>{self.description}</p></body></html>")


def _words(rng: random.Random, topic_words: list[str], n: int, share: float) -> list[str]:
    out = []
    for _ in range(n):
        draw = rng.random()
        if draw < share:
            out.append(rng.choice(topic_words))
        elif draw < share + SHARED_SHARE:
            out.append(rng.choice(SHARED))
        else:
            out.append(rng.choice(GENERAL))
    return out


def topic_page(number: int, seed: int = 22) -> TopicPage:
    """Page ``number`` of ``seed``: even numbers are sports, odd numbers cooking."""
    rng = random.Random(seed * 1_000_003 + number)
    topic = TOPICS[number % 2]
    vocabulary = SPORTS if topic == "sports" else COOKING
    share = rng.uniform(*TOPIC_SHARE)
    title = " ".join([rng.choice(vocabulary), *_words(rng, vocabulary, rng.randint(2, 5),
                                                      share)]).capitalize()
    text = " ".join(_words(rng, vocabulary, rng.randint(40, 120), share))
    return TopicPage(number, topic, title, text.capitalize() + ".")


def topic_pages(first: int, count: int, seed: int = 22) -> list[TopicPage]:
    """Pages ``first .. first + count - 1`` of ``seed`` (half of each topic)."""
    return [topic_page(i, seed) for i in range(first, first + count)]
