"""Every 4xx/5xx in aurak's {statusCode, message, error} shape, with the field named on
validation errors and nothing internal leaking from a 500."""

from __future__ import annotations

from tests.e2e.rest_harness import assert_error, serve

# The settings of the module's live server (the `rest` fixture, tests/conftest.py).
REST_SETTINGS = {"max_file_bytes": 64 * 1024}


def test_unknown_routes_and_methods(rest):
    with rest.client() as client:
        assert assert_error(client.get("/no/such/route"), 404)["error"] == "Not Found"
        assert_error(client.patch("/auth/login", json={}), 405)


def test_validation_errors_name_each_field(rest):
    with rest.client() as client:
        response = client.post("/auth/register", json={"username": 5})
    body = assert_error(response, 400)
    assert body["error"] == "Bad Request"
    fields = " ".join(body["message"])
    assert "username" in fields and "password" in fields


def test_openapi_documents_the_error_shape(rest):
    with rest.client() as client:
        schema = client.get("/openapi.json").json()
        assert client.get("/docs").status_code == 200
    assert set(schema["components"]["schemas"]["ErrorBody"]["properties"]) == {
        "statusCode",
        "message",
        "error",
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], f"{method} {path}"


def test_a_streamed_body_over_the_limit_is_cut_off(rest):
    user = rest.new_user()

    def chunks():  # a well-formed multipart body with no Content-Length: counted as read
        yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        yield b"Content-Type: text/plain\r\n\r\n"
        for _ in range(2048):  # 2 MB, over the limit plus the multipart allowance
            yield b"x" * 1024
        yield b"\r\n--b--\r\n"

    response = user.client.post(
        "/upload", content=chunks(), headers={"content-type": "multipart/form-data; boundary=b"}
    )
    assert "request body" in assert_error(response, 413)["message"]


class BrokenStore:
    """A model-config store whose database has gone away."""

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise RuntimeError("disk I/O error at /var/secret/bunko.db line 42")

        return fail


def test_unexpected_errors_are_500_without_internals(tmp_path):
    with serve(tmp_path / "data") as rest:
        user = rest.new_user()
        rest.services.accounts.model_configs.store = BrokenStore()
        response = user.client.get("/model-configs")
        body = assert_error(response, 500)
        assert body["message"] == "internal server error"
        assert "secret" not in response.text and "RuntimeError" not in response.text
