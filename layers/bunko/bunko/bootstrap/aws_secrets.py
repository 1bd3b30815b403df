"""Secrets the AWS functions read from Secrets Manager at start, and the error a function
raises when its configuration or role does not let it."""

from __future__ import annotations

from typing import Any


class DeploymentError(RuntimeError):
    """The function's configuration or role does not match what the code needs."""


def read_secret(client: Any, secret_id: str, *, what: str, setting: str) -> str:
    """The secret's string. A refusal (AccessDenied, a deleted or missing secret) or an empty
    secret is a DeploymentError that says what to fix, not a bare ClientError from deep in
    the first request."""
    from botocore.exceptions import ClientError

    from bunko.adapters.aws.kms_cipher import load_secret

    try:
        value = load_secret(client, secret_id)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "error")
        raise DeploymentError(
            f"cannot read {what} from the secret {secret_id} ({code}): check {setting} "
            "and that this function's role may read it"
        ) from exc
    if not value.strip():
        raise DeploymentError(
            f"the secret {secret_id} ({what}, {setting}) is empty: store the value as the "
            "secret's string (aws secretsmanager put-secret-value --secret-id … "
            "--secret-string …)"
        )
    return value.strip()
