"""BunkoStack: one deployable unit. The constructs build the parts; the stack wires them,
grants least-privilege permissions and exports the outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from bunko.deploy_schema import ENV_PREFIX, MOVES_PREFIX, env_name
from infra.constructs.api import RestApi
from infra.constructs.functions import BunkoFunctions
from infra.constructs.index_setup import SearchIndexSetup
from infra.constructs.ingest import IngestPipeline
from infra.constructs.search import SearchCollection, collection_name_for
from infra.constructs.secrets import Secrets
from infra.constructs.sources_sync import SourcesSchedule
from infra.constructs.storage import Storage, named_files_bucket
from infra.constructs.web import WebApp
from infra.stacks.embedding import (
    TITAN_EMBED_V2,
    check_embedding,
    embedding_environment,
    grant_embedding_secret,
    index_slug,
)
from infra.stacks.nag import suppress_findings
from infra.stacks.permissions import (
    grant_bedrock,
    grant_files,
    grant_marketplace,
    grant_rerank,
    grant_table,
)
from infra.stacks.sign_in import add_sign_in, check_sign_in

REPO_ROOT = Path(__file__).resolve().parents[2]
WEB_STATIC = REPO_ROOT / "layers" / "bunko" / "bunko" / "web" / "static"
BLOB_PREFIX = "blobs/"
DROP_PREFIX = "drop/"


# What a profile turns on (docs/aws.md has each one's monthly floor). dev: no standby
# replicas (1 OCU floor instead of 2) and a trickle of ingest; prod: redundancy, more ingest.
# stream_concurrency: the stream function's reserved concurrency (its streams, up to 15
# minutes each, cannot take every slot from the api and ingest functions; 0: no cap).
PROFILES = {
    "dev": {"standby_replicas": False, "ingest_concurrency": 2, "embed_concurrency": 2,
            "stream_concurrency": 10},
    "prod": {"standby_replicas": True, "ingest_concurrency": 10, "embed_concurrency": 4,
             "stream_concurrency": 100},
}  # fmt: skip


@dataclass(frozen=True)
class BunkoConfig:
    """Deployment parameters (cdk.json context `bunko:*`, overridable with -c)."""

    profile: str = "dev"
    # None: the profile's value.
    standby_replicas: bool | None = None
    ingest_concurrency: int | None = None  # SQS maximumConcurrency (2–1000)
    embed_concurrency: int | None = None  # Bedrock calls in flight per ingest instance
    # chats and MCP calls streaming at once (the stream function's reserved concurrency)
    stream_concurrency: int | None = None
    # "bedrock", or "openai": any OpenAI-compatible embeddings endpoint (docs/aws.md).
    embedding_provider: str = "bedrock"
    embedding_model_id: str = TITAN_EMBED_V2
    embedding_dimension: int = 1024  # the index's size: the model's (or the endpoint's)
    openai_base_url: str = ""
    # The Secrets Manager secret (ARN or name) whose string is the endpoint's API key; only
    # the functions that embed may read it. Empty: the endpoint needs no key.
    openai_api_key_secret: str = ""
    openai_input_types: bool = False
    openai_send_dimensions: bool = False
    openai_allow_private_network: bool = False
    chat_model_ids: list[str] = field(default_factory=list)
    # Bedrock Rerank models a rerank config may name (amazon.rerank-v1:0, cohere.rerank-v3-5:0)
    rerank_model_ids: list[str] = field(default_factory=list)
    # AWS Marketplace product ids (Bedrock's table) the functions may subscribe to on a
    # third-party model's first use; empty: an administrator subscribes once instead.
    marketplace_product_ids: list[str] = field(default_factory=list)
    collection_name: str = ""  # empty: the stack's name (search.collection_name_for)
    stage_name: str = "v1"
    # The layer ships bytecode, which only an interpreter of the same minor version can
    # compile: the runtime is the version `make synth` runs with (see layer_bundling).
    python_version: str = "3.11"
    lwa_layer_version: int = 26
    retain_data: bool = True
    deletion_protection: bool = False
    # Days a chat message is kept (a conversation: after its last one); 0: until deleted.
    # The table's TTL deletes what expires (docs/chat.md).
    conversation_retention_days: int = 0
    # Days an audit event is kept (docs/audit.md); 0: for ever. The table's TTL deletes it.
    audit_retention_days: int = 365
    # Who may create an account once the deployment has an admin (BUNKO_SIGNUP): "open"
    # (anyone who reaches the API) or "closed" (admins add people); a deployment without an
    # admin lets its first account sign up either way.
    signup: str = "closed"
    # Who hears of a file that failed every retry (the dead-letter alarm's SNS topic); empty:
    # nobody until someone subscribes to the topic (output AlarmTopicArn).
    alarm_email: str = ""
    # Browser origins allowed to call the API and PUT presigned uploads (the web app's);
    # empty: no CORS at all (docs/aws.md, "Browsers and CORS").
    cors_origins: list[str] = field(default_factory=list)
    # Sign-in with an identity provider (docs/aws.md, "Sign-in with an identity provider"):
    # a Cognito user pool made here, or an external issuer by its URL; neither: passwords.
    cognito_user_pool: bool = False
    cognito_domain_prefix: str = ""  # the managed login's domain; empty: <stack>-<account>
    # identity providers added to the pool outside the stack (their secrets stay there)
    cognito_identity_providers: list[str] = field(default_factory=list)
    cognito_mcp_callback_urls: list[str] = field(default_factory=list)  # MCP clients' client
    oidc_issuer: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: str = ""  # a Secrets Manager secret (ARN or name); empty: PKCE alone
    oidc_groups_claim: str = ""  # empty: "groups" ("cognito:groups" with the pool)
    # group → {"library": name, "role": viewer|editor|owner}
    oidc_group_roles: dict = field(default_factory=dict)
    oidc_provider_name: str = ""  # "Sign in with …"
    oidc_audience: str = ""  # MCP access tokens' audience; empty: the API's /mcp URL
    oidc_audience_claim: str = ""  # empty: "aud"
    oidc_mcp_scopes: str = ""  # what MCP clients ask the issuer for; empty: "openid"

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"bunko:profile is one of {sorted(PROFILES)}, not {self.profile!r}")
        if "*" in self.cors_origins:
            raise ValueError("bunko:corsOrigins lists origins, not '*'")
        if self.signup not in ("open", "closed"):
            raise ValueError(f"bunko:signup is 'open' or 'closed', not {self.signup!r}")
        if not 0 <= self.conversation_retention_days <= 36_500:
            raise ValueError("bunko:conversationRetentionDays is 0 (keep) to 36500")
        if not 0 <= self.audit_retention_days <= 36_500:
            raise ValueError("bunko:auditRetentionDays is 0 (keep) to 36500")
        if not 2 <= self.resolved("ingest_concurrency") <= 1000:
            raise ValueError("bunko:ingestConcurrency is 2–1000 (SQS maximumConcurrency)")
        if not 0 <= self.resolved("stream_concurrency") <= 1000:
            raise ValueError("bunko:streamConcurrency is 0 (no cap) to 1000")
        check_embedding(self)
        check_sign_in(self)

    def resolved(self, name: str):
        value = getattr(self, name)
        return PROFILES[self.profile][name] if value is None else value

    @property
    def index_name(self) -> str:
        # One index per embedding model and size: a model change is a new index generation.
        if self.embedding_provider == "openai":
            return f"chunks-openai-{index_slug(self.embedding_model_id)}-{self.embedding_dimension}"
        model = self.embedding_model_id.split(":")[0].replace(".", "-")
        return f"chunks-{model}-{self.embedding_dimension}"


class BunkoStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, *, config: BunkoConfig, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        storage = Storage(
            self, "Storage", retain_data=config.retain_data,
            deletion_protection=config.deletion_protection, drop_prefix=DROP_PREFIX,
            files_bucket_name=named_files_bucket(self),
        )  # fmt: skip
        secrets = Secrets(self, "Secrets", retain_data=config.retain_data)
        search = SearchCollection(
            self, "Search", name=config.collection_name or collection_name_for(self.stack_name),
            standby_replicas=config.resolved("standby_replicas"),
        )  # fmt: skip
        environment = {
            env_name("table_name"): storage.table.table_name,
            env_name("bucket"): storage.bucket.bucket_name,
            env_name("blob_prefix"): BLOB_PREFIX,
            env_name("drop_prefix"): DROP_PREFIX,
            env_name("opensearch_endpoint"): search.endpoint,
            env_name("opensearch_index"): config.index_name,
        }
        functions = BunkoFunctions(
            self, "Functions", repo_root=REPO_ROOT, python_version=config.python_version,
            environment=environment, embedding=embedding_environment(self, config),
            lwa_layer_version=config.lwa_layer_version,
            embed_concurrency=config.resolved("embed_concurrency"),
            stream_concurrency=config.resolved("stream_concurrency") or None,
        )  # fmt: skip
        ingest = IngestPipeline(
            self, "Ingest", bucket=storage.bucket, drop_prefix=DROP_PREFIX,
            function_timeout=functions.ingest.timeout or Duration.minutes(5),
            alarm_email=config.alarm_email,
        )  # fmt: skip
        ingest.connect(functions.ingest, max_concurrency=config.resolved("ingest_concurrency"))
        api = RestApi(
            self, "Rest", api_function=functions.api, stream_function=functions.stream,
            stage_name=config.stage_name,
        )  # fmt: skip
        web_app = WebApp(
            self, "Web", static_dir=WEB_STATIC, api_url=api.url,
            api_origin=f"https://{api.api.rest_api_id}.execute-api.{self.region}.{self.url_suffix}",
            upload_origin=f"https://{storage.upload_host}", access_logs=storage.access_logs,
        )  # fmt: skip
        # The app's own origin is always allowed: by the API, by the gateway's own errors and
        # for presigned uploads to the bucket (docs/aws.md, "Browsers and CORS").
        cors_origins = [*config.cors_origins, web_app.origin]
        api.answer_gateway_errors(cors_origins)
        storage.allow_browser_uploads(cors_origins)
        self.sign_in = add_sign_in(
            self, config, web_url=web_app.url, functions=[functions.api, functions.stream],
            # by the API's id, not its stage's URL: the functions must not wait for the stage
            api_base=f"https://{api.api.rest_api_id}.execute-api.{self.region}.{self.url_suffix}"
            f"/{config.stage_name}",
        )  # fmt: skip
        for web in (functions.api, functions.stream):
            # Only the web functions sign users in: the ingest function gets neither the
            # JWT secret nor its name, and only decrypts model keys (it never saves one).
            for name, value in {
                "ingest_queue_url": ingest.queue.queue_url,
                "jwt_secret_arn": secrets.jwt_secret.secret_arn,
                "model_keys_kms_key_id": secrets.model_keys.key_id,
                "bedrock_chat_model_ids": ",".join(config.chat_model_ids),
                "cors_origins": ",".join(cors_origins),
            }.items():
                web.add_environment(env_name(name), value)
            # a core setting (bunko.config.Settings), not an AWS one
            web.add_environment(
                f"{ENV_PREFIX}CONVERSATION_RETENTION_DAYS", str(config.conversation_retention_days)
            )
            web.add_environment(
                f"{ENV_PREFIX}AUDIT_RETENTION_DAYS", str(config.audit_retention_days)
            )
            web.add_environment(f"{ENV_PREFIX}SIGNUP", config.signup)
            # Written out instead of grant_*: those add actions the code never calls
            # (GetQueueUrl, DescribeSecret, GenerateDataKey); the permission contract checks.
            for actions, resource in (
                (["sqs:SendMessage"], ingest.queue.queue_arn),
                (["secretsmanager:GetSecretValue"], secrets.jwt_secret.secret_arn),
                (["kms:Encrypt", "kms:Decrypt"], secrets.model_keys.key_arn),
            ):
                web.add_to_role_policy(iam.PolicyStatement(actions=actions, resources=[resource]))
        # The ingest function builds a workspace's own embedding model in steps: it embeds
        # with the model config (its key decrypted) and queues the next step itself.
        functions.ingest.add_environment(env_name("ingest_queue_url"), ingest.queue.queue_url)
        functions.ingest.add_environment(
            env_name("model_keys_kms_key_id"), secrets.model_keys.key_id
        )
        for actions, resource in (
            (["sqs:SendMessage"], ingest.queue.queue_arn),
            (["kms:Decrypt"], secrets.model_keys.key_arn),
        ):
            functions.ingest.add_to_role_policy(
                iam.PolicyStatement(actions=actions, resources=[resource])
            )

        # The sources' sync writes what it reads into the library (blobs, the table, the
        # ingest queue: the ingest function embeds) and deletes what its place no longer has
        # (the index too); it decrypts a source's credential, never saves a key.
        functions.sources.add_environment(env_name("ingest_queue_url"), ingest.queue.queue_url)
        functions.sources.add_environment(
            env_name("model_keys_kms_key_id"), secrets.model_keys.key_id
        )
        for actions, resource in (
            (["sqs:SendMessage"], ingest.queue.queue_arn),
            (["kms:Decrypt"], secrets.model_keys.key_arn),
        ):
            functions.sources.add_to_role_policy(
                iam.PolicyStatement(actions=actions, resources=[resource])
            )
        self.sources_schedule = SourcesSchedule(self, "SourcesSync", function=functions.sources)

        roles = [_role(f) for f in functions.all]
        for role in roles:
            grant_table(role, storage.table)
        # Libraries' archives: the web functions (one app: the permission contract records
        # them as one) keep an import's upload, sign its PUT and an export's download, delete
        # a refused upload, and read a small export to embed it (MCP); the ingest function
        # runs the moves (reads the upload, writes the export, deletes the upload once
        # imported). The sources' sync has none.
        archive_rw = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"]
        moves = {functions.api: archive_rw, functions.stream: archive_rw,
                 functions.ingest: archive_rw}  # fmt: skip
        for function in functions.all:
            syncs = function is functions.sources
            grant_files(_role(function), storage.bucket, BLOB_PREFIX, DROP_PREFIX,
                        drop_write=None if syncs else function is not functions.ingest,
                        blob_read=not syncs,
                        moves=(MOVES_PREFIX, moves[function]) if function in moves else None,
                        )  # fmt: skip
        # every function but the sources' sync embeds (ingest: passages; api, stream: queries)
        embedders = [_role(f) for f in functions.all if f is not functions.sources]
        if config.embedding_provider == "bedrock":
            grant_bedrock(embedders, self, [config.embedding_model_id], stream=False)
            grant_marketplace(
                embedders, self, [config.embedding_model_id], config.marketplace_product_ids
            )
        else:
            grant_embedding_secret(embedders, self, config.openai_api_key_secret)
        chatters = [_role(functions.api), _role(functions.stream)]
        if config.chat_model_ids:
            grant_bedrock(chatters, self, config.chat_model_ids, stream=True)
        if config.rerank_model_ids:
            grant_rerank(chatters, self, config.rerank_model_ids)
        # cohere.rerank is sold through Marketplace as the chat models are
        grant_marketplace(
            chatters, self, [*config.chat_model_ids, *config.rerank_model_ids],
            config.marketplace_product_ids,
        )  # fmt: skip

        setup = SearchIndexSetup(
            self, "IndexSetup", code_dir=REPO_ROOT / "functions" / "search_index",
            layer=functions.layer, runtime=functions.api.runtime, endpoint=search.endpoint,
            index_name=config.index_name, dimension=config.embedding_dimension,
        )  # fmt: skip
        search.allow(index=config.index_name, readers_writers=roles, index_admins=setup.roles)
        setup.resource.node.add_dependency(search.access_policy)
        setup.resource.node.add_dependency(search.collection)

        self.storage, self.functions, self.ingest, self.api = storage, functions, ingest, api
        self.search, self.secrets, self.index_setup, self.web = search, secrets, setup, web_app
        for name, value in {
            "ApiUrl": api.url,
            "WebUrl": web_app.url,
            "BucketName": storage.bucket.bucket_name,
            "DropPrefix": DROP_PREFIX,
            "TableName": storage.table.table_name,
            "CollectionEndpoint": search.endpoint,
            "SearchIndexName": config.index_name,
            "IngestQueueUrl": ingest.queue.queue_url,
            "DeadLetterQueueUrl": ingest.dead_letters.queue_url,
            "AlarmTopicArn": ingest.alarm_topic.topic_arn,
            "JwtSecretArn": secrets.jwt_secret.secret_arn,
        }.items():
            CfnOutput(self, name, value=value)
        suppress_findings(self, stage_name=config.stage_name)


def _role(function: lambda_.Function) -> iam.IRole:
    assert function.role is not None  # every Function here creates its role
    return function.role
