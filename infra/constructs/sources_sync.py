"""The sources' scheduled sync: an EventBridge Scheduler schedule invokes the sync function
(functions/sources) every few minutes with a fixed input (events/sources_schedule.json);
the function syncs the sources that are due (their schedule, state and credentials are in
the table). Its own role may only invoke that one function; no retries (the next run comes
minutes later and goes on from each source's checkpoint)."""

from __future__ import annotations

import json

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from constructs import Construct

# The function's timeout is below the rate, so two runs do not overlap.
SYNC_RATE_MINUTES = 5
SYNC_TIMEOUT = Duration.minutes(4)
SCHEDULE_INPUT = {
    "action": "sync-due-sources",
    "scheduledTime": "<aws.scheduler.scheduled-time>",
    "executionId": "<aws.scheduler.execution-id>",
}


class SourcesSchedule(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, function: lambda_.IFunction):
        super().__init__(scope, construct_id)
        self.role = iam.Role(
            self, "Role", assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com"),
            description="EventBridge Scheduler: invoke the sources' sync function, nothing else",
        )  # fmt: skip
        self.role.add_to_policy(iam.PolicyStatement(
            actions=["lambda:InvokeFunction"], resources=[function.function_arn],
        ))  # fmt: skip
        self.schedule = scheduler.CfnSchedule(
            self, "Schedule",
            schedule_expression=f"rate({SYNC_RATE_MINUTES} minutes)",
            flexible_time_window=scheduler.CfnSchedule.FlexibleTimeWindowProperty(mode="OFF"),
            description="Sync the sources that are due (docs/sources.md)",
            target=scheduler.CfnSchedule.TargetProperty(
                arn=function.function_arn, role_arn=self.role.role_arn,
                input=json.dumps(SCHEDULE_INPUT),
                retry_policy=scheduler.CfnSchedule.RetryPolicyProperty(
                    maximum_retry_attempts=0, maximum_event_age_in_seconds=SYNC_RATE_MINUTES * 60,
                ),
            ),
        )  # fmt: skip
