"""LibraryService: shared libraries, their members and roles, and which library a request
works in (domain/libraries).

A request names a library (REST: the `X-Bunko-Library` header) by id or name; a UUID is
only ever an id (a name may not parse as one), and the caller's own library id comes first,
so no library can take the place of another by its name (issue 46). The caller's
principal then works in that library's workspace with their role there, which bounds what
they may do (domain/auth.Principal.has). A library the caller does not belong to answers
exactly as one that does not exist (404). Without a name: the caller's own library. An API
key is bound to the library it was made in and never works in another.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from precis_i18n import get_profile

from bunko.domain import DEFAULT_WORKSPACE_ID, Workspace, new_id
from bunko.domain.accounts import User
from bunko.domain.auth import Principal
from bunko.domain.libraries import MAX_NAME_LENGTH, ROLES, Library, Role, name_key
from bunko.errors import (
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    TooManyRequestsError,
    ValidationError,
)
from bunko.ports import ApiKeyStore, MetadataStore, UserStore
from bunko.ports.libraries import LibraryStore
from bunko.services.accounts.apikeys import revoke_keys
from bunko.services.bounds import check_name

MAX_LIBRARIES_PER_USER = 20
LIBRARY_RETRY_AFTER = 86400  # a day: a count frees only when the user deletes a library
_NICKNAME = get_profile("NicknameCasePreserved")
# Letters that show as nothing (PRECIS allows them): Braille blank, Hangul fillers,
# Khmer inherent vowels. Old Hangul jamo fillers PRECIS refuses already.
BLANK_LETTERS = frozenset("\u2800\u3164\uffa0\u115f\u1160\u17b4\u17b5")

# The installation's default library: where the drop folder, `bunko ingest` and the stdio
# MCP server put files. Its owners are the installation's admins.
DEFAULT_LIBRARY = Library(id=DEFAULT_WORKSPACE_ID, name="default")


@dataclass(frozen=True)
class LibraryView:
    library: Library
    role: Role
    personal: bool = False


class LibraryService:
    def __init__(
        self,
        *,
        store: LibraryStore,
        users: UserStore,
        metadata: MetadataStore,
        clear_workspace: Callable[[str], None],
        api_keys: ApiKeyStore | None = None,
        max_created: int = MAX_LIBRARIES_PER_USER,
    ) -> None:
        self.store = store
        self.api_keys = api_keys  # a deleted library's keys are revoked
        self.max_created = max_created  # libraries one user may have made (0: no limit)
        self.users = users
        self.metadata = metadata
        self.clear_workspace = clear_workspace  # deletes a workspace's documents and data

    # -- which library a request works in ------------------------------------------------

    def enter(self, principal: Principal, wanted: str) -> Principal:
        """`principal` working in the library named or numbered `wanted`."""
        if wanted == principal.workspace_id:
            return principal  # one's own library, by its id, before any other lookup
        if principal.api_key_id is not None or principal.user_id is None:
            library = self._find(wanted)
            if library is not None and library.id == principal.workspace_id:
                return principal
            raise PermissionDeniedError(
                "an API key works only in the library it was made in: make a key in that "
                "library (Settings → API keys, with the library chosen)"
            )
        # A person's token carries their own workspace and admin flag: no user read here,
        # on every request that names a library.
        library = self._find(wanted)
        role = (
            self._role(library, principal.user_id, principal.workspace_id, principal.is_admin)
            if library is not None
            else None
        )
        if library is None or role is None:
            raise NotFoundError(f"library {wanted!r} not found")
        if library.id == principal.workspace_id:
            return principal  # one's own library: as without a name
        return replace(principal, workspace_id=library.id, role=role)

    def visible(self, principal: Principal) -> list[LibraryView]:
        """The caller's libraries: their own first, then the rest by name."""
        user = self._user(principal)
        own = Library(user.workspace_id, user.username, user.id, created_at=user.created_at)
        views = [LibraryView(own, "owner", personal=True)]
        shared = list(self.store.memberships(user.id))
        if user.is_admin and all(lib.id != DEFAULT_LIBRARY.id for lib, _ in shared):
            shared.append((DEFAULT_LIBRARY, "owner"))
        shared.sort(key=lambda pair: name_key(pair[0].name))
        return views + [LibraryView(lib, role) for lib, role in shared]

    # -- libraries and members ------------------------------------------------------------

    def create(self, principal: Principal, name: str) -> Library:
        """A new shared library, its creator its owner; ConflictError for a taken name."""
        user = self._user(principal)
        name = _valid_name(name)
        if name_key(name) == name_key(DEFAULT_LIBRARY.name):
            raise ConflictError(f"a library named {name!r} exists")
        # A library may not look like a username: `bunko ingest --library <name>` and the
        # header take either, and a person's name must not lead to another's library.
        if any(name_key(u.username) == name_key(name) for u in self.users.list_users()):
            raise ConflictError(f"the name {name!r} is taken")
        made = [lib for lib, _ in self.store.memberships(user.id) if lib.created_by == user.id]
        if self.max_created and len(made) >= self.max_created:
            raise TooManyRequestsError(
                f"at most {self.max_created} libraries per user (BUNKO_LIBRARIES_PER_USER): "
                "delete one first",
                retry_after=LIBRARY_RETRY_AFTER,
            )
        library = Library(id=new_id(), name=name, created_by=user.id)
        self.store.add_library(library, owner=user.id)
        self.metadata.ensure_workspace(Workspace(id=library.id, name=name))
        return library

    def create_for_operator(self, name: str) -> Library:
        """A new shared library made by the machine's operator (`bunko import`), with no
        member yet: its members are added by name after. The names' rules are `create`'s."""
        name = _valid_name(name)
        if name_key(name) == name_key(DEFAULT_LIBRARY.name):
            raise ConflictError(f"a library named {name!r} exists")
        if any(name_key(u.username) == name_key(name) for u in self.users.list_users()):
            raise ConflictError(f"the name {name!r} is taken")
        library = Library(id=new_id(), name=name, created_by=None)
        self.store.add_library(library, owner=None)
        self.metadata.ensure_workspace(Workspace(id=library.id, name=name))
        return library

    def members(self, principal: Principal, library_id: str) -> list[tuple[User, Role]]:
        """The members with their roles; any member may see who else is."""
        library, _ = self._member_library(principal, library_id)
        found: list[tuple[User, Role]] = []
        for membership in self.store.members(library.id):
            user = self.users.get_user(membership.user_id)
            if user is not None:
                found.append((user, membership.role))
        return found

    def set_member(
        self, principal: Principal, library_id: str, username: str, role: str
    ) -> tuple[User, Role]:
        """Add a user by name, or change their role (owners only)."""
        library = self._owned(principal, library_id)
        if role not in ROLES:
            raise ValidationError(f"role: one of {', '.join(ROLES)}")
        user = self.users.get_user_by_username(username)
        if user is None:
            raise NotFoundError(f"user {username!r} not found")
        if library.id == DEFAULT_LIBRARY.id and self.store.get_library(library.id) is None:
            self.store.add_library(DEFAULT_LIBRARY, owner=None)  # its first member
        # the store refuses to demote the last owner in the same atomic step as the write
        self.store.set_member(library.id, user.id, role, keep_an_owner=True)  # type: ignore[arg-type]
        return user, role  # type: ignore[return-value]

    def remove_member(self, principal: Principal, library_id: str, user_id: str) -> None:
        """Owners remove anyone; any member may leave. Never the last owner."""
        library, role = self._member_library(principal, library_id)
        if user_id != principal.user_id and role != "owner":
            raise PermissionDeniedError("only the library's owners may do this")
        if not self.store.remove_member(library.id, user_id, keep_an_owner=True):
            raise NotFoundError(f"member {user_id} not found")

    def all_libraries(self, principal: Principal) -> list[Library]:
        """Every shared library, by name: an admin's view (whoever owns them)."""
        if not self._user(principal).is_admin:
            raise PermissionDeniedError("only an admin may list every library")
        return self.store.list_libraries()

    def delete(self, principal: Principal, library_id: str) -> Library:
        """The library with everything in it (its owners, or an admin)."""
        user = self._user(principal)
        found = self._find_by_id(library_id) if user.is_admin else None
        library = found if found is not None else self._owned(principal, library_id)
        if library.id == DEFAULT_LIBRARY.id:
            raise ConflictError("the default library cannot be deleted")
        self.clear_workspace(library.id)
        self.store.delete_library(library.id)
        if self.api_keys is not None:
            revoke_keys(self.api_keys, workspace_id=library.id)
        return library

    def workspace_named(self, name: str) -> str:
        """The workspace of the library named (or numbered) `name`, or of the personal
        library of the user called `name`: how the operator's commands (`bunko ingest
        --library`) say where files go. NotFoundError for neither."""
        library = self._find(name)
        user = self.users.get_user_by_username(name)
        if library is not None and user is not None:  # named before names were kept apart
            raise ConflictError(
                f"{name!r} names both a library and a user: give the library's id "
                "(GET /libraries lists them)"
            )
        if library is not None:
            return library.id
        if user is not None:
            return user.workspace_id
        raise NotFoundError(
            f"no library or user named {name!r}: the web app's library menu and "
            "GET /libraries list the libraries"
        )

    def current_role(self, workspace_id: str, user: User) -> Role | None:
        """`user`'s role in the workspace as it is now (an API key's bound): "owner" of
        their own library and, for an admin, of the default one; their membership's role
        in a shared library that still exists; None anywhere else."""
        if workspace_id == user.workspace_id:
            return "owner"
        library = self._find_by_id(workspace_id)
        if library is None:
            return None
        return self._role(library, user.id, user.workspace_id, user.is_admin)

    def name_of(self, workspace_id: str) -> str:
        """A library's name for messages: a shared one's, "default", or the user's whose own
        it is (as `workspace_named` takes it); the id when none of these."""
        if workspace_id == DEFAULT_LIBRARY.id:
            return DEFAULT_LIBRARY.name
        library = self.store.get_library(workspace_id)
        if library is not None:
            return library.name
        owner = next((u for u in self.users.list_users() if u.workspace_id == workspace_id), None)
        return owner.username if owner is not None else workspace_id

    def forget_user(self, user_id: str) -> None:
        self.store.forget_user(user_id)

    # -- helpers --------------------------------------------------------------------------

    def _user(self, principal: Principal) -> User:
        user = self.users.get_user(principal.user_id) if principal.user_id else None
        if user is None:
            raise PermissionDeniedError(
                "libraries are for signed-in users (an API key is bound to one)"
            )
        return user

    def _find_by_id(self, library_id: str) -> Library | None:
        if library_id == DEFAULT_LIBRARY.id:
            return DEFAULT_LIBRARY
        return self.store.get_library(library_id)

    def _find(self, wanted: str) -> Library | None:
        if wanted == DEFAULT_LIBRARY.id or name_key(wanted) == name_key(DEFAULT_LIBRARY.name):
            return DEFAULT_LIBRARY
        if _is_uuid(wanted):  # an id, never a name (a library named so predates the rule)
            return self.store.get_library(wanted)
        return self.store.get_library_by_name(wanted)

    def _role(
        self, library: Library, user_id: str, own_workspace: str, is_admin: bool
    ) -> Role | None:
        if library.id == own_workspace:
            return "owner"
        if library.id == DEFAULT_LIBRARY.id and is_admin:
            return "owner"
        return self.store.role_of(library.id, user_id)

    def _member_library(self, principal: Principal, library_id: str) -> tuple[Library, Role]:
        """A shared library the caller belongs to, with their role; 404 for any other."""
        user = self._user(principal)
        library = self._find(library_id)
        role = (
            self._role(library, user.id, user.workspace_id, user.is_admin)
            if library is not None and library.id != user.workspace_id
            else None
        )
        if library is None or role is None:
            raise NotFoundError(f"library {library_id!r} not found")
        return library, role

    def _owned(self, principal: Principal, library_id: str) -> Library:
        library, role = self._member_library(principal, library_id)
        if role != "owner":
            raise PermissionDeniedError("only the library's owners may do this")
        return library


def _valid_name(name: str) -> str:
    """The name as kept: PRECIS NicknameCasePreserved (RFC 8266: NFKC, spaces collapsed; no
    controls, bidi controls or invisible characters such as U+200B or U+2060), no blank
    letters (U+2800, U+3164…), and never a UUID (ids are UUIDs)."""
    if not isinstance(name, str) or len(name) > 4 * MAX_NAME_LENGTH:
        raise ValidationError(f"name: 1 to {MAX_NAME_LENGTH} characters")
    check_name(name, field="name")
    try:
        name = _NICKNAME.enforce(name)
    except UnicodeEncodeError as exc:
        if exc.reason == "DISALLOWED/empty":
            raise ValidationError(f"name: 1 to {MAX_NAME_LENGTH} characters") from None
        raise ValidationError(
            f"name: character {exc.object[exc.start]!r} (U+{ord(exc.object[exc.start]):04X}) "
            "is not allowed in a name (invisible, control or formatting characters)"
        ) from None
    if any(ch in BLANK_LETTERS for ch in name):
        raise ValidationError("name: blank characters (they show as spaces) are not allowed")
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise ValidationError(f"name: 1 to {MAX_NAME_LENGTH} characters")
    if _is_uuid(name):
        raise ValidationError("name: may not be a UUID (library ids are UUIDs)")
    return name


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text.strip())
    except ValueError:
        return False
    return True
