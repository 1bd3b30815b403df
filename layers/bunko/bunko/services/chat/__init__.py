"""Chat: answers grounded in a search, their sources, follow-ups and the conversations kept."""

from bunko.services.chat.answers import MAX_PAGE as MAX_MARKED_PAGE
from bunko.services.chat.answers import AnswerBook, require_owner
from bunko.services.chat.chat import ChatEvent, ChatPreferences, ChatService, Source, collect_answer
from bunko.services.chat.chat_slots import ChatSlot, ChatSlots, slot_owner
from bunko.services.chat.conversations import ConversationLimits, ConversationService
from bunko.services.chat.missing import MAX_GROUPS as MAX_MISSING_GROUPS
from bunko.services.chat.missing import MissingList
from bunko.services.chat.models import ChatModels, ModelFactory

__all__ = [
    "MAX_MARKED_PAGE",
    "MAX_MISSING_GROUPS",
    "AnswerBook",
    "ChatEvent",
    "ChatModels",
    "ChatPreferences",
    "ChatService",
    "ChatSlot",
    "ChatSlots",
    "ConversationLimits",
    "ConversationService",
    "MissingList",
    "ModelFactory",
    "Source",
    "collect_answer",
    "require_owner",
    "slot_owner",
]
