"""What the chat says around an answer, in the user's language, and the grounded prompt."""

from __future__ import annotations

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
LANGUAGE_NAMES = {"ja": "Japanese", "en": "English", "zh": "Chinese"}
# The prompt keeps this much of the conversation (turns, characters a turn).
HISTORY_TURNS = 10
HISTORY_CHARS = 2000

SYSTEM = (
    "You are a knowledge base assistant. Answer the user's question using only the numbered "
    "sources below. Cite every fact with its source number in square brackets, like [1] or "
    "[2][3]. If the sources do not contain the answer, say that you do not know. "
    "The sources may be in another language than the question: answer in the language of "
    "the user's question (in {language} if you cannot tell).\n\nSources:\n{sources}"
)


def system_prompt(passages: Sequence[tuple[str, str]], language: str) -> str:
    """`passages`: (file name, text), numbered from 1 in the order given."""
    sources = "\n\n".join(
        f"[{n}] ({name})\n{text}" for n, (name, text) in enumerate(passages, start=1)
    )
    return SYSTEM.format(language=LANGUAGE_NAMES.get(language, "English"), sources=sources)


def conversation(system: str, history: Sequence[ChatMessage], message: str) -> list[ChatMessage]:
    recent = [
        ChatMessage(m.role, m.content[:HISTORY_CHARS])
        for m in history[-HISTORY_TURNS:]
        if m.role in ("user", "assistant") and m.content.strip()
    ]
    return [ChatMessage("system", system), *recent, ChatMessage("user", message)]


def retrieval_query(message: str, history: Sequence[ChatMessage]) -> str:
    """The text searched: the question, with the user's previous question before it, so a
    follow-up ("and in 2023?") is searched in its context."""
    previous = next((m.content for m in reversed(history) if m.role == "user"), "")
    return f"{previous[:HISTORY_CHARS]}\n{message}".strip() if previous.strip() else message
