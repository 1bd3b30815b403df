"""LinkedPeople: the Bunko user of a person who signs in with the identity provider.

A person is who the issuer says by (issuer, `sub`), never by a name: the first sign-in creates
a user with a personal library and links it; later sign-ins find that link. A name the issuer
sends (`preferred_username`, `email`) is only a suggestion for the new username, made valid
(services/accounts/usernames.py) and unique: a person called `admin` there becomes `admin-2`
here, never the local admin (docs/security.md, "Sign-in with an identity provider").
"""

from __future__ import annotations

import re
import secrets
import unicodedata
from collections.abc import Iterator
from typing import Any

from bunko.domain import Workspace, new_id
from bunko.domain.accounts import User
from bunko.errors import ConflictError, ValidationError
from bunko.ports import MetadataStore, UserStore
from bunko.ports.sign_in import IdentityLinkStore
from bunko.services.accounts.passwords import PasswordHasher
from bunko.services.accounts.usernames import lookalike_key, validate_username

_NOT_IN_USERNAMES = re.compile(r"[^\w.@+-]")
_BASE_LENGTH = 56  # room for "-" and a suffix within the 64 characters a username may have
_NUMBERED = 9  # alice, alice-2 … alice-9, then alice-<random>


class LinkedPeople:
    def __init__(
        self,
        *,
        issuer: str,
        users: UserStore,
        links: IdentityLinkStore,
        metadata: MetadataStore,
        hasher: PasswordHasher,
    ) -> None:
        self.issuer = issuer
        self.users = users
        self.links = links
        self.metadata = metadata
        self.hasher = hasher

    def existing(self, subject: str) -> User | None:
        """The user linked to this person, if they ever signed in (and were not deleted)."""
        user_id = self.links.linked_user(self.issuer, subject)
        return self.users.get_user(user_id) if user_id else None

    def person(self, claims: dict[str, Any]) -> User:
        """The user of the person an ID token names: linked, or created and linked now."""
        subject = str(claims["sub"])
        user_id = self.links.linked_user(self.issuer, subject)
        if user_id is not None:
            user = self.users.get_user(user_id)
            if user is not None:
                return user
            self.links.unlink(self.issuer, subject)  # the user was deleted: a new one
        return self._create(subject, claims)

    def _create(self, subject: str, claims: dict[str, Any]) -> User:
        # No one knows this password: the person signs in at the issuer only (an admin may
        # still set one). A real hash keeps every password check on its usual path.
        user = User(
            id=new_id(),
            username="",
            password_hash=self.hasher.hash(secrets.token_urlsafe(32)),
            workspace_id=new_id(),
        )
        taken = {lookalike_key(u.username) for u in self.users.list_users()}
        for username in _usernames(claims):
            if lookalike_key(username) in taken:
                continue
            user.username = username
            try:
                self.users.add_user(user)
                break
            except ConflictError:  # registered meanwhile
                taken.add(lookalike_key(username))
        else:  # pragma: no cover - _usernames ends with random names
            raise ConflictError("no free username for this person")
        try:
            self.links.link(self.issuer, subject, user.id)
        except ConflictError:  # the same person's other sign-in linked first: theirs wins
            self.users.delete_user(user.id)
            winner = self.existing(subject)
            if winner is None:
                raise
            return winner
        self.metadata.ensure_workspace(Workspace(id=user.workspace_id, name=user.username))
        return user


def _usernames(claims: dict[str, Any]) -> Iterator[str]:
    """Valid usernames to try, best first: from the issuer's names, then numbered, then
    random."""
    base = next(filter(None, map(_fitted, _suggested(claims))), "user")
    yield base
    for n in range(2, _NUMBERED + 1):
        yield f"{base}-{n}"
    while True:
        yield f"{base}-{secrets.token_hex(3)}"


def _suggested(claims: dict[str, Any]) -> Iterator[str]:
    for claim in ("preferred_username", "email", "nickname", "name"):
        value = claims.get(claim)
        if isinstance(value, str):
            yield value


def _fitted(name: str) -> str | None:
    """`name` made a valid username (its disallowed characters dropped), or None."""
    for candidate in (name, _ascii(name)):
        fitted = _NOT_IN_USERNAMES.sub("", candidate).strip(".")[:_BASE_LENGTH].rstrip(".")
        try:
            return validate_username(fitted)
        except ValidationError:
            continue
    return None


def _ascii(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
