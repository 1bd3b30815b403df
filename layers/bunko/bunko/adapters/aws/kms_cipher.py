"""KmsCipher: the SecretCipher on AWS KMS (model API keys at rest), and the JWT signing key
from Secrets Manager. KMS encrypts up to 4 KB directly, far more than an API key."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from botocore.exceptions import ClientError

# Bound into every ciphertext: a blob encrypted for another purpose does not decrypt here.
ENCRYPTION_CONTEXT = {"app": "bunko", "purpose": "model-api-key"}


class KmsCipher:
    def __init__(self, client: Any, *, key_id: str) -> None:
        self.client = client
        self.key_id = key_id

    def encrypt(self, plaintext: str) -> str:
        response = self.client.encrypt(
            KeyId=self.key_id,
            Plaintext=plaintext.encode("utf-8"),
            EncryptionContext=ENCRYPTION_CONTEXT,
        )
        return base64.b64encode(response["CiphertextBlob"]).decode("ascii")

    def decrypt(self, token: str) -> str:
        try:
            blob = base64.b64decode(token.encode("ascii"), validate=True)
            response = self.client.decrypt(
                CiphertextBlob=blob, KeyId=self.key_id, EncryptionContext=ENCRYPTION_CONTEXT
            )
        except (binascii.Error, ValueError) as exc:
            raise ValueError("not a ciphertext of this key") from exc
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in {"InvalidCiphertextException", "IncorrectKeyException"}:
                raise ValueError("not a ciphertext of this key") from exc
            raise
        return response["Plaintext"].decode("utf-8")


def load_secret(client: Any, secret_id: str) -> str:
    """A Secrets Manager secret's string (the JWT signing key, an endpoint's API key); ""
    for a secret that holds only binary data."""
    return client.get_secret_value(SecretId=secret_id).get("SecretString") or ""
