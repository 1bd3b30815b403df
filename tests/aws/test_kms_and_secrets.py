"""The AWS secrets: the KMS cipher for stored provider keys and the JWT secret from Secrets
Manager (the account stores themselves are under tests/contract/test_account_contract.py)."""

from __future__ import annotations

import base64

import boto3
import pytest

from bunko.adapters.aws.kms_cipher import KmsCipher, load_secret
from tests.aws.stand_ins import REGION


def test_kms_cipher_round_trip_and_foreign_tokens(aws):
    kms = boto3.client("kms", region_name=REGION)
    key_id = kms.create_key()["KeyMetadata"]["KeyId"]
    cipher = KmsCipher(kms, key_id=key_id)
    token = cipher.encrypt("sk-秘密")
    assert "sk-" not in token
    assert cipher.decrypt(token) == "sk-秘密"
    # Sealed by the same key for another purpose: the encryption context does not match.
    other = kms.encrypt(KeyId=key_id, Plaintext=b"sk-x", EncryptionContext={"app": "other"})
    with pytest.raises(ValueError, match="ciphertext"):
        cipher.decrypt(base64.b64encode(other["CiphertextBlob"]).decode())
    with pytest.raises(ValueError, match="ciphertext"):
        cipher.decrypt("not base64 at all!")


def test_jwt_secret_from_secrets_manager(aws):
    client = boto3.client("secretsmanager", region_name=REGION)
    arn = client.create_secret(Name="jwt", SecretString="s3cr3t-value")["ARN"]
    assert load_secret(client, arn) == "s3cr3t-value"
