"""What the chat says around an answer, in the user's language, and the grounded prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bunko.ports.chat import ChatMessage

LANGUAGES = ("ja", "en", "zh")
SEARCHING = {
    "ja": "ナレッジベースを検索中...",
    "en": "Searching the knowledge base...",
    "zh": "正在搜索知识库...",
}
FOUND = {
    "ja": "関連情報が見つかりました...",
    "en": "Found relevant information...",
    "zh": "找到了相关信息...",
}
NOTHING_FOUND = {
    "ja": "ナレッジベースに関連する情報が見つかりませんでした。質問を言い換えるか、資料を追加してください。",
    "en": "I found nothing relevant in the knowledge base. Try rephrasing the question or adding documents.",
    "zh": "在知识库中没有找到相关信息。请换一种问法，或添加相关资料。",
}
# What a model says when its sources do not answer (the prompt gives it the sentence in the
# answer's language); an answer that says it and cites nothing keeps no sources.
NOT_ANSWERED = {
    "ja": "資料にはこの質問への答えがありません。",
    "en": "The sources do not answer this question.",
    "zh": "资料中没有这个问题的答案。",
}
LANGUAGE_NAMES = {"ja": "Japanese", "en": "English", "zh": "Chinese"}
# The prompt keeps this much of the conversation (turns, characters a turn).
HISTORY_TURNS = 10
HISTORY_CHARS = 2000

SYSTEM = (
    "You are a knowledge base assistant. Answer the user's question using only the numbered "
    "sources below. Cite every fact with its source number in square brackets, like [1] or "
    "[2][3]. Sources on the same subject are not enough: if no source says what the question "
    "asks, reply only with this sentence, without citations: {not_answered} "
    "The sources may be in another language than the question: answer in the language of "
    "the user's question (in {language} if you cannot tell).\n\nSources:\n{sources}"
)
_CITATION = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)*\s*\]")
_NOT_WORD = re.compile(r"[\W_]+")


_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def question_language(question: str, fallback: str) -> str:
    """The language an answer is framed in: the question's (kana: Japanese; Han alone:
    Chinese, or Japanese for a Japanese user; Latin letters: English, the only one of the
    three they write), else `fallback`, the user's saved or requested language."""
    if _KANA.search(question):
        return "ja"
    han, latin = len(_HAN.findall(question)), len(_LATIN.findall(question))
    if han and han >= latin:
        return "ja" if fallback == "ja" else "zh"
    if latin:
        return "en"
    return fallback


def system_prompt(passages: Sequence[tuple[str, str]], language: str) -> str:
    """`passages`: (file name, text), numbered from 1 in the order given."""
    sources = "\n\n".join(
        f"[{n}] ({name})\n{text}" for n, (name, text) in enumerate(passages, start=1)
    )
    return SYSTEM.format(
        language=LANGUAGE_NAMES.get(language, "English"),
        not_answered=NOT_ANSWERED.get(language, NOT_ANSWERED["en"]),
        sources=sources,
    )


def declines(answer: str) -> bool:
    """Whether a model's answer says its sources do not answer (the prompt's sentence, in
    any of the languages, and no citation): such an answer keeps no sources."""
    if _CITATION.search(answer):
        return False
    said = _NOT_WORD.sub("", answer).casefold()
    return any(_NOT_WORD.sub("", s).casefold() in said for s in NOT_ANSWERED.values())


def conversation(system: str, history: Sequence[ChatMessage], message: str) -> list[ChatMessage]:
    recent = [
        ChatMessage(m.role, m.content[:HISTORY_CHARS])
        for m in history[-HISTORY_TURNS:]
        if m.role in ("user", "assistant") and m.content.strip()
    ]
    return [ChatMessage("system", system), *recent, ChatMessage("user", message)]
