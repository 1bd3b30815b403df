"""FernetCipher: the SecretCipher for model-config API keys (AES-128-CBC + HMAC-SHA256)."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken


def new_fernet_key() -> str:
    return Fernet.generate_key().decode("ascii")


class FernetCipher:
    def __init__(self, key: str) -> None:
        # Fernet rejects a malformed key here, at start, not at the first encrypt.
        self._fernet = Fernet(key.encode("ascii"))

    def encrypt(self, plaintext: str) -> str:
        return self._fernet.encrypt(plaintext.encode("utf-8")).decode("ascii")

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode("utf-8")
        except InvalidToken as exc:
            raise ValueError("the secret was encrypted with another key") from exc
