"""Bills: whose account a workspace's uploads count against, and every workspace they share
that count with (issue 46: one user stored 5.4× the quota through five libraries, each with
its own quota and upload bucket).

A personal library is its user's; a shared library is the person's who made it. A person's
bill holds their personal library and every library they made, so the storage quota and the
upload bucket (services/ingest/upload_quota.py) are one per person however many libraries
they make; members' uploads into a library count against its maker, as its bytes do. The
conversation count works the same way per person (`conversation_workspaces`).
"""

from __future__ import annotations

import threading

from bunko.ports import UserStore
from bunko.ports.libraries import LibraryStore
from bunko.services.bounds import Bill


class Bills:
    def __init__(self, *, users: UserStore, libraries: LibraryStore) -> None:
        self.users = users
        self.libraries = libraries
        self._lock = threading.Lock()
        self._owner_of: dict[str, str] = {}  # personal workspace id → user id (never changes)

    def __call__(self, workspace_id: str) -> Bill:
        """The bill `workspace_id`'s uploads count against."""
        library = self.libraries.get_library(workspace_id)
        payer = library.created_by if library is not None else self._owner(workspace_id)
        user = self.users.get_user(payer) if payer else None
        if user is None:  # the default library, or its maker is gone: its own count
            return Bill(payer=workspace_id, workspaces=(workspace_id,))
        made = [
            lib.id for lib, _ in self.libraries.memberships(user.id) if lib.created_by == user.id
        ]
        return Bill(payer=f"user {user.id}", workspaces=(user.workspace_id, *made))

    def conversation_workspaces(self, workspace_id: str, owner: str) -> tuple[str, ...]:
        """Where `owner` (a user id) keeps conversations: their personal library and every
        library they belong to; just `workspace_id` for an owner who is no user (a key)."""
        user = self.users.get_user(owner)
        if user is None:
            return (workspace_id,)
        member_of = [lib.id for lib, _ in self.libraries.memberships(user.id)]
        return tuple(dict.fromkeys((user.workspace_id, workspace_id, *member_of)))

    def _owner(self, workspace_id: str) -> str | None:
        with self._lock:
            if workspace_id not in self._owner_of:
                # A miss reads the users once (a new user's, or no one's: the default).
                self._owner_of = {u.workspace_id: u.id for u in self.users.list_users()}
            return self._owner_of.get(workspace_id)
