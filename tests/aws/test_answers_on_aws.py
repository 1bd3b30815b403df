"""Answers people mark on AWS (docs/answers.md): through Mangum, fed the API Gateway event
shape, the Lambda app keeps an answer of /v1/chat/completions in the table (moto) under the
id it returns, its asker marks it, another person cannot (404), and the owner reads the
marked answers and the missing list, each item carrying the TTL attribute retention sets."""

from __future__ import annotations

import boto3

from bunko.deploy_schema import TTL_ATTRIBUTE
from tests.aws.handlers import call, get, sign_in
from tests.aws.stand_ins import REGION, TABLE

QUESTION = "Where can staff park their cars?"


def test_the_lambda_app_keeps_marks_and_the_missing_list_in_the_table(api_with_accounts):
    api = api_with_accounts
    token = sign_in(api)
    status, answer = call(api, "POST", "/v1/chat/completions", {
        "model": "bunko-extractive", "messages": [{"role": "user", "content": QUESTION}],
    }, token=token)  # fmt: skip
    assert status == 200, answer
    assert answer["sources"] == [] and answer["answer_id"]  # nothing in the library: refused
    answer_id = answer["answer_id"]

    other = sign_in(api, "bob", "another horse battery")
    status, _ = call(api, "POST", f"/answers/{answer_id}/mark", {"mark": "up"}, token=other)
    assert status == 404  # bob's own library holds no such answer
    status, marked = call(api, "POST", f"/answers/{answer_id}/mark",
                          {"mark": "down", "comment": "we need a parking page"}, token=token)  # fmt: skip
    assert status == 200, marked
    assert (marked["mark"], marked["refused"], marked["door"]) == ("down", True, "v1")

    status, listed = get(api, token, "/answers/marked", {"limit": "10"})
    assert status == 200, listed
    assert [(m["answerId"], m["comment"]) for m in listed] == [(answer_id,
                                                                "we need a parking page")]  # fmt: skip
    status, missing = get(api, token, "/answers/missing", {"limit": "5"})
    assert status == 200, missing
    assert [(g["question"], g["refused"], g["markedDown"]) for g in missing] == [(QUESTION, 1, 1)]

    items = boto3.client("dynamodb", region_name=REGION).scan(TableName=TABLE)["Items"]
    kept = [i for i in items if i["pk"]["S"].startswith("ANSWER")]
    # the answer, its place on the marked list and on the missing list
    assert sorted(i["pk"]["S"].split("#")[0] for i in kept) == [
        "ANSWER", "ANSWERMARK", "ANSWERMISS"]  # fmt: skip
    assert all(TTL_ATTRIBUTE in i for i in kept)
