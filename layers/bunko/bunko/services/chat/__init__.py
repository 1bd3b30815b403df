"""Chat: answers grounded in a search, their sources, follow-ups and the conversations kept."""

from bunko.services.chat.chat import ChatEvent, ChatPreferences, ChatService, Source, collect_answer
from bunko.services.chat.chat_slots import ChatSlot, ChatSlots
from bunko.services.chat.conversations import ConversationLimits, ConversationService

__all__ = [
    "ChatEvent",
    "ChatPreferences",
    "ChatService",
    "ChatSlot",
    "ChatSlots",
    "ConversationLimits",
    "ConversationService",
    "Source",
    "collect_answer",
]
