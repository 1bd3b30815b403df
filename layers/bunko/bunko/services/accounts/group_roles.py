"""GroupRoles: a person's groups at the identity provider, made their memberships here.

At every sign-in, for each library the mapping names (BUNKO_OIDC_GROUP_ROLES): the person
joins it with the strongest role their groups give there, has their role changed to it, or
leaves it when no group of theirs gives them one. A mapped library is thus the identity
provider's to manage; a library the mapping does not name is never touched (its owners add
and remove members as before). A mapped library that does not exist yet is created, with
no owner but those its groups make.

One exception: a sync never takes a library's last owner away (issue 46). A person whose
groups no longer make them owner of a library nobody else owns stays its owner, and the
refusal is logged, as the REST door's "the last owner stays": once another member is made
owner (by a group or by hand), their next sign-in applies what their groups say.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from bunko.domain import Workspace, new_id
from bunko.domain.libraries import Library, Role, name_key
from bunko.domain.sign_in import GroupRole, strongest
from bunko.errors import AuthenticationError, ConflictError
from bunko.ports import MetadataStore
from bunko.ports.libraries import LibraryStore
from bunko.services.accounts.libraries import DEFAULT_LIBRARY
from bunko.services.bounds import check_name

log = logging.getLogger(__name__)


class GroupRoles:
    def __init__(
        self,
        *,
        store: LibraryStore,
        metadata: MetadataStore,
        mapping: Mapping[str, GroupRole],
        claim: str = "groups",
    ) -> None:
        for role in mapping.values():
            check_name(role.library, field="library")
        self.store = store
        self.metadata = metadata
        self.mapping = dict(mapping)
        self.claim = claim
        # each mapped library once, by its name as people read it
        self.libraries = {name_key(r.library): r.library for r in self.mapping.values()}

    def groups(self, claims: dict[str, Any]) -> list[str]:
        """The groups an ID token names (a list, or one name)."""
        names = claims.get("_claim_names")
        if isinstance(names, dict) and self.claim in names:
            # Entra ID's "overage": too many groups to list; the person's access cannot be
            # known, so they are not let in with whatever they had before.
            raise AuthenticationError(
                "the identity provider sent no list of groups (too many to list): ask its "
                "administrator to send only the groups Bunko uses"
            )
        value = claims.get(self.claim)
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [g for g in value if isinstance(g, str)]
        return []

    def sync(self, user_id: str, groups: Iterable[str]) -> dict[str, Role | None]:
        """Make the person's memberships of the mapped libraries what `groups` give;
        returns each mapped library's role now (None: not a member)."""
        given: dict[str, list[Role]] = {}
        for group in groups:
            role = self.mapping.get(group)
            if role is not None:
                given.setdefault(name_key(role.library), []).append(role.role)
        result: dict[str, Role | None] = {}
        for key, name in self.libraries.items():
            wanted = strongest(given[key]) if key in given else None
            library = self._library(name, create=wanted is not None)
            if library is None:
                result[name] = None
                continue
            current = self.store.role_of(library.id, user_id)
            try:
                # the store decides "last owner?" in the same atomic step as the write, so two
                # owners losing their group at once cannot both leave
                if wanted is not None and current != wanted:
                    self.store.set_member(library.id, user_id, wanted, keep_an_owner=True)
                elif wanted is None and current is not None:
                    self.store.remove_member(library.id, user_id, keep_an_owner=True)
            except ConflictError:
                log.warning(
                    "group sync: user %s stays owner of library %s (%s), its last owner; "
                    "their groups give %s there",
                    user_id,
                    library.id,
                    name,
                    wanted or "no role",
                )
                wanted = "owner"
            result[name] = wanted
        return result

    def _library(self, name: str, *, create: bool) -> Library | None:
        if name_key(name) == name_key(DEFAULT_LIBRARY.name):
            if self.store.get_library(DEFAULT_LIBRARY.id) is None and create:
                self._add(DEFAULT_LIBRARY)  # its first member (as LibraryService does)
            return DEFAULT_LIBRARY
        found = self.store.get_library_by_name(name)
        if found is not None or not create:
            return found
        library = Library(id=new_id(), name=name)
        if not self._add(library):  # another sign-in created it meanwhile
            return self.store.get_library_by_name(name)
        self.metadata.ensure_workspace(Workspace(id=library.id, name=name))
        return library

    def _add(self, library: Library) -> bool:
        try:
            self.store.add_library(library, owner=None)
        except ConflictError:
            return False
        return True
