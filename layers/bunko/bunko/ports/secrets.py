"""Secrets at rest."""

from __future__ import annotations

from typing import Protocol


class SecretCipher(Protocol):
    """Encrypts secrets at rest (Fernet locally; KMS on AWS)."""

    def encrypt(self, plaintext: str) -> str: ...
    def decrypt(self, token: str) -> str:
        """Raises ValueError when the token was not made with this key."""
