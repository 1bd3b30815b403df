#!/bin/sh
# Started by the Lambda Web Adapter (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap), which forwards
# each invocation to this server and streams its response (AWS_LWA_INVOKE_MODE=response_stream).
# The bunko layer is unpacked in /opt/python.
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT}${PYTHONPATH:+:$PYTHONPATH}"
exec python -m uvicorn --host 127.0.0.1 --port "${AWS_LWA_PORT:-8080}" --no-access-log \
    --app-dir "${LAMBDA_TASK_ROOT}" --factory main:build
