"""Settings: a user's chat and search preferences, and a workspace's (folders, limits)."""

from bunko.services.settings.drop_routes import read_drop_routes
from bunko.services.settings.user_settings import (
    UserPreferences,
    UserSettingsService,
    conversation_owner,
    default_settings,
    settings_owner,
)
from bunko.services.settings.workspace_settings import FolderCheck, WorkspaceSettingsService

__all__ = [
    "FolderCheck",
    "UserPreferences",
    "UserSettingsService",
    "WorkspaceSettingsService",
    "conversation_owner",
    "default_settings",
    "read_drop_routes",
    "settings_owner",
]
