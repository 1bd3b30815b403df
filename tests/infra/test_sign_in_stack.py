"""Sign-in with an identity provider in the stack: off by default; with bunko:cognitoUserPool,
a user pool whose managed login is the issuer (its web client: the authorization code flow
with PKCE, no secret, the API's /auth/oidc/callback; a group per mapped group; TOTP for local
accounts), and the web functions (not ingest) told of it; with bunko:oidcIssuer, an external
issuer, its client's secret readable by the web functions alone. cdk-nag stays clean, and
what the functions are given parses as the settings they read."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Match, Template

from bunko.config import Settings
from infra.stacks.bunko_stack import BunkoConfig
from tests.infra.conftest import synthesize
from tests.infra.template_queries import nag_errors

pytestmark = pytest.mark.slow  # CDK synth

ROLES = {"eng": {"library": "Engineering", "role": "editor"},
         "handbook-readers": {"library": "Handbook", "role": "viewer"}}  # fmt: skip
AGENT_CALLBACK = "http://localhost:33418/callback"
WEB = ("bunko-api", "bunko-stream")


def environments(template: Template) -> dict[str, dict]:
    """Each of Bunko's functions' environment, by its service name."""
    found = {}
    for resource in template.find_resources("AWS::Lambda::Function").values():
        env = resource["Properties"].get("Environment", {}).get("Variables", {})
        if "POWERTOOLS_SERVICE_NAME" in env:
            found[env["POWERTOOLS_SERVICE_NAME"]] = env
    return found


def oidc(env: dict) -> dict:
    return {k: v for k, v in env.items() if k.startswith("BUNKO_OIDC") or k == "BUNKO_WEB_APP_URL"}


def callback_url(stage: str = "v1") -> dict:
    return {"Fn::Join": ["", ["https://", {"Ref": Match.string_like_regexp("RestApi")},
                              ".execute-api.", {"Ref": "AWS::Region"}, ".",
                              {"Ref": "AWS::URLSuffix"}, f"/{stage}/auth/oidc/callback"]]}  # fmt: skip


@pytest.fixture(scope="module")
def cognito(tmp_path_factory):
    return synthesize(tmp_path_factory, **{
        "bunko:cognitoUserPool": "true", "bunko:oidcGroupRoles": json.dumps(ROLES),
        "bunko:cognitoMcpCallbackUrls": json.dumps([AGENT_CALLBACK]),
        "bunko:cognitoIdentityProviders": json.dumps(["EntraID"]),
    })  # fmt: skip


def test_off_by_default(template):
    template.resource_count_is("AWS::Cognito::UserPool", 0)
    assert all(oidc(env) == {} for env in environments(template).values())


def test_the_user_pool_and_its_clients(cognito):
    template = Template.from_stack(cognito)
    template.has_resource_properties("AWS::Cognito::UserPool", {
        "MfaConfiguration": "ON", "EnabledMfas": ["SOFTWARE_TOKEN_MFA"],
        "AdminCreateUserConfig": {"AllowAdminCreateUserOnly": True},
        "Policies": {"PasswordPolicy": Match.object_like({"MinimumLength": 12})},
    })  # fmt: skip
    template.has_resource_properties("AWS::Cognito::UserPoolClient", {
        "GenerateSecret": False, "AllowedOAuthFlows": ["code"],
        "AllowedOAuthScopes": ["openid", "profile", "email"],
        "CallbackURLs": [callback_url()],
        "SupportedIdentityProviders": ["COGNITO", "EntraID"],
    })  # fmt: skip
    template.has_resource_properties("AWS::Cognito::UserPoolClient", {
        "GenerateSecret": False, "CallbackURLs": [AGENT_CALLBACK],
    })  # fmt: skip
    groups = template.find_resources("AWS::Cognito::UserPoolGroup").values()
    assert sorted(g["Properties"]["GroupName"] for g in groups) == sorted(ROLES)
    template.resource_count_is("AWS::Cognito::UserPoolDomain", 1)
    outputs = template.to_json()["Outputs"]
    assert {"UserPoolId", "OidcIssuer", "WebClientId", "McpClientId", "SignInDomain"} <= set(
        outputs
    )
    assert nag_errors(cognito) == []


def test_the_web_functions_are_told_of_the_pool_and_ingest_is_not(cognito):
    envs = environments(Template.from_stack(cognito))
    assert oidc(envs["bunko-ingest"]) == {}
    for name in WEB:
        env = envs[name]
        assert env["BUNKO_OIDC_ISSUER"]["Fn::GetAtt"][1] == "ProviderURL"  # the pool's
        assert env["BUNKO_OIDC_GROUPS_CLAIM"] == "cognito:groups"
        assert env["BUNKO_OIDC_AUDIENCE_CLAIM"] == "client_id"
        assert (
            "Mcp" in env["BUNKO_OIDC_AUDIENCE"]["Ref"]
            and "Web" in env["BUNKO_OIDC_CLIENT_ID"]["Ref"]
        )
        assert json.loads(env["BUNKO_OIDC_GROUP_ROLES"]) == ROLES
        assert env["BUNKO_OIDC_REDIRECT_URI"]["Fn::Join"][1][-1] == "/v1/auth/oidc/callback"
        assert "BUNKO_OIDC_CLIENT_SECRET_ARN" not in env  # a public client: PKCE alone


def test_an_external_issuer_and_its_client_secret(tmp_path_factory):
    stack = synthesize(tmp_path_factory, **{
        "bunko:oidcIssuer": "https://login.example.org/tenant/v2.0",
        "bunko:oidcClientId": "web-app-id", "bunko:oidcClientSecret": "bunko/oidc-client",
        "bunko:oidcGroupRoles": json.dumps(ROLES), "bunko:oidcProviderName": "Example",
        "bunko:oidcMcpScopes": "api://bunko/mcp",
    })  # fmt: skip
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::Cognito::UserPool", 0)
    envs = environments(template)
    assert oidc(envs["bunko-ingest"]) == {}
    for name in WEB:
        env = envs[name]
        assert env["BUNKO_OIDC_ISSUER"] == "https://login.example.org/tenant/v2.0"
        assert env["BUNKO_OIDC_CLIENT_ID"] == "web-app-id"
        assert env["BUNKO_OIDC_CLIENT_SECRET_ARN"] == "bunko/oidc-client"
        assert env["BUNKO_OIDC_AUDIENCE"]["Fn::Join"][1][-1] == "/v1/mcp"
        assert env["BUNKO_OIDC_GROUPS_CLAIM"] == "groups"
        assert env["BUNKO_OIDC_MCP_SCOPES"] == "api://bunko/mcp"
    reads = [
        s for p in template.find_resources("AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "secretsmanager:GetSecretValue" and "oidc-client" in json.dumps(s)
    ]  # fmt: skip
    assert len(reads) == 2  # the api and stream roles, on that one secret
    assert nag_errors(stack) == []


def test_what_the_functions_are_given_parses_as_their_settings(monkeypatch):
    monkeypatch.setenv("BUNKO_OIDC_ISSUER", "https://cognito-idp.eu-west-1.amazonaws.com/pool")
    monkeypatch.setenv("BUNKO_OIDC_CLIENT_ID", "client")
    monkeypatch.setenv("BUNKO_OIDC_GROUP_ROLES", json.dumps(ROLES))
    monkeypatch.setenv("BUNKO_OIDC_AUDIENCE_CLAIM", "client_id")
    settings = Settings(_env_file=None)
    assert settings.oidc_sign_in and settings.oidc_group_roles["eng"].library == "Engineering"
    assert settings.authorization_servers == ["https://cognito-idp.eu-west-1.amazonaws.com/pool"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"cognito_user_pool": True, "oidc_issuer": "https://idp.example.org"}, "choose one"),
        ({"oidc_issuer": "http://idp.example.org"}, "https://"),
        ({"oidc_client_id": "x"}, "need bunko:oidcIssuer"),
        ({"oidc_group_roles": {"g": {"library": "L", "role": "boss"}}}, "one of"),
        ({"cognito_user_pool": True, "cognito_domain_prefix": "my-cognito"}, "without"),
        # ~25 groups with long names: over Lambda's 4 KB environment with the other variables
        (
            {
                "oidc_group_roles": {
                    f"engineering-group-{n:02d}": {
                        "library": f"Engineering Library {n:02d}",
                        "role": "editor",
                    }
                    for n in range(30)
                }
            },
            "4 KB",
        ),
    ],
)
def test_the_settings_are_checked_at_synth(values, message):
    with pytest.raises(ValueError, match=message):
        BunkoConfig(**values)


def test_the_sign_out_address_the_functions_send_is_one_of_the_web_clients(cognito):
    """Issue 47, point 9: the web app's sign-out sends the browser to the pool's /logout with
    `logout_uri` = BUNKO_WEB_APP_URL exactly as the functions have it (http/routes/auth.py);
    Cognito redirects only to a URL among the app client's LogoutURLs."""
    template = Template.from_stack(cognito)
    envs = environments(template)
    sent = [envs[name]["BUNKO_WEB_APP_URL"] for name in WEB]
    assert sent[0] == sent[1]
    clients = template.find_resources("AWS::Cognito::UserPoolClient").values()
    web = [c["Properties"] for c in clients if c["Properties"]["CallbackURLs"] != [AGENT_CALLBACK]]
    assert len(web) == 1
    assert sent[0] in web[0]["LogoutURLs"]


def test_every_client_has_a_managed_login_style_and_no_api_sign_in(cognito):
    """Managed login v2 (the domain's version) shows an error page for a client without a
    style: each client gets Cognito's default one. People sign in there only."""
    template = Template.from_stack(cognito)
    template.has_resource_properties("AWS::Cognito::UserPoolDomain", {"ManagedLoginVersion": 2})
    clients = template.find_resources("AWS::Cognito::UserPoolClient")
    for client in clients.values():  # Cognito's default adds SRP and custom auth
        assert client["Properties"]["ExplicitAuthFlows"] == ["ALLOW_REFRESH_TOKEN_AUTH"]
    brandings = template.find_resources("AWS::Cognito::ManagedLoginBranding").values()
    assert len(clients) == 2
    assert sorted(b["Properties"]["ClientId"]["Ref"] for b in brandings) == sorted(clients)
    for branding in brandings:
        assert branding["Properties"]["UseCognitoProvidedValues"] is True
        assert branding["Properties"]["UserPoolId"] == {"Ref": next(
            iter(template.find_resources("AWS::Cognito::UserPool"))
        )}  # fmt: skip


def test_the_web_functions_environment_fits_lambdas_4_kb_with_the_largest_mapping(
    tmp_path_factory,
):
    """The check's margin holds: with a mapping just under the limit, the api function's
    whole environment, its references at their real lengths, stays under 4 KB."""
    from infra.stacks.sign_in import GROUP_ROLES_MAX_BYTES

    roles, n = {}, 0
    while True:
        grown = {**roles, f"group-{n:03d}": {"library": f"Library {n:03d}", "role": "viewer"}}
        if len(json.dumps(grown, ensure_ascii=False).encode()) > GROUP_ROLES_MAX_BYTES:
            break
        roles, n = grown, n + 1
    stack = synthesize(tmp_path_factory, **{
        "bunko:cognitoUserPool": "true", "bunko:oidcGroupRoles": json.dumps(roles),
        "bunko:cognitoMcpCallbackUrls": json.dumps([AGENT_CALLBACK]),
    })  # fmt: skip
    env = environments(Template.from_stack(stack))["bunko-api"]
    # A reference's real value: an ARN, a URL, a name; the longest (a secret's ARN, the
    # queue's URL) are about 100 characters: 120 each.
    size = sum(len(k) + (len(v) if isinstance(v, str) else 120) for k, v in env.items())
    assert size < 4096, size
