"""The account ports as one subject, so a contract suite can run on every backend."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bunko.adapters.local.sqlite.accounts import SqliteLoginAttemptStore, SqliteUserStore
from bunko.adapters.local.sqlite.answers import SqliteAnswerStore
from bunko.adapters.local.sqlite.apikeys import SqliteApiKeyStore
from bunko.adapters.local.sqlite.audit import SqliteAuditStore
from bunko.adapters.local.sqlite.db import SqliteDatabase
from bunko.adapters.local.sqlite.identity_links import SqliteIdentityLinkStore
from bunko.adapters.local.sqlite.libraries import SqliteLibraryStore
from bunko.adapters.local.sqlite.model_configs import SqliteModelConfigStore
from bunko.adapters.local.sqlite.settings import SqliteSettingsStore
from bunko.ports import (
    ApiKeyStore,
    LoginAttemptStore,
    ModelConfigStore,
    SettingsStore,
    UserStore,
)
from bunko.ports.answers import AnswerStore
from bunko.ports.audit import AuditStore
from bunko.ports.libraries import LibraryStore
from bunko.ports.sign_in import IdentityLinkStore


@dataclass
class AccountStores:
    users: UserStore
    attempts: LoginAttemptStore
    model_configs: ModelConfigStore
    settings: SettingsStore
    api_keys: ApiKeyStore
    libraries: LibraryStore
    links: IdentityLinkStore
    audit: AuditStore  # kept 365 days
    answers: AnswerStore


def sqlite_accounts(tmp_path: Path) -> Iterator[AccountStores]:
    db = SqliteDatabase(tmp_path / "bunko.db")
    yield AccountStores(
        users=SqliteUserStore(db),
        attempts=SqliteLoginAttemptStore(db),
        model_configs=SqliteModelConfigStore(db),
        settings=SqliteSettingsStore(db),
        api_keys=SqliteApiKeyStore(db),
        libraries=SqliteLibraryStore(db),
        links=SqliteIdentityLinkStore(db),
        audit=SqliteAuditStore(db, retention_days=365),
        answers=SqliteAnswerStore(db),
    )
    db.close()
