"""Execution roles written out instead of AWSLambdaBasicExecutionRole, whose logs:* on "*"
would let a function write to any log group."""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_logs as logs
from constructs import Construct


def function_role(scope: Construct, construct_id: str, log_group: logs.ILogGroup) -> iam.Role:
    role = iam.Role(scope, construct_id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(
        actions=["logs:CreateLogStream", "logs:PutLogEvents"],
        resources=[log_group.log_group_arn],
    ))  # fmt: skip
    return role
