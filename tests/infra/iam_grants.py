"""Reading a synthesized template's IAM: each function's role statements, a recorded AWS
call's resource as the template names it, and whether a statement grants a call (the
permission contract's tests: test_permission_contract.py, test_openai_embeddings_stack.py)."""

from __future__ import annotations

from fnmatch import fnmatchcase

# The stream function serves the same app (lambda_entry.api_app) as the api function.
RECORD_OF = {"Api": "api", "Stream": "api", "Ingest": "ingest", "Sources": "sources"}


def render(value) -> str:
    """A CloudFormation value as text, references as <LogicalId.Arn> / <LogicalId>."""
    if isinstance(value, str):
        return value
    if "Fn::GetAtt" in value:
        return f"<{value['Fn::GetAtt'][0]}.{value['Fn::GetAtt'][1]}>"
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(render(p) for p in parts)
    raise AssertionError(f"unexpected value {value}")


def logical(template, kind: str, fragment: str) -> str:
    [found] = [k for k in template.find_resources(kind) if fragment in k]
    return found


def role_statements(template, function: str) -> list[dict]:
    role = logical(template, "AWS::IAM::Role", f"Functions{function}Role")
    statements = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        if {"Ref": role} in policy["Properties"]["Roles"]:
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
                actions = statement["Action"]
                resources = statement["Resource"]
                statements.append({
                    "actions": [actions] if isinstance(actions, str) else actions,
                    "resources": [render(r) for r in (
                        resources if isinstance(resources, list) else [resources])],
                    "condition": statement.get("Condition", {}),
                })  # fmt: skip
    return statements


def symbolic(template, resource: str) -> tuple[str, str | None]:
    """A recorded resource as the template names it; and an S3 list prefix, if any."""
    kind, _, name = resource.partition(":")
    if kind == "object":
        _bucket, _, key = name.partition("/")
        return f"<{logical(template, 'AWS::S3::Bucket', 'StorageFiles')}.Arn>/{key}", None
    if kind == "bucket":
        name, _, prefix = name.partition("?prefix=")
        return f"<{logical(template, 'AWS::S3::Bucket', 'StorageFiles')}.Arn>", prefix
    if kind == "table":
        _, _, index = name.partition("/")
        table = logical(template, "AWS::DynamoDB::Table", "StorageMetadata")
        return f"<{table}.Arn>" + (f"/{index}" if index else ""), None
    if kind == "queue":
        queue = [k for k in template.find_resources("AWS::SQS::Queue") if "IngestQueue" in k]
        return f"<{queue[0]}.Arn>", None
    if kind == "secret":
        return f"<{logical(template, 'AWS::SecretsManager::Secret', 'JwtSigningKey')}>", None
    if kind == "key":
        return f"<{logical(template, 'AWS::KMS::Key', 'ModelKeys')}.Arn>", None
    bedrock = "arn:<AWS::Partition>:bedrock"
    if kind == "model":
        return f"{bedrock}:<AWS::Region>::foundation-model/{name}", None
    if kind == "profile":  # a cross-region inference profile, in the deployment's region
        return f"{bedrock}:<AWS::Region>:<AWS::AccountId>:inference-profile/{name}", None
    if kind == "routed":  # a profile's model: in each region the profile may route to
        return f"{bedrock}:*::foundation-model/{name}", None
    if resource == "*":  # an action without a resource type (bedrock:Rerank)
        return "*", None
    if kind == "collection":
        collection = logical(template, "AWS::OpenSearchServerless::Collection", "Search")
        return f"<{collection}.Arn>", None
    raise AssertionError(f"unknown resource {resource}")


def grants(statements: list[dict], action: str, resource: str, prefix: str | None) -> bool:
    for statement in statements:
        if not any(fnmatchcase(action, a) for a in statement["actions"]):
            continue
        if not any(fnmatchcase(resource, r) for r in statement["resources"]):
            continue
        allowed = statement["condition"].get("StringLike", {}).get("s3:prefix")
        if prefix is not None and allowed and not any(fnmatchcase(prefix, p) for p in allowed):
            continue
        return True
    return False


def iam_calls(calls: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Recorded calls as IAM needs them: an OpenSearch request needs aoss:APIAccessAll on
    the collection (its index is the data access policy's business)."""
    return {
        ("aoss:APIAccessAll", "collection:") if a.startswith("aoss:") else (a, r) for a, r in calls
    }
