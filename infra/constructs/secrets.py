"""Secrets: the JWT signing key (Secrets Manager) and the KMS key that encrypts model API
keys stored in the table (envelope-encrypted by the app)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct


class Secrets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, retain_data: bool) -> None:
        super().__init__(scope, construct_id)
        removal = RemovalPolicy.RETAIN if retain_data else RemovalPolicy.DESTROY
        self.jwt_secret = secretsmanager.Secret(
            self, "JwtSigningKey",
            description="Bunko: HMAC key that signs user JWTs",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=64, exclude_punctuation=True
            ),
            removal_policy=removal,
        )  # fmt: skip
        self.model_keys = kms.Key(
            self, "ModelKeys",
            description="Bunko: encrypts API keys of configured model endpoints",
            enable_key_rotation=True,
            removal_policy=removal,
        )  # fmt: skip
