"""Chat: answers grounded in a search, their sources, follow-ups and the conversations kept."""

from bunko.services.chat.chat import ChatEvent, ChatPreferences, ChatService, Source, collect_answer
from bunko.services.chat.chat_slots import ChatSlot, ChatSlots, slot_owner
from bunko.services.chat.conversations import ConversationLimits, ConversationService
from bunko.services.chat.models import ChatModels, ModelFactory

__all__ = [
    "ChatEvent",
    "ChatModels",
    "ChatPreferences",
    "ChatService",
    "ChatSlot",
    "ChatSlots",
    "ConversationLimits",
    "ConversationService",
    "ModelFactory",
    "Source",
    "collect_answer",
    "slot_owner",
]
