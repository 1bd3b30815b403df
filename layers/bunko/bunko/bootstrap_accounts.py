"""The composition root's account half: builds the account adapters and services.

Embedded: the account tables live in the metadata SQLite database; the JWT secret and the
Fernet key come from settings or are generated on first run into data_dir/secrets.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

from bunko.config import Settings
from bunko.ports import BlobStore, MetadataStore
from bunko.services.accounts import (
    AccountServices,
    AccountStores,
    build_account_services,
    build_auth,
)
from bunko.services.auth import AuthService
from bunko.services.ingest import IngestService

if TYPE_CHECKING:
    from bunko.adapters.aws import AwsAccountParts
    from bunko.adapters.local.sqlite_db import SqliteDatabase

log = logging.getLogger(__name__)


def build_accounts(
    settings: Settings,
    *,
    metadata: MetadataStore,
    blobs: BlobStore,
    ingest: IngestService,
    aws_parts: AwsAccountParts | None = None,
) -> AccountServices | None:
    """The account services; on AWS from `aws_parts` (None when they are not configured)."""
    if settings.backend != "local":
        if aws_parts is None:
            return None
        from bunko.adapters.local.soffice import SofficeConverter

        return build_account_services(
            settings,
            stores=aws_parts.stores,
            metadata=metadata,
            blobs=blobs,
            ingest=ingest,
            cipher=aws_parts.cipher,
            converter=SofficeConverter(),  # answers 503 where no LibreOffice is installed
            jwt_secret=aws_parts.jwt_secret,
        )
    from bunko.adapters.fernet_cipher import FernetCipher, new_fernet_key
    from bunko.adapters.local.folder_monitor import local_folder_check
    from bunko.adapters.local.secret_files import load_or_create_secret
    from bunko.adapters.local.soffice import SofficeConverter

    stores = _local_stores(metadata.db)  # the metadata database holds them (migration 0002)
    jwt_secret = _jwt_secret(settings)
    fernet_key = (
        settings.fernet_key.get_secret_value()
        if settings.fernet_key
        else load_or_create_secret(settings.secrets_dir / "fernet.key", new_fernet_key)
    )
    accounts = build_account_services(
        settings,
        stores=stores,
        metadata=metadata,
        blobs=blobs,
        ingest=ingest,
        cipher=FernetCipher(fernet_key),
        converter=SofficeConverter(),
        jwt_secret=jwt_secret,
        folder_check=local_folder_check(settings.data_dir),
    )
    if settings.admin_username and settings.admin_password:
        accounts.users.ensure_admin(
            settings.admin_username, settings.admin_password.get_secret_value()
        )
    return accounts


def open_local_auth(settings: Settings) -> AuthService:
    """Just the auth service over the local stores, for the CLI (no index, no model)."""
    from bunko.adapters.local.sqlite_db import SqliteDatabase
    from bunko.adapters.local.sqlite_store import SqliteMetadataStore

    db = SqliteDatabase(settings.metadata_path)
    return build_auth(
        settings,
        stores=_local_stores(db),
        metadata=SqliteMetadataStore(db),
        jwt_secret=_jwt_secret(settings),
    )


def _local_stores(db: SqliteDatabase) -> AccountStores:
    from bunko.adapters.local.sqlite_accounts import SqliteLoginAttemptStore, SqliteUserStore
    from bunko.adapters.local.sqlite_model_configs import SqliteModelConfigStore
    from bunko.adapters.local.sqlite_settings import SqliteSettingsStore

    return AccountStores(
        users=SqliteUserStore(db),
        login_attempts=SqliteLoginAttemptStore(db),
        model_configs=SqliteModelConfigStore(db),
        settings=SqliteSettingsStore(db),
    )


def _jwt_secret(settings: Settings) -> str:
    from bunko.adapters.local.secret_files import load_or_create_secret

    if settings.jwt_secret:
        return settings.jwt_secret.get_secret_value()
    return load_or_create_secret(
        settings.secrets_dir / "jwt_secret", lambda: secrets.token_urlsafe(48)
    )


def aws_account_parts(settings: Settings) -> AwsAccountParts | None:
    """The AWS account stores, or None (logged) when the deployment does not configure them."""
    if settings.backend != "aws":
        return None
    from bunko.adapters.aws import build_aws_account_parts

    try:
        return build_aws_account_parts()
    except RuntimeError as exc:
        log.warning("accounts and API keys are off: %s", exc)
        return None
