"""AWS adapters: DynamoDB, S3, OpenSearch Serverless, Bedrock, SQS, KMS and Secrets Manager.

Built by `bunko.bootstrap.aws`; nothing here builds a graph.
"""
