"""Measure what chat answers, where a BEIR set ships gold answers (`answers.jsonl`, one
`{"_id": question id, "answers": [...]}` a line, as JSQuAD's does).

Each question goes through the real ChatService with the default preferences (the model the
graph resolves when none is chosen: the offline extractive answerer). Reported:
- `contains_gold`: the answer holds a gold answer (both NFKC-normalised, white space removed);
- `gold_in_sources`: the question's judged paragraph is among the sources;
- `cites_gold`: the answer cites that paragraph by its number ([n]);
- `answered`: the share that got sources at all (the rest abstained);
- `unanswerable_abstained`: of the other sets' questions and random strings, the share whose
  answer abstained (no sources, the "nothing relevant" message);
- `headings_only` (a count of answers): the answer quotes, and every quote is a heading;
- `cut_sentences` (a count of answers): at least one quote is a cut sentence.

A *quote* is the `<text>` of a line of the answer of the form `- <text> [n]`, optionally
followed by ` — <heading>`, as the extractive answerer writes one (an answer without such
lines counts in neither). A quote is a *heading* when
`bunko.domain.sentences.is_heading` says so: a Markdown heading, or a line of at most 60
columns (East Asian wide characters count two) that does not end with sentence punctuation
and is not a list item, a table row or a "key: value" pair ("Budget and costs",
"第1条（目的）"). A quote is a *cut sentence* when it is neither a heading nor a list item or
table row (`is_item`) and does not end where a sentence ends (`is_whole`): its last
character, closing quotes and brackets aside, is not one of . ! ? … 。 ！ ？ ．, or that full
stop belongs to an abbreviation or an initial ("Dr.", "e.g.", "U.S.", "W.") — "A grant of",
"…のことを、", "Mayor W." are cut.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

from bunko.domain.sentences import is_heading, is_item, is_whole
from bunko.services.chat import ChatPreferences, ChatService, Source, collect_answer

ANSWERS_FILE = "answers.jsonl"
UNANSWERABLE_SAMPLE = 200  # of each unanswerable source, enough for a share to 0.01
_CITATION = re.compile(r"\[(\d+)\]")
# "- <text> [n]", and " — <heading>" after it where the answerer names the quote's section
_QUOTE = re.compile(r"^- (.+) \[\d+\](?: — [^\[\]\n]*)?$", re.MULTILINE)


def load_answers(directory: Path) -> dict[str, list[str]] | None:
    """Question id → gold answers, or None when the set has no answers file."""
    path = Path(directory) / ANSWERS_FILE
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as f:
        rows = (json.loads(line) for line in f if line.strip())
        return {str(row["_id"]): [str(a) for a in row["answers"]] for row in rows}


def normalise(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).split())


def quotes_of(answer: str) -> list[str]:
    """The answer's quotes: the text of its `- <text> [n]` lines (and no heading after)."""
    return [q.strip() for q in _QUOTE.findall(answer)]


def headings_only(answer: str) -> bool:
    quotes = quotes_of(answer)
    return bool(quotes) and all(is_heading(q) for q in quotes)


def has_cut_sentence(answer: str) -> bool:
    return any(not (is_heading(q) or is_item(q) or is_whole(q)) for q in quotes_of(answer))


def ask(chat: ChatService, workspace_id: str, question: str) -> tuple[str, list[Source]]:
    """The answer's text and its sources, as a client of /chat/stream would collect them."""
    text, sources, error = collect_answer(
        chat.answer(workspace_id, question, [], ChatPreferences())
    )
    if error is not None:
        raise RuntimeError(f"chat failed on {question!r}: {error}")
    return text, sources


def evaluate_answers(
    chat: ChatService,
    workspace_id: str,
    questions: Mapping[str, tuple[str, set[str]]],
    gold: Mapping[str, list[str]],
    beir_id_of: Mapping[str, str],
    unanswerable: Mapping[str, Iterable[str]],
) -> dict:
    """`questions`: question id → (text, judged paragraph ids); `beir_id_of`: Bunko document
    id → the set's paragraph id."""
    counts = {"contains_gold": 0, "gold_in_sources": 0, "cites_gold": 0, "answered": 0}
    flawed = {"headings_only": 0, "cut_sentences": 0}
    seconds: list[float] = []
    for qid, (question, relevant) in questions.items():
        started = time.perf_counter()
        answer, sources = ask(chat, workspace_id, question)
        seconds.append(time.perf_counter() - started)
        paragraphs = [beir_id_of.get(s.document_id) for s in sources]
        cited = {int(n) for n in _CITATION.findall(answer)}
        counts["answered"] += bool(sources)
        counts["contains_gold"] += any(normalise(g) in normalise(answer) for g in gold[qid])
        counts["gold_in_sources"] += bool(relevant & set(paragraphs))
        counts["cites_gold"] += any(
            paragraphs[n - 1] in relevant for n in cited if 0 < n <= len(paragraphs)
        )
        flawed["headings_only"] += headings_only(answer)
        flawed["cut_sentences"] += has_cut_sentence(answer)
    abstained = {
        source: _abstained(chat, workspace_id, list(texts)[:UNANSWERABLE_SAMPLE])
        for source, texts in unanswerable.items()
    }
    total = len(questions)
    seconds.sort()
    return {
        "questions": total,
        **{name: round(n / total, 4) if total else None for name, n in counts.items()},
        **flawed,
        "unanswerable_abstained": abstained,
        "answer_p50_ms": round(1000 * seconds[total // 2], 1) if total else None,
        "answer_p95_ms": round(1000 * seconds[int(total * 0.95)], 1) if total else None,
    }


def _abstained(chat: ChatService, workspace_id: str, questions: list[str]) -> float | None:
    if not questions:
        return None
    return round(sum(not ask(chat, workspace_id, q)[1] for q in questions) / len(questions), 4)


def format_line(figures: dict) -> str:
    return (
        f"chat answers ({figures['questions']} questions): contain a gold answer "
        f"{figures['contains_gold']}, gold paragraph in sources {figures['gold_in_sources']}, "
        f"cited {figures['cites_gold']}, answered {figures['answered']}; unanswerable abstained "
        f"{figures['unanswerable_abstained']}; answers of headings only "
        f"{figures['headings_only']}, with a cut sentence {figures['cut_sentences']}; "
        f"answer p50 {figures['answer_p50_ms']} ms"
    )
