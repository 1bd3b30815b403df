"""UserAdminService: the admin's user management (global, across workspaces).

Deleting a user also deletes what lived in their personal workspace — documents (with
chunks, index entries and blobs), model configs, settings, research projects (with their
corpora's retained text) and chat conversations — so nothing is left behind that nobody can
reach.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bunko.domain import DEFAULT_WORKSPACE_ID
from bunko.domain.accounts import User
from bunko.errors import ConflictError, NotFoundError
from bunko.ports import ApiKeyStore, ModelConfigStore, SettingsStore, UserStore
from bunko.ports.libraries import LibraryStore
from bunko.ports.sign_in import IdentityLinkStore
from bunko.services.accounts.apikeys import revoke_keys
from bunko.services.accounts.auth import AuthService
from bunko.services.chat import ConversationService
from bunko.services.embedding import SCOPE as EMBEDDING_SCOPE
from bunko.services.ingest import KnowledgeBaseService
from bunko.services.research import ResearchService

log = logging.getLogger(__name__)

USER_SCOPE = "user"
WORKSPACE_SCOPE = "workspace"


class UserAdminService:
    def __init__(
        self,
        *,
        users: UserStore,
        auth: AuthService,
        knowledge_base: KnowledgeBaseService,
        model_configs: ModelConfigStore,
        settings: SettingsStore,
        research: ResearchService | None = None,
        conversations: ConversationService | None = None,
        libraries: LibraryStore | None = None,
        links: IdentityLinkStore | None = None,
        api_keys: ApiKeyStore | None = None,
        forget_sources: Callable[[str], None] | None = None,
        forget_answers: Callable[[str], None] | None = None,
    ) -> None:
        self.users = users
        self.auth = auth
        self.knowledge_base = knowledge_base
        self.model_configs = model_configs
        self.settings = settings
        self.research = research
        self.conversations = conversations
        self.libraries = libraries
        self.links = links  # sign-in with an identity provider: who is linked to whom
        self.api_keys = api_keys  # a deleted user's keys are revoked
        self.forget_sources = forget_sources  # a workspace's connectors and their state
        self.forget_answers = forget_answers  # its answers, marks and missing list

    def list_users(self) -> list[User]:
        return self.users.list_users()

    def create_user(self, username: str, password: str, *, is_admin: bool = False) -> User:
        return self.auth.create_user(username, password, is_admin=is_admin)

    def set_admin(self, user_id: str, is_admin: bool) -> User:
        return self.auth.set_admin(user_id, is_admin)

    def reset_password(self, user_id: str, password: str) -> User:
        return self.auth.reset_password(user_id, password)

    def usage(self, user: User) -> tuple[int, int]:
        """(documents, bytes) in the user's personal workspace."""
        docs = list(self.knowledge_base.metadata.iter_documents(user.workspace_id))
        return len(docs), sum(d.size for d in docs)

    def shared_libraries(self, user: User) -> list[tuple[str, str]]:
        """(name, role) of each shared library the user belongs to, by name."""
        if self.libraries is None:
            return []
        return [(lib.name, role) for lib, role in self.libraries.memberships(user.id)]

    def delete_user(self, user_id: str, *, by: str | None = None) -> User:
        """Delete a user and their workspace's data; ConflictError for the last admin.
        A shared library they were the last owner of gets another (`_leave`): `by` is the
        admin who deletes them (None: the operator, on the machine)."""
        user = self.users.get_user(user_id)
        if user is None or not self.users.delete_user(user_id):
            raise NotFoundError(f"user {user_id} not found")
        self._delete_workspace_data(user, by=by)
        return user

    def _delete_workspace_data(self, user: User, *, by: str | None = None) -> None:
        self.settings.delete_settings(USER_SCOPE, user.id)
        if self.api_keys is not None:  # the keys they made, and any left in their library
            revoke_keys(self.api_keys, made_by=user.id)
            revoke_keys(self.api_keys, workspace_id=user.workspace_id)
        if self.links is not None:  # signing in again makes a new user, not this one
            self.links.forget_user(user.id)
        if self.libraries is not None:  # shared libraries stay; what was theirs there goes
            shared = [lib.id for lib, _ in self.libraries.memberships(user.id)]
            if user.is_admin:
                shared.append(DEFAULT_WORKSPACE_ID)  # the admins' library
            if self.conversations is not None:
                for workspace_id in shared:
                    self.conversations.delete_owner(workspace_id, user.id)
            for library, _ in self.libraries.memberships(user.id):
                self._leave(library.id, user.id, by=by)
            self.libraries.forget_user(user.id)
        self.clear_workspace(user.workspace_id)

    def _leave(self, library_id: str, user_id: str, *, by: str | None) -> None:
        """Take a deleted user out of a library so that it keeps an owner: when they were
        its last owner, its first editor becomes owner, else the admin deleting them;
        with neither (the operator deleting them, nobody but viewers left) the library is
        deleted with its files. Checked and written atomically by the store, so two owners
        deleted at once cannot leave it ownerless."""
        assert self.libraries is not None
        for _ in range(3):
            try:
                self.libraries.remove_member(library_id, user_id, keep_an_owner=True)
                return
            except ConflictError:
                members = self.libraries.members(library_id)
                heir = next((m.user_id for m in members if m.role == "editor"), by)
                if heir is None or heir == user_id:
                    log.info("deleting library %s: its last owner was deleted", library_id)
                    self.clear_workspace(library_id)
                    self.libraries.delete_library(library_id)
                    if self.api_keys is not None:
                        revoke_keys(self.api_keys, workspace_id=library_id)
                    return
                self.libraries.set_member(library_id, heir, "owner")
        raise ConflictError(f"library {library_id}: its owners changed meanwhile, try again")

    def clear_workspace(self, workspace_id: str) -> None:
        """Everything a workspace holds: documents (chunks, index entries, blobs), model
        configs, settings, research projects, conversations, connectors, answers."""
        self.knowledge_base.clear(workspace_id)
        self.model_configs.delete_workspace_model_configs(workspace_id)
        self.settings.delete_settings(WORKSPACE_SCOPE, workspace_id)
        self.settings.delete_settings(EMBEDDING_SCOPE, workspace_id)  # its model choice
        if self.research is not None:
            self.research.delete_workspace(workspace_id)
        if self.conversations is not None:
            self.conversations.delete_workspace(workspace_id)
        if self.forget_sources is not None:
            self.forget_sources(workspace_id)
        if self.forget_answers is not None:
            self.forget_answers(workspace_id)

    def ensure_admin(self, username: str, password: str) -> User:
        """The admin named in settings, created if missing. An existing user is left as it
        is: the settings seed the first login only, and a plain user who registered that
        name is never promoted by a configuration change."""
        user = self.users.get_user_by_username(username)
        if user is None:
            log.info("creating the admin user %r from settings", username)
            return self.auth.create_user(username, password, is_admin=True)
        if not user.is_admin:
            log.warning("user %r exists and is not an admin; not promoting it", username)
        return user
