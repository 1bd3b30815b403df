"""Ingest wiring: drops in the bucket → SQS (with a dead-letter queue) → the ingest function."""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_notifications as s3n
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

MAX_RECEIVES = 3  # deliveries before a message moves to the dead-letter queue


class IngestPipeline(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket: s3.IBucket,
        drop_prefix: str,
        function_timeout: Duration,
        alarm_email: str = "",
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = sqs.Queue(
            self, "DeadLetters",
            retention_period=Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )  # fmt: skip
        # Visibility at six times the function timeout, as Lambda's SQS guide advises, so a
        # batch that is still being processed (or retried by the poller) is not redelivered.
        self.queue = sqs.Queue(
            self, "Queue",
            visibility_timeout=Duration.seconds(function_timeout.to_seconds() * 6),
            retention_period=Duration.days(4),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dead_letters,
                                                  max_receive_count=MAX_RECEIVES),
        )  # fmt: skip
        destination = s3n.SqsDestination(self.queue)
        only_drops = s3.NotificationKeyFilter(prefix=drop_prefix)
        bucket.add_event_notification(s3.EventType.OBJECT_CREATED, destination, only_drops)
        bucket.add_event_notification(s3.EventType.OBJECT_REMOVED, destination, only_drops)
        waiting = self.dead_letters.metric_approximate_number_of_messages_visible(
            period=Duration.minutes(1), statistic="Maximum"
        )
        # Two alarms: one while any file waits in the dead-letter queue, and one each time
        # that count grows, so a second failed file is heard of while the first still waits
        # (the first alarm stays in ALARM and notifies once). Not NumberOfMessagesSent: SQS
        # does not count a message its redrive policy moves there (its metrics page).
        self.dead_letter_alarm = cloudwatch.Alarm(
            self, "DeadLettersAlarm",
            metric=waiting,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="An ingest message failed every retry: see the document's error",
        )  # fmt: skip
        self.new_dead_letter_alarm = cloudwatch.Alarm(
            self, "NewDeadLettersAlarm",
            metric=cloudwatch.MathExpression(
                expression="DIFF(waiting)", using_metrics={"waiting": waiting},
                period=Duration.minutes(1), label="dead letters added",
            ),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description="Another ingest message failed every retry since the last minute",
        )  # fmt: skip
        # Someone hears of it: the topic's subscribers (the address in bunko:alarmEmail, who
        # confirms it once, or any added later: chat, a pager).
        self.alarm_topic = sns.Topic(self, "Alarms", display_name="Bunko alarms",
                                     enforce_ssl=True)  # fmt: skip
        if alarm_email:
            self.alarm_topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        self.alarms = [self.dead_letter_alarm, self.new_dead_letter_alarm]
        for alarm in self.alarms:
            alarm.add_alarm_action(actions.SnsAction(self.alarm_topic))
        # enforce_ssl makes the topic's policy a single Deny, which replaces SNS's default
        # policy (its owner may publish): without this Allow, CloudWatch cannot publish and
        # the alarm goes to ALARM in silence. Only these alarms, in this account.
        self.alarm_topic.add_to_resource_policy(iam.PolicyStatement(
            sid="CloudWatchAlarmsPublish",
            principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
            actions=["sns:Publish"],
            resources=[self.alarm_topic.topic_arn],
            conditions={
                "ArnEquals": {"aws:SourceArn": [alarm.alarm_arn for alarm in self.alarms]},
                "StringEquals": {"aws:SourceAccount": Stack.of(self).account},
            },
        ))  # fmt: skip

    def connect(self, function: lambda_.IFunction, *, max_concurrency: int) -> None:
        """One record per invocation (a file can take the whole timeout without putting
        others back on the queue), and at most `max_concurrency` invocations at once, so a
        bulk drop neither floods Bedrock (Titan's quota) nor scales out OCUs."""
        function.add_event_source(sources.SqsEventSource(
            self.queue,
            batch_size=1,
            max_concurrency=max_concurrency,
            report_batch_item_failures=True,  # a failed record is retried, then dead-lettered
        ))  # fmt: skip
