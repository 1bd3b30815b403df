"""AuthService: register, log in, change password (aurak's /auth/* endpoints).

Passwords are argon2 hashes (`PasswordHasher`), upgraded on login when the parameters
change; tokens are JWTs (`TokenService`); failed logins are throttled (`LoginThrottle`).
A registered user gets a personal workspace: everything they upload or configure lives
there, out of other users' reach.
"""

from __future__ import annotations

from collections.abc import Callable

from bunko.domain import Workspace, new_id, utcnow
from bunko.domain.accounts import User, username_key
from bunko.domain.audit import SIGN_IN, AuditEvent
from bunko.errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    TooManyRequestsError,
    ValidationError,
)
from bunko.ports import MetadataStore, UserStore
from bunko.services.accounts.audit import AuditTrail
from bunko.services.accounts.passwords import (
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    PasswordHasher,
)
from bunko.services.accounts.throttle import LoginThrottle
from bunko.services.accounts.tokens import TokenService
from bunko.services.accounts.usernames import lookalike_key, validate_username

BAD_CREDENTIALS = "invalid username or password"
SIGNUP_CLOSED = "sign-up is closed: ask an admin to add you"


def validate_password(password: str, *, field: str = "password") -> str:
    if not isinstance(password, str) or not (
        MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH
    ):
        raise ValidationError(f"{field}: {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters")
    if not password.strip():
        raise ValidationError(f"{field}: must not be only spaces")
    return password


class AuthService:
    def __init__(
        self,
        *,
        users: UserStore,
        metadata: MetadataStore,
        hasher: PasswordHasher,
        tokens: TokenService,
        throttle: LoginThrottle,
        first_user_admin: bool = False,
        library_named: Callable[[str], object | None] | None = None,
        signup_open: bool = True,
        audit: AuditTrail | None = None,
    ) -> None:
        self.users = users
        self.audit = audit  # each sign-in, taken or refused, is one event
        # A library by (lookalike) name, or None: a new username may not look like one, as a
        # library may not look like a username (services/accounts/libraries.py).
        self.library_named = library_named
        self.first_user_admin = first_user_admin
        self.signup_open = signup_open
        self.metadata = metadata
        self.hasher = hasher
        self.tokens = tokens
        self.throttle = throttle

    def create_user(
        self,
        username: str,
        password: str,
        *,
        is_admin: bool = False,
        first_admin: bool = False,
        only_first: bool = False,
    ) -> User:
        """A new user with a personal workspace; ConflictError if the username is taken.
        `first_admin`: an admin if the deployment has none yet (decided atomically);
        `only_first`: and no user at all when another became that admin first."""
        validate_username(username)
        validate_password(password)
        self._refuse_lookalike(username)
        user = User(
            id=new_id(),
            username=username,
            password_hash=self.hasher.hash(password),
            workspace_id=new_id(),
            is_admin=is_admin,
        )
        if first_admin and not is_admin and self.users.count_admins() == 0:
            user.is_admin = self.users.add_first_admin(user)
            if not user.is_admin:  # another sign-up became the admin meanwhile
                if only_first:
                    raise PermissionDeniedError(SIGNUP_CLOSED)
                self.users.add_user(user)
        elif only_first:
            raise PermissionDeniedError(SIGNUP_CLOSED)
        else:
            self.users.add_user(user)
        self.metadata.ensure_workspace(Workspace(id=user.workspace_id, name=username))
        return user

    def _refuse_lookalike(self, username: str) -> None:
        # Said as "taken", the store's own answer for an exact match: a caller learns no
        # more than that the name is unavailable, not which user it resembles.
        key = lookalike_key(username)
        if any(lookalike_key(u.username) == key for u in self.users.list_users()) or (
            self.library_named is not None and self.library_named(username) is not None
        ):
            raise ConflictError(f"username {username!r} is taken")

    def signup_allowed(self) -> bool:
        """Whether anyone may create an account now: sign-up is open, or the deployment has
        no admin yet (its first account signs up, and becomes the admin)."""
        return self.signup_open or self.users.count_admins() == 0

    def register(self, username: str, password: str) -> User:
        """A new account; the first one of a deployment without an admin is its admin.
        With sign-up closed, PermissionDeniedError once an admin exists (of many sign-ups at
        once on a fresh deployment, only the one that becomes the admin is kept)."""
        if self.signup_open:
            return self.create_user(username, password, first_admin=self.first_user_admin)
        if not self.signup_allowed():
            raise PermissionDeniedError(SIGNUP_CLOSED)
        if not self.first_user_admin:  # no admin can be made here: nobody could add people
            return self.create_user(username, password)
        return self.create_user(username, password, first_admin=True, only_first=True)

    def login(self, username: str, password: str, *, address: str = "") -> tuple[str, User]:
        """(access token, user); AuthenticationError for bad credentials,
        TooManyRequestsError while the username is locked for `address` (the client's)."""
        key = username_key(username) if isinstance(username, str) else ""
        user = None
        try:
            self.throttle.begin(key, address)  # counted as failed until the password matches
            user = self.users.get_user_by_username(username) if key else None
            valid, upgraded = self.hasher.verify(password, user.password_hash if user else None)
            if not valid or user is None:
                raise AuthenticationError(BAD_CREDENTIALS)
        except (AuthenticationError, TooManyRequestsError) as exc:
            status = 401 if isinstance(exc, AuthenticationError) else 429
            self._signed_in(user, address, status)
            raise
        self.throttle.success(key, address)
        self._signed_in(user, address, 200)
        if upgraded:
            user.password_hash, user.updated_at = upgraded, utcnow()
            self.users.save_user(user)
        return self.tokens.issue(user), user

    def _signed_in(self, user: User | None, address: str, status: int) -> None:
        """A sign-in's event: whose account it was for (when the name is one), never the
        name or password typed."""
        if self.audit is not None:
            outcome = "ok" if status == 200 else "failed"
            self.audit.record(
                AuditEvent(
                    action=SIGN_IN,
                    outcome=outcome,
                    status=status,
                    user_id=user.id if user else None,
                    library_id=user.workspace_id if user else None,
                    client=address or None,
                )
            )

    def change_password(
        self, user_id: str, current: str, new: str, *, address: str = ""
    ) -> tuple[str, User]:
        """Set a new password and invalidate every older token; returns a fresh token."""
        user = self.users.get_user(user_id)
        if user is None:
            raise NotFoundError("user not found")
        key = username_key(user.username)
        self.throttle.begin(key, address)  # a stolen token must not become a password oracle
        valid, _ = self.hasher.verify(current, user.password_hash)
        if not valid:
            raise ValidationError("currentPassword: incorrect")
        self.throttle.success(key, address)
        validate_password(new, field="newPassword")
        if new == current:
            raise ValidationError("newPassword: must differ from the current password")
        user.password_hash = self.hasher.hash(new)
        user.token_version += 1
        user.updated_at = utcnow()
        self.users.save_user(user)
        return self.tokens.issue(user), user

    def resume(self, session_token: str) -> tuple[str, User]:
        """(a fresh access token, user) for a web session's token; AuthenticationError when
        it is bad, expired, or older than the user's last sign-out or password change."""
        claims = self.tokens.decode_session(session_token)
        user = self.users.get_user(str(claims["sub"])) if claims else None
        if user is None or claims is None or claims.get("ver") != user.token_version:
            raise AuthenticationError("the session ended: sign in again")
        return self.tokens.issue(user), user

    def user(self, user_id: str) -> User:
        user = self.users.get_user(user_id)
        if user is None:
            raise NotFoundError(f"user {user_id} not found")
        return user

    def set_admin(self, user_id: str, is_admin: bool) -> User:
        """Promote or demote; ConflictError when it would leave no admin."""
        user = self.user(user_id)
        if user.is_admin != is_admin:
            user.is_admin, user.updated_at = is_admin, utcnow()
            try:
                self.users.save_user(user)
            except ConflictError as exc:
                if not is_admin and self.users.count_admins() <= 1:
                    raise ConflictError("the last admin cannot be demoted") from exc
                raise
        return user

    def reset_password(self, user_id: str, password: str) -> User:
        """Set a password the admin chose; every token the user holds stops working."""
        user = self.user(user_id)
        validate_password(password, field="password")
        user.password_hash = self.hasher.hash(password)
        user.token_version += 1
        user.updated_at = utcnow()
        self.users.save_user(user)
        return user

    def logout(self, user_id: str) -> None:
        """Sign out everywhere: every token issued so far stops working."""
        user = self.users.get_user(user_id)
        if user is None:
            raise NotFoundError("user not found")
        user.token_version += 1
        user.updated_at = utcnow()
        self.users.save_user(user)
