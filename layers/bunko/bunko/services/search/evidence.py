"""Evidence finer than the topic: does some sentence of a passage hold what the question asks?

A team's library is about one domain, and the questions it cannot answer are on that domain
too: "Can I bring my dog to the office?" over a library about offices, "Who was the MVP?" over
half of an article about the game. The passage's cosine and its coverage of the question's
words are high for the topic alone. What an answering passage has and a same-topic one lacks
is the question's *specific* words, in one sentence.

A term is *topic* as far as the other candidates hold it too (the share of the window's other
passages that contain it, counted over SMOOTHING passages more than there are): "office" in a
company library, the game's name in its article. Each query term keeps its background weight
in the question's own language (services/search/background_terms.in_its_language) times the
share of the other passages that lack it, so a word only this passage has weighs fully, one every
passage has weighs nothing, and a word no passage holds ("dog") weighs fully and is missing.
Question words (MIN_WEIGHT: "how many", "what", だれ) ask for an answer, they are not in
it: they weigh nothing here. A passage's `evidence` is the best sentence's share of that
specific weight; `reach` is the
share of the query's background weight that the window holds anywhere, which tells a question
in the library's own words (high) from one in another language or other words (low), where
only the vectors can judge. `absent` is what is left, for a question in the library's own
language only: there, words no passage holds ("育児休業", parental leave, over a handbook
that has neither) say the library does not speak of it, which a paraphrase rarely does. A question in another language than the best candidates has
reach 0 (query_languages on both sides): a German question naming "Harbor Point" holds the
English file's names, not its words.

A person reads a sentence under its document's name and title and the heading it sits under:
the document's name and title say what the passage is about, not whether it answers. So the
question's terms its document's context (name and title, `context`) holds are neutral for
the passage, and its own heading lines ("Budget and costs") count as held by each of its
sentences: "What does the lighthouse report say about the budget?" over the
budget sentence of "harbor-point-report.pdf", titled "Harbor Point Lighthouse", asks only
"budget" of it, and "What is the parental leave policy?" over "leave-policy.md" asks
"parental", which no sentence holds. A question its context holds whole (all but question
words, MIN_WEIGHT) is answered by the passage: evidence 1. `pair` is the evidence of the best
two adjacent sentences: the one before often holds what an answer's "it" or "the work" stands
for.

A Japanese question (it holds kana) is read for what it asks too. Its question words built
on 何 (何年, 何人, 何か月) are bigrams no list holds, so they weighed as a rare name does
(2.0) and asked the passage for the question word itself: they weigh nothing
(`question_terms`). And a question that asks when (いつ, 何年, 何月) or how many (何人,
いくつ, どのくらい) is answered by a number or a date: a passage no sentence of which holds
one (a digit, a kanji numeral, or for "when" 年/月/日/世紀/年代) cannot answer it, and its
evidence loses ANSWER_TYPE (`answer_type`; the classic no-answer check of extractive readers,
on the types a passage's terms show without a tagger). In such a question the noun that names
what it asks (経費の申請期限はいつ: 期限, "deadline", is what the answer "翌月10日まで" is, not
a word it holds; TYPE_NOUNS) is not asked of the passage either. Where / who / what questions ask for
a place, a person or a name, which bigrams cannot tell, and are read as before.

A question's answer is a sentence; a claim is not. "Vitamin D deficiency is unrelated to birth
weight." states what a paper says across its abstract's sentences and its title (SciFact's
claims, or a request such as "Summarise the leave policy."), so a query that states
(is_claim) is read over each whole passage, its document's name and title held with it.

Both are computed in the core from the text the gate already reads, so the local and the
OpenSearch engine are judged alike, and a library of one passage is judged on its own words
(it has no other passages: every term it holds is specific). What a chunk's text gives them
(its headings', sentences' terms and languages: `read_sentences`) is read once at ingest and
stored with the chunk (domain/sentence_terms.py); a chunk stored without it is read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from bunko.domain.keyword_analysis import QueryTerm, index_terms
from bunko.domain.sentence_terms import (
    SentenceTerms,
    decode_sentence_terms,
    encode_sentence_terms,
)
from bunko.domain.sentences import is_heading
from bunko.services.search.background_terms import (
    MIN_WEIGHT,
    in_its_language,
    query_languages,
    tables_mark,
)


@dataclass(frozen=True)
class Evidence:
    evidence: float  # the best sentence's share of the query's specific weight, in [0, 1]
    reach: float  # the share of the query's background weight the window holds, in [0, 1];
    # 0 for a question in another language than the best candidates
    pair: float = 0.0  # as `evidence`, for the best two adjacent sentences
    # the share of the query's background weight no candidate holds, for a question in the
    # candidates' own language (0 across languages, where missing words say nothing)
    absent: float = 0.0


# The topic discount counts this many passages more than the window holds: in a library of
# two or three passages, a word both hold is not yet shown to be the library's topic.
SMOOTHING = 4


# Where one sentence ends and the next begins: end punctuation (then space, or CJK's none), or
# a line break. Coarser than domain/sentences.py (no abbreviations): a sentence cut too early
# only asks more of the evidence, and this is ~50× cheaper, read for every candidate.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


# The version of how `_read` reads a chunk: bump it when what it reads changes (the splitter
# here, is_heading, index_terms). The language tables' own mark is added (reading_version),
# so a new table needs no bump: readings stored by another version are read again.
READER = "1"


def _read(text: str) -> SentenceTerms:
    """A chunk's heading terms, each sentence's terms and its languages."""
    headings: set[str] = set()
    sentences: list[frozenset[str]] = []
    for line in text.splitlines():
        if is_heading(line):
            headings.update(index_terms(line))
            continue
        for part in _SENTENCE_END.split(line):
            if part and not part.isspace() and (terms := frozenset(index_terms(part))):
                sentences.append(terms)
    words = headings.union(*sentences)
    return SentenceTerms(frozenset(headings), tuple(sentences), tuple(query_languages(list(words))))


def reading_version() -> str:
    """The version stored readings name: this reader's and the language tables'."""
    return f"{READER}.{tables_mark()}"


def read_sentences(text: str) -> str:
    """A chunk's sentences as evidence reads them, in the stored form (Chunk.sentence_terms):
    read once, at ingest, so a question does not (domain/sentence_terms.py)."""
    return encode_sentence_terms(_read(text), text, version=reading_version())


@lru_cache(maxsize=8192)
def _units(text: str) -> SentenceTerms:
    """`_read`, kept: a chunk stored without its reading recurs across queries."""
    return _read(text)


@lru_cache(maxsize=8192)
def _stored_units(stored: str, text: str) -> SentenceTerms | None:
    return decode_sentence_terms(stored, text, version=reading_version())


def _chunk_units(text: str, stored: str | None) -> SentenceTerms:
    """The chunk's reading: the one stored with it at ingest, else read from its text."""
    found = _stored_units(stored, text) if stored else None
    return found if found is not None else _units(text)


@lru_cache(maxsize=4096)
def _context_terms(context: str) -> frozenset[str]:
    return frozenset(index_terms(context))


def _held(terms: Sequence[tuple[QueryTerm, float]], text_terms: frozenset[str]) -> list[bool]:
    """Which query terms a text holds (an expanded CJK unigram: inside any short term)."""
    chars = ""
    if any(t.expand for t, _ in terms):
        chars = "".join(t for t in text_terms if len(t) <= 2)
    return [(t.text in chars) if t.expand else (t.text in text_terms) for t, _ in terms]


# The best candidates whose words tell the library's language (a few: cheap, and enough).
LANGUAGE_SAMPLE = 5


def _same_language(
    terms: Sequence[tuple[QueryTerm, float]], units: Sequence[SentenceTerms]
) -> bool | None:
    """Is the question written in a language one of the best candidates is written in?
    None when either side is in no language the term tables know (Thai, a random string):
    then it may be, and its missing words say nothing."""
    asked = set(query_languages([t.text for t, _ in terms]))
    written = [u.languages for u in units if u.languages]
    if not asked or not written:
        return None
    return any(asked.intersection(w) for w in written)


def _share(
    terms: Sequence[tuple[QueryTerm, float]],
    specific: Sequence[float],
    total: float,
    read: frozenset[str],
) -> float:
    """The share of the query's specific weight (`total`) that the terms `read` hold."""
    if total <= 0:
        return 1.0
    held = _held(terms, read)
    return sum(s for s, h in zip(specific, held, strict=True) if h) / total


# A question's first word that asks (English; other languages' questions carry "?"): "What
# causes X." is still a question, whatever its last character.
_ASKING = frozenset(
    [
        "what",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "which",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "has",
        "have",
        "had",
    ]
)
_WORD = re.compile(r"[^\W_]+")
CLAIM_WORDS = 3  # fewer words end in "." as a title or a name does ("Dr.", "Fig. 3.")


def is_claim(query: str) -> bool:
    """Does the query state something (or ask for it: "Summarise the leave policy.") rather
    than ask a question? A sentence of CLAIM_WORDS words or more ending in a full stop, with
    no question mark and not opening with a word that asks. A question's answer is a
    sentence; a claim ("Vitamin D deficiency is unrelated to birth weight.") is what an
    abstract says across its sentences, so its evidence is read over the whole passage.
    Japanese questions often end in 。 (…どこか。, …の名前は。): read as questions."""
    text = query.strip()
    if not text.endswith(".") or "?" in text or "？" in text or "¿" in text:
        return False
    words = _WORD.findall(text)
    return len(words) >= CLAIM_WORDS and words[0].lower() not in _ASKING


# Kana: a question that holds them is Japanese (Chinese has none); the language tables alone
# read a question of kanji and particles (文部科学大臣の通称は？) as Chinese too.
KANA = re.compile(r"[\u3041-\u30ff]")

# What a Japanese question asks for, by its question word: when (a date) or how many (a
# number). 何 before a counter asks a number (何人, 何回, 何か月), before 年/月/日/時/世紀 a
# date; 何と, 何を, 何語, 何色 ask for a name, which no term shows.
WHEN = "when"
HOW_MANY = "how many"
_ASKS_WHEN = re.compile(r"いつ(?!も)|何(?:年|月|日|時|世紀)")
_ASKS_NUMBER = re.compile(
    r"いくつ|いくら|ど(?:の|れ)(?:くらい|ぐらい|ほど)"
    r"|何(?:[人個回本枚台頭匹冊杯件歳度倍位番点割円名社校種階号巻話曲羽隻軒両%％]"
    r"|[かヵヶケカ箇](?:月|所|国|条)|キロ|メートル|パーセント|トン)"
)
# What shows a number or a date among a sentence's terms (digits, kanji numerals, 数 of
# 数百/数十), and a date's words (年/月/日, 世紀, 年代).
_NUMBER = re.compile(r"[0-9一二三四五六七八九十百千万億兆数]")
_DATE = re.compile(r"[年月日紀代]")
# What a sentence of a passage that holds no answer of the asked type costs its evidence.
ANSWER_TYPE = 0.3


def answer_type(query: str) -> str | None:
    """WHEN or HOW_MANY for a Japanese question that asks for a date or a number, else None."""
    if not KANA.search(query) or is_claim(query):
        return None
    if _ASKS_WHEN.search(query):
        return WHEN
    return HOW_MANY if _ASKS_NUMBER.search(query) else None


def holds_type(terms: frozenset[str], wants: str) -> bool:
    """Does a sentence (its terms) hold an answer of the type asked: a number, or a date?"""
    return any(_NUMBER.search(t) or (wants == WHEN and _DATE.search(t)) for t in terms)


# The nouns a question that asks when or how many names its answer by ("申請期限はいつ",
# "the deadline is when": 期限 is what the answer's "10日まで" is, not a word it holds).
TYPE_NOUNS = re.compile(
    "期限|期日|時期|日程|日付|日時|時刻|年代|期間|日数|年数|人数|回数|件数|個数|総数|金額|価格"
    "|値段|費用|割合|比率|人口|距離|面積"
)


def question_terms(query: str) -> list[tuple[QueryTerm, float]]:
    """The query's terms as evidence reads them (background_terms.in_its_language), without a
    Japanese question's words built on 何 (何年, 何人: they ask, and weighed as names) nor,
    in one that asks when or how many, the nouns that name what it asks (TYPE_NOUNS)."""
    if not KANA.search(query):
        return in_its_language(query)
    if answer_type(query) is not None:
        query = TYPE_NOUNS.sub("、", query)  # a break: no bigram straddles where it was
    return [(t, w) for t, w in in_its_language(query) if "何" not in t.text]


def evidence(
    terms: Sequence[tuple[QueryTerm, float]],
    texts: Mapping[str, str],
    context: Mapping[str, str] | None = None,
    *,
    stored: Mapping[str, str | None] | None = None,
    claim: bool = False,
    wants: str | None = None,
) -> dict[str, Evidence]:
    """Chunk id → its Evidence, for the window's passages `texts` (chunk id → text), each
    read with its document's `context` (chunk id → its document's name and title); `stored`:
    chunk id → the reading stored with it at ingest (Chunk.sentence_terms), where there is one.
    A `claim` (is_claim) is read over each whole passage, not its best sentence. `wants`
    (answer_type): a passage with no sentence holding an answer of that type loses
    ANSWER_TYPE of its evidence."""
    total = sum(w for _, w in terms)
    if not terms or total <= 0 or not texts:
        return {}
    context = context or {}
    stored = stored or {}
    units = {cid: _chunk_units(text, stored.get(cid)) for cid, text in texts.items()}
    named = {cid: _context_terms(context.get(cid, "")) for cid in units}
    held = {
        cid: _held(terms, named[cid].union(u.headings, *u.sentences)) for cid, u in units.items()
    }
    count = [sum(h[i] for h in held.values()) for i in range(len(terms))]
    reach = sum(w for (_, w), n in zip(terms, count, strict=True) if n) / total
    same = _same_language(terms, list(units.values())[:LANGUAGE_SAMPLE])
    absent = 1.0 - reach if same else 0.0
    if same is False:
        reach = 0.0  # what it holds of the question are names and numbers, not its words
    others = len(texts) - 1 + SMOOTHING
    out = {}
    for cid, mine in held.items():
        # A question's words its document's name and title hold name the document; a claim's
        # are part of what the document says (read below as held, with the passage)
        neutral = [False] * len(terms) if claim else _held(terms, named[cid])
        specific = [
            0.0 if topic or w <= MIN_WEIGHT else w * (1.0 - (n - int(h)) / others)
            for (_, w), n, h, topic in zip(terms, count, mine, neutral, strict=True)
        ]
        asks = [(w > MIN_WEIGHT, topic) for (_, w), topic in zip(terms, neutral, strict=True)]
        if not any(content for content, _ in asks):  # no word but question words: nothing held
            out[cid] = Evidence(evidence=0.0, reach=reach, absent=absent)
            continue
        if not any(content and not topic for content, topic in asks):
            out[cid] = Evidence(1.0, reach, pair=1.0, absent=absent)  # it names the document
            continue
        headings = units[cid].headings
        sentences = units[cid].sentences or (frozenset(),)
        if claim:  # the passage as one unit, under its name and title
            sentences = (named[cid].union(*sentences),)
        weight = sum(specific)
        best = max(_share(terms, specific, weight, headings | s) for s in sentences)
        pair = max(
            (_share(terms, specific, weight, headings | a | b) for a, b in pairwise(sentences)),
            default=best,
        )
        if wants is not None and not any(holds_type(s, wants) for s in units[cid].sentences):
            best = max(0.0, best - ANSWER_TYPE)
        out[cid] = Evidence(best, reach, pair=max(best, pair), absent=absent)
    return out
