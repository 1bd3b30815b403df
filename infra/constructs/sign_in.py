"""CognitoSignIn: an optional Cognito user pool people sign in with (bunko:cognitoUserPool).

The pool's managed login is an OpenID Connect issuer; Bunko's API is its relying party
(docs/aws.md, "Sign-in with an identity provider"):

- the web app's client: the authorization code flow with PKCE, no secret (a public client:
  the API keeps no client secret), its one callback the API's /auth/oidc/callback;
- MCP clients' client (when `mcp_callback_urls` are given): the same flow, for the callback
  URLs the agents listen on (Cognito matches them exactly); its id is the audience the API
  requires of MCP access tokens (Cognito names it in the `client_id` claim);
- a group per group the mapping names (bunko:oidcGroupRoles), to put people in;
- identity providers added to the pool outside this stack (Entra ID, Google, Okta: their
  secrets stay out of the template), allowed on the clients by name.

Local accounts in the pool must use TOTP as a second factor; sign-up is by administrators.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cognito as cognito
from constructs import Construct

SCOPES = [cognito.OAuthScope.OPENID, cognito.OAuthScope.PROFILE, cognito.OAuthScope.EMAIL]


class CognitoSignIn(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        domain_prefix: str,
        callback_url: str,
        logout_url: str,
        groups: list[str],
        identity_providers: list[str],
        mcp_callback_urls: list[str],
        retain: bool,
    ) -> None:
        super().__init__(scope, construct_id)
        self.user_pool = cognito.UserPool(
            self, "Pool",
            self_sign_up_enabled=False,  # people come from the directory or an administrator
            sign_in_aliases=cognito.SignInAliases(username=True, email=True),
            sign_in_case_sensitive=False,
            mfa=cognito.Mfa.REQUIRED,
            mfa_second_factor=cognito.MfaSecondFactor(sms=False, otp=True),
            password_policy=cognito.PasswordPolicy(
                min_length=12, require_lowercase=True, require_uppercase=True,
                require_digits=True, require_symbols=True,
                temp_password_validity=Duration.days(3),
            ),
            account_recovery=cognito.AccountRecovery.EMAIL_ONLY,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            removal_policy=RemovalPolicy.RETAIN if retain else RemovalPolicy.DESTROY,
        )  # fmt: skip
        self.domain = self.user_pool.add_domain(
            "Domain",
            cognito_domain=cognito.CognitoDomainOptions(domain_prefix=domain_prefix),
            managed_login_version=cognito.ManagedLoginVersion.NEWER_MANAGED_LOGIN,
        )
        providers = [cognito.UserPoolClientIdentityProvider.COGNITO] + [
            cognito.UserPoolClientIdentityProvider.custom(name) for name in identity_providers
        ]
        self.web_client = self._client("Web", [callback_url], [logout_url], providers)
        self.mcp_client = (
            self._client("Mcp", mcp_callback_urls, [], providers) if mcp_callback_urls else None
        )
        # Managed login (v2) renders a client's pages from its style, and shows an error for a
        # client that has none: each client gets Cognito's default style (restyle it in the
        # console's branding designer; a later deploy keeps what is not in the template).
        self.clients = [c for c in (self.web_client, self.mcp_client) if c is not None]
        self.brandings = [
            cognito.CfnManagedLoginBranding(
                self,
                f"{client.node.id}Branding",
                user_pool_id=self.user_pool.user_pool_id,
                client_id=client.user_pool_client_id,
                use_cognito_provided_values=True,
            )
            for client in self.clients
        ]
        for group in groups:
            cognito.CfnUserPoolGroup(
                self, f"Group{len(self.node.children)}",
                user_pool_id=self.user_pool.user_pool_id, group_name=group,
                description="Bunko: bunko:oidcGroupRoles gives this group a library role",
            )  # fmt: skip
        # The issuer of the pool's tokens (its discovery document is under it)
        self.issuer = self.user_pool.user_pool_provider_url

    def _client(
        self,
        name: str,
        callbacks: list[str],
        logouts: list[str],
        providers: list[cognito.UserPoolClientIdentityProvider],
    ) -> cognito.UserPoolClient:
        client = self.user_pool.add_client(
            name,
            generate_secret=False,  # PKCE, no secret: the code is bound to its verifier
            auth_flows=cognito.AuthFlow(),  # no password flow outside managed login
            o_auth=cognito.OAuthSettings(
                flows=cognito.OAuthFlows(authorization_code_grant=True),
                scopes=SCOPES, callback_urls=callbacks, logout_urls=logouts or None,
            ),
            supported_identity_providers=providers,
            prevent_user_existence_errors=True,
            access_token_validity=Duration.hours(1),
            id_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(1),
            enable_token_revocation=True,
        )  # fmt: skip
        # No sign-in API flow outside managed login: with ExplicitAuthFlows left out, Cognito
        # allows SRP and custom auth (its default); refreshing tokens is all a client does.
        cfn = client.node.default_child
        assert isinstance(cfn, cognito.CfnUserPoolClient)
        cfn.explicit_auth_flows = ["ALLOW_REFRESH_TOKEN_AUTH"]
        return client
