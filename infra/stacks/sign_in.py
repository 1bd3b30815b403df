"""Sign-in with an identity provider, the stack's part (docs/aws.md): a Cognito user pool the
stack creates (bunko:cognitoUserPool), or an external OpenID Connect issuer by its URL
(bunko:oidcIssuer: Entra ID, Google, Okta…), checked at synth; the web functions' settings
for it (core settings, bunko.config.Settings: BUNKO_OIDC_*, BUNKO_WEB_APP_URL); and read
access to the one secret that holds an external client's secret, if it has one."""

from __future__ import annotations

import json
import re
from typing import Protocol
from urllib.parse import urlsplit

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from bunko.deploy_schema import ENV_PREFIX, env_name
from infra.constructs.sign_in import CognitoSignIn
from infra.stacks.embedding import secret_resource

ROLES = ("viewer", "editor", "owner")
# Lambda holds a function's whole environment (names and values) in 4 KB; the web functions'
# other variables take up to ~2.3 KB (names, ARNs, URLs), so the group mapping gets 1.5 KB:
# some 20 groups. More would fail at deploy; this fails at synth instead.
GROUP_ROLES_MAX_BYTES = 1536
_DOMAIN_PREFIX = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_SECRET = re.compile(
    r"^(arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:)?[\w/+=.@-]{1,512}$"
)


class SignInChoice(Protocol):
    """The deployment's sign-in parameters (BunkoConfig's, cdk.json `bunko:*`)."""

    cognito_user_pool: bool
    cognito_domain_prefix: str
    cognito_identity_providers: list[str]
    cognito_mcp_callback_urls: list[str]
    oidc_issuer: str
    oidc_client_id: str
    oidc_client_secret: str
    oidc_groups_claim: str
    oidc_group_roles: dict
    oidc_provider_name: str
    oidc_audience: str
    oidc_audience_claim: str
    oidc_mcp_scopes: str
    retain_data: bool


def check_sign_in(config: SignInChoice) -> None:
    if config.cognito_user_pool and config.oidc_issuer:
        raise ValueError("bunko:cognitoUserPool and bunko:oidcIssuer: choose one issuer")
    if config.oidc_issuer:
        parts = urlsplit(config.oidc_issuer)
        if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
            raise ValueError("bunko:oidcIssuer: the issuer's https:// URL, as its tokens name it")
    elif config.oidc_client_id or config.oidc_client_secret:
        raise ValueError("bunko:oidcClientId and bunko:oidcClientSecret need bunko:oidcIssuer")
    if config.oidc_client_secret and not _SECRET.match(config.oidc_client_secret):
        raise ValueError("bunko:oidcClientSecret: a Secrets Manager secret's ARN or name")
    prefix = config.cognito_domain_prefix
    if prefix and (not _DOMAIN_PREFIX.match(prefix) or re.search("aws|amazon|cognito", prefix)):
        raise ValueError(
            "bunko:cognitoDomainPrefix: lower-case letters, digits and hyphens, without "
            "'aws', 'amazon' or 'cognito'"
        )
    size = len(json.dumps(config.oidc_group_roles, ensure_ascii=False).encode("utf-8"))
    if size > GROUP_ROLES_MAX_BYTES:
        raise ValueError(
            f"bunko:oidcGroupRoles is {size:,} bytes as JSON; it travels in the functions' "
            f"environment, which Lambda holds to 4 KB in all: at most {GROUP_ROLES_MAX_BYTES:,} "
            "(shorter group or library names, or fewer groups)"
        )
    for group, given in config.oidc_group_roles.items():
        if not isinstance(given, dict) or set(given) != {"library", "role"}:
            raise ValueError(f"bunko:oidcGroupRoles[{group!r}]: {{'library': …, 'role': …}}")
        if given["role"] not in ROLES or not str(given["library"]).strip():
            raise ValueError(f"bunko:oidcGroupRoles[{group!r}]: a library and one of {ROLES}")


def add_sign_in(
    stack: Stack,
    config: SignInChoice,
    *,
    api_base: str,
    web_url: str,
    functions: list[lambda_.Function],
) -> CognitoSignIn | None:
    """Configure `functions` (the web ones) for the chosen issuer; the pool if one is made.
    `api_base` is the API's URL with its stage (…/v1), built from the API's id so the
    functions need not wait for their own stage."""
    if not (config.cognito_user_pool or config.oidc_issuer):
        return None
    callback = f"{api_base}/auth/oidc/callback"
    settings = {
        "OIDC_REDIRECT_URI": callback,
        "WEB_APP_URL": web_url,
        "OIDC_GROUP_ROLES": json.dumps(config.oidc_group_roles, ensure_ascii=False),
        "OIDC_MCP_SCOPES": config.oidc_mcp_scopes,
    }
    pool = None
    if config.cognito_user_pool:
        pool = CognitoSignIn(
            stack, "SignIn",
            domain_prefix=config.cognito_domain_prefix or f"{stack.stack_name.lower()}-{stack.account}",
            callback_url=callback, logout_url=web_url, groups=sorted(config.oidc_group_roles),
            identity_providers=config.cognito_identity_providers,
            mcp_callback_urls=config.cognito_mcp_callback_urls, retain=config.retain_data,
        )  # fmt: skip
        settings |= {
            "OIDC_ISSUER": pool.issuer,
            "OIDC_CLIENT_ID": pool.web_client.user_pool_client_id,
            "OIDC_GROUPS_CLAIM": config.oidc_groups_claim or "cognito:groups",
            "OIDC_PROVIDER_NAME": config.oidc_provider_name or "Cognito",
            # Cognito's access tokens carry no `aud`: their client is the audience
            "OIDC_AUDIENCE_CLAIM": "client_id",
            "OIDC_AUDIENCE": pool.mcp_client.user_pool_client_id if pool.mcp_client else "",
        }
        _outputs(stack, pool)
    else:
        settings |= {
            "OIDC_ISSUER": config.oidc_issuer,
            "OIDC_CLIENT_ID": config.oidc_client_id,
            "OIDC_GROUPS_CLAIM": config.oidc_groups_claim or "groups",
            "OIDC_PROVIDER_NAME": config.oidc_provider_name,
            "OIDC_AUDIENCE": config.oidc_audience or f"{api_base}/mcp",
            "OIDC_AUDIENCE_CLAIM": config.oidc_audience_claim or "aud",
        }
    for function in functions:
        for name, value in settings.items():
            if value:
                function.add_environment(f"{ENV_PREFIX}{name}", value)
        if config.oidc_client_secret and not config.cognito_user_pool:
            function.add_environment(env_name("oidc_client_secret_arn"), config.oidc_client_secret)
            function.add_to_role_policy(iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"],
                resources=[secret_resource(stack, config.oidc_client_secret)],
            ))  # fmt: skip
    return pool


def _outputs(stack: Stack, pool: CognitoSignIn) -> None:
    values = {
        "UserPoolId": pool.user_pool.user_pool_id,
        "OidcIssuer": pool.issuer,
        "WebClientId": pool.web_client.user_pool_client_id,
        "SignInDomain": pool.domain.base_url(),
    }
    if pool.mcp_client is not None:
        values["McpClientId"] = pool.mcp_client.user_pool_client_id
    for name, value in values.items():
        CfnOutput(stack, name, value=value)
