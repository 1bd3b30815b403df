"""ExtractiveChat: the offline default answerer. No generative model, no network: it quotes
whole sentences of the passages, best first, each with its citation number, under a framing
sentence in the user's language (ja / en / zh).

What may be quoted is domain/quotes' job: lines a PDF layout broke are joined, headings and
pieces of sentences are never quoted, a sentence that points back ("This is called …") comes
with the one before it, and nothing twice. A quote is a line `- <sentence> [n]`, followed by
` — <heading>` when it is the first quote under a heading of its passage (where it comes
from: "… $480,000. [2] — Budget and costs").

Which quotes: a sentence scores by the question's terms it holds, each weighted by how rare
it is among the passages' sentences (a word every sentence has says nothing), discounted for
its length and for the rank of its source; the question's own last line counts fully, the
earlier questions a follow-up is searched with (services/follow_up) count half, and what it
says it is about ("… about the budget?", "予算について") counts double. A sentence about the
document itself ("This report describes …", "この規程は、…定める。") counts half: it shares
the question's words for the document, rarely its answer. A question that asks for a number,
a time or a name ("How many …", "When …", "Who …", 何人, いつ, 誰) reads a sentence that holds
none it does not already say at ANSWER_TYPE of its score: the sentence that restates the
question rarely answers it. Up to MAX_QUOTES quotes that score at least RELATIVE_FLOOR of the
best, a source already quoted counting SAME_SOURCE of its score, so an answer draws on several
sources when they compete.

When the question shares at most half of its content terms with the passages, the model that
ranked them (where there is one) reads it too:
- written in another language than the passages (the relevance gate keeps such passages by
  their vectors; `same_language` tells, from the words each language knows): the sentences
  closest to it by that model;
- written in theirs (a paraphrase: "Which company was tasked with restoring the tapes?" over
  "… assigned to Lowry Digital for restoration."): each sentence's word score (over the best
  one's) BLEND_WORDS times, plus its cosine to the question (over the sentences' range), so a
  sentence that says it in other words can rise without one that shares the words falling.
The same when it shares none of them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from bunko.domain.answer_terms import asked_line, terms
from bunko.domain.quotes import Quote, labelled, quotable
from bunko.ports import Embedder
from bunko.ports.chat import EXTRACTIVE_MODEL, ChatRequest

NAME = EXTRACTIVE_MODEL
MAX_QUOTES = 3
SEMANTIC_QUOTES = 3  # as many as by words: the closest sentence is not always the answer
MAX_SENTENCES = 64  # embedded for a semantic choice: the first ones of the best sources
# Chosen on the shared answer sets (docs/chat.md, "Answer quality"), the same for every set.
RELATIVE_FLOOR = 0.2  # a further quote scores at least this share of the best one
SOURCE_DISCOUNT = 0.3  # the n-th source's sentences score 1 / (1 + 0.3 (n - 1))
SAME_SOURCE = 0.6  # a further quote from a source already quoted counts this share
EARLIER_LINES = 0.5  # weight of the earlier questions a follow-up is searched with
KANA_WEIGHT = 0.3  # weight of a bigram of hiragana only: mostly particles and endings
FOCUS = 2.0  # weight of what the question says it is about, against its other words
SELF_REFERENCE = 0.5  # a sentence about the document itself ("This report describes …")
ANSWER_TYPE = 0.7  # a sentence without the number, time or name the question asks for
BLEND_WORDS = 2.0  # a paraphrase's word score against its cosine (both scaled to [0, 1])
# A document's statement of what it is: it shares the question's words for the document,
# rarely its answer ("この規程は、…について定める。", "This report describes …").
_ABOUT_ITSELF = re.compile(
    r"^(?:(?:this|the present|the following)\s+(?:report|document|paper|article|chapter|section|"
    r"policy|regulation|rules?|guide|manual|handbook|memo|note|study|plan|agreement|contract|"
    r"page|book|summary|overview)\b|(?:この|本)(?:規程|規則|規定|文書|報告書|報告|資料|章|節|要綱|"
    r"要領|方針|指針|マニュアル|手引き?|契約書?|論文|ガイド|計画書?)は|(?:本|这份|这个|该)"
    r"(?:报告|文件|规定|章|手册|指南))",
    re.IGNORECASE,
)
_ABOUT = re.compile(r"(?:\b(?:about|regarding|concerning)\s|关于)(?P<focus>[^?？.。!！]+)", re.I)
_NI_TSUITE = re.compile(r"(?P<focus>[^\s、。はがをのにでと]+)(?:について|に関して|に関する)")
INTRO = {
    "en": "Here is what the knowledge base says:",
    "ja": "ナレッジベースによると、次のとおりです。",
    "zh": "根据知识库中的资料：",
}
_HIRAGANA = re.compile("[\u3041-\u309f]")
_KANA_ONLY = re.compile("^[\u3041-\u309f]+$")
# What a question asks for, by its question word (the first that matches).
# fmt: off
_ASKS = (
    ("number", re.compile(
        r"\bhow (?:many|much|long|old|far|tall|large|big|high|fast|often|deep|wide|heavy)\b|"
        r"\bwhat (?:percentage|percent|proportion|number|amount|size)\b|"
        r"何(?:人|個|回|歳|才|本|枚|台|匹|頭|羽|冊|件|名|点|倍|割|%|パーセント|キロ|メートル|トン|円|"
        r"ドル|つ|万|億)|いくつ|いくら|どのくらい|どれくらい|どの程度", re.I)),
    ("time", re.compile(
        r"\bwhen\b|\b(?:what|which) (?:year|years|date|day|month|century|decade|era|period|time)\b|"
        r"いつ|何年|何月|何日|何世紀|何時|何曜", re.I)),
    ("name", re.compile(r"\b(?:who|whom|whose)\b|誰|だれ|何者", re.I)),
)
_MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|"
           "december")
_NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                 "forty|fifty|hundred|thousand|million|billion|dozen|half|several|single|double|"
                 "twice|once")
_DIGITS = r"\d+(?:[.,]\d+)*"  # a number whole: 1754 is the question's year, not a new 1
# What holds such an answer: a name is a capitalised word inside a sentence, or a word in
# kanji or katakana (Japanese names are written so); checked only outside the question's words.
_HOLDS = {
    "number": re.compile(rf"{_DIGITS}|[一二三四五六七八九十百千万億]+|\b(?:{_NUMBER_WORDS})\b", re.I),
    "time": re.compile(
        rf"{_DIGITS}|\b(?:{_MONTHS})\b|\b(?:century|centuries|decade|era|age|period|dynasty|reign|"
        r"spring|summer|autumn|fall|winter)\b|[一二三四五六七八九十〇百千]+(?:年|月|日|世紀)|"
        r"時代|世紀|年代|明治|大正|昭和|平成|令和|江戸|室町|鎌倉|平安|奈良", re.I),
    "name": re.compile(r"(?<=\S )[A-Z][\w'’-]+|[\u30a1-\u30fa\u30fc]{2,}|[\u4e00-\u9fff]{2,}"),
}
# fmt: on


def _question_weights(question: str) -> dict[str, float]:
    """Each question term's weight: the last line's count fully, earlier lines' less, and
    what it asks about ("… say about the budget?", "予算について…") FOCUS times."""
    lines = [line for line in question.split("\n") if line.strip()] or [question]
    weights = dict.fromkeys(terms("\n".join(lines[:-1])), EARLIER_LINES)
    weights.update(dict.fromkeys(terms(lines[-1]), 1.0))
    for term in terms(_focus(lines[-1])) & weights.keys():
        weights[term] *= FOCUS
    return {t: w * (KANA_WEIGHT if _KANA_ONLY.match(t) else 1.0) for t, w in weights.items()}


def _focus(question: str) -> str:
    """The words after "about" ("regarding", "concerning", 关于) or before について (に関して):
    what the question is about, where it says so; else nothing."""
    found = _ABOUT.search(question) or _NI_TSUITE.search(question)
    return found.group("focus") if found else ""


def asks_for(question: str) -> str:
    """What the question asks for, by its question word: "number", "time", "name" or ""."""
    return next((kind for kind, pattern in _ASKS if pattern.search(question)), "")


def holds_answer(kind: str, sentence: str, question: str) -> bool:
    """Whether the sentence holds a `kind` of answer ("number", "time", "name") that is not
    one of the question's own words: "… led 500 men" for "How many men …?", not "… sent men"."""
    asked = terms(question)
    for found in _HOLDS[kind].finditer(sentence):
        said = terms(found.group())
        if not said or not said <= asked:
            return True
    return False


def _scores(wanted: dict[str, float], found: Sequence[Quote], question: str) -> list[float]:
    """Each quote's score: its best sentence's weighted shared terms over log2 of its length,
    discounted by its source's rank, and by ANSWER_TYPE when it lacks what the question asks."""
    last = asked_line(question)
    kind = asks_for(last)
    held = [[terms(part) for part in q.parts] for q in found]
    pool = [set().union(*h) for h in held]
    idf = {t: math.log(1 + len(found) / (1 + sum(t in p for p in pool))) for t in wanted}
    scores = []
    for quote, parts in zip(found, held, strict=True):
        each = [
            sum(wanted[t] * idf[t] for t in wanted if t in h) / math.log2(len(text) + 2)
            for text, h in zip(quote.parts, parts, strict=True)
        ]
        score = max(each) / (1 + SOURCE_DISCOUNT * (quote.number - 1))
        if kind and not holds_answer(kind, quote.text, last):
            score *= ANSWER_TYPE
        scores.append(score * (SELF_REFERENCE if _ABOUT_ITSELF.match(quote.text) else 1.0))
    return scores


def _trimmed(quote: Quote, wanted: dict[str, float]) -> Quote:
    """Without a second part that only points back by a pronoun and holds no question term."""
    if quote.pronoun_tail and not terms(quote.parts[-1]) & wanted.keys():
        return quote.head()
    return quote


def _choose(found: Sequence[Quote], scores: list[float], limit: int) -> list[Quote]:
    """Best first: up to `limit` quotes over the floor, a source's second quote discounted."""
    floor = max(scores) * RELATIVE_FLOOR
    pool = [i for i in range(len(found)) if scores[i] > 0 and scores[i] >= floor]
    picked: list[int] = []
    while pool and len(picked) < limit:
        used = {found[j].number for j in picked}
        best = max(
            pool,
            key=lambda i: (scores[i] * (SAME_SOURCE if found[i].number in used else 1.0), -i),
        )
        picked.append(best)
        pool.remove(best)
    return [found[i] for i in picked]


def closest_quotes(
    embedder: Embedder, question: str, passages: list[str], limit: int = SEMANTIC_QUOTES
) -> list[tuple[int, str]]:
    """(citation number, sentence) of the sentences nearest the question by `embedder`."""
    return [(n, text) for n, text, _ in labelled(_closest(embedder, question, passages, limit))]


def _closest(embedder: Embedder, question: str, passages: list[str], limit: int) -> list[Quote]:
    found = _embeddable(passages)
    if not found:
        return []
    cosines = _cosines(embedder, question, found)
    return [found[i] for i in np.argsort(-cosines)[:limit].tolist()]


def _embeddable(passages: list[str]) -> list[Quote]:
    every = quotable(passages)
    return ([q for q in every if q.whole] or every)[:MAX_SENTENCES]


def _cosines(embedder: Embedder, question: str, found: Sequence[Quote]) -> np.ndarray:
    vectors = np.asarray(embedder.embed_documents([q.text for q in found]), dtype=np.float32)
    query = np.asarray(embedder.embed_query(question), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    return vectors @ query / np.maximum(norms, 1e-12)


def _blended(
    embedder: Embedder, question: str, wanted: dict[str, float], passages: list[str], limit: int
) -> list[Quote]:
    """A paraphrase in the passages' language: each sentence by its word score (over the best
    one's) BLEND_WORDS times plus its cosine to the question (over the sentences' range)."""
    found = _embeddable(passages)
    if not found:
        return []
    words = _scores(wanted, found, question)
    cosines = _cosines(embedder, question, found)
    low, span = float(cosines.min()), float(cosines.max() - cosines.min()) or 1.0
    best = max(words) or 1.0
    blend = [
        BLEND_WORDS * w / best + (float(c) - low) / span
        for w, c in zip(words, cosines, strict=True)
    ]
    order = sorted(range(len(found)), key=lambda i: (-blend[i], i))[:limit]
    return [_trimmed(found[i], wanted) for i in order]


def _mostly_absent(wanted: set[str], passages: list[str]) -> bool:
    """At most half of the question's content terms occur anywhere in the passages
    (Japanese bigrams with hiragana are particles and endings: not counted)."""
    content = {t for t in wanted if not _HIRAGANA.search(t)}
    held = set().union(*(terms(p) for p in passages)) if passages else set()
    return bool(content) and len(content & held) * 2 <= len(content)


# Is the question written in a language one of the passages is (None: cannot tell)?
SameLanguage = Callable[[str, Sequence[str]], bool | None]


def best_quotes(
    question: str,
    passages: list[str],
    limit: int = MAX_QUOTES,
    embedder: Embedder | None = None,
    same_language: SameLanguage | None = None,
) -> list[tuple[int, str]]:
    """(citation number, quote) of the best quotes, best first."""
    found = answer_quotes(question, passages, limit, embedder, same_language)
    return [(n, text) for n, text, _ in found]


def answer_quotes(
    question: str,
    passages: list[str],
    limit: int = MAX_QUOTES,
    embedder: Embedder | None = None,
    same_language: SameLanguage | None = None,
) -> list[tuple[int, str, str]]:
    """(citation number, quote, the heading it sits under or "") of the best quotes."""
    wanted = _question_weights(question)
    if embedder is not None and _mostly_absent(set(wanted), passages):
        if same_language is not None and same_language(question, passages):
            # a paraphrase: the passages say it in other words of the same language
            return labelled(_blended(embedder, question, wanted, passages, limit))
        # the question is in another language than the passages (a name or two in common)
        return labelled(_closest(embedder, question, passages, SEMANTIC_QUOTES))
    every = quotable(passages)
    found = [q for q in every if q.whole] or every  # pieces only when nothing is whole
    scores = _scores(wanted, found, question)
    if not found or max(scores) <= 0:
        if embedder is not None:
            return labelled(_closest(embedder, question, passages, SEMANTIC_QUOTES))
        return labelled(found[:1])
    return labelled([_trimmed(q, wanted) for q in _choose(found, scores, limit)])


class ExtractiveChat:
    name = NAME

    def __init__(
        self, embedder: Embedder | None = None, same_language: SameLanguage | None = None
    ) -> None:
        self.embedder = embedder  # the model that ranked the passages, for other languages
        self.same_language = same_language  # tells a paraphrase from another language

    def stream(self, request: ChatRequest) -> Iterator[str]:
        quotes = answer_quotes(
            request.question,
            list(request.passages),
            embedder=self.embedder,
            same_language=self.same_language,
        )
        budget = max(request.max_tokens, 1) * 4  # about four characters a token
        yield INTRO.get(request.language, INTRO["en"])
        for number, sentence, heading in quotes:
            # the quote stays verbatim; the heading it sits under follows its citation
            piece = f"\n- {sentence} [{number}]" + (f" — {heading}" if heading else "")
            if len(piece) > budget:
                break
            budget -= len(piece)
            yield piece
