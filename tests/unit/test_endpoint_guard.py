"""The endpoint guard: a configured model endpoint must resolve to public addresses only,
unless the operator allows a private one; and the AWS embedding settings' own checks."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError as SettingsError

from bunko.adapters.aws.settings import AwsSettings
from bunko.errors import ValidationError
from bunko.services.embedding.endpoint_guard import (
    check_model_endpoint,
    check_public_endpoint,
    is_inside_network,
)

SETTING, SWITCH = "BUNKO_OPENAI_BASE_URL", "BUNKO_OPENAI_ALLOW_PRIVATE_NETWORK"


def check(url: str | None, *, allow: bool = False, resolver=None) -> str:
    kwargs = {"resolver": resolver} if resolver else {}
    return check_public_endpoint(
        url, setting=SETTING, allow_switch=SWITCH, allow_private=allow, **kwargs
    )


@pytest.mark.parametrize(
    "address",
    ["127.0.0.1", "10.1.2.3", "172.16.0.9", "192.168.1.1", "169.254.169.254", "100.64.0.1",
     "0.0.0.0", "::1", "fd00::1", "fe80::1%eth0", "::ffff:127.0.0.1", "224.0.0.1"],
)  # fmt: skip
def test_addresses_inside_the_network(address):
    assert is_inside_network(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses(address):
    assert not is_inside_network(address)


def test_literal_addresses_are_resolved_without_dns():
    assert check("https://8.8.8.8/v1") == "https://8.8.8.8/v1"
    with pytest.raises(ValidationError, match=f"inside the network.*{SWITCH}=true"):
        check("http://10.0.0.5:8080/v1")
    assert check("http://10.0.0.5:8080/v1", allow=True) == "http://10.0.0.5:8080/v1"


def test_a_name_is_refused_when_any_of_its_addresses_is_inside():
    seen = []

    def resolver(host: str, port: int) -> list[str]:
        seen.append((host, port))
        return ["8.8.8.8", "192.168.0.7"]

    with pytest.raises(
        ValidationError, match=re.escape("'models.example' resolves to 192.168.0.7")
    ):
        check("https://models.example/v1", resolver=resolver)
    assert seen == [("models.example", 443)]
    public = check("http://models.example/v1", resolver=lambda h, p: ["8.8.4.4"])
    assert public == "http://models.example/v1"


def test_unresolvable_and_malformed_urls_name_the_setting():
    def unresolvable(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(ValidationError, match=f"{SETTING}: cannot resolve 'nowhere.example'"):
        check("https://nowhere.example/v1", resolver=unresolvable)
    with pytest.raises(ValidationError, match=f"{SETTING}: required"):
        check(None)
    with pytest.raises(ValidationError, match=f"{SETTING}: must be an http"):
        check("ftp://8.8.8.8/v1")
    with pytest.raises(ValidationError, match=f"{SETTING}: put credentials in apiKey"):
        check("https://user:pw@8.8.8.8/v1")


def test_bedrock_keeps_titan_sizes_and_openai_takes_the_endpoints():
    with pytest.raises(SettingsError, match="256, 512 or 1024"):
        AwsSettings(embedding_provider="bedrock", embedding_dimension=384)
    settings = AwsSettings(embedding_provider="openai", embedding_dimension=384)
    assert settings.embedding_dimension == 384 and not settings.openai_allow_private_network
    with pytest.raises(SettingsError):
        AwsSettings(embedding_provider="openai", embedding_dimension=16001)


def resolving_to(*addresses: str):
    return lambda host, port: list(addresses)


@pytest.mark.parametrize("allow_private", [True, False])
@pytest.mark.parametrize("address", ["169.254.169.254", "fe80::1%eth0", "::ffff:169.254.169.254"])
def test_a_model_endpoint_at_instance_metadata_is_always_refused(address, allow_private):
    with pytest.raises(ValidationError, match="link-local: instance metadata"):
        check_model_endpoint(
            "http://metadata.example/latest",
            allow_private=allow_private,
            resolver=resolving_to("8.8.8.8", address),
        )


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.7", "192.168.1.20", "::1"])
def test_loopback_and_private_model_endpoints_only_where_allowed(address):
    url = "http://ollama.lan:11434/v1"
    assert check_model_endpoint(url, allow_private=True, resolver=resolving_to(address)) == url
    with pytest.raises(ValidationError, match="private or loopback"):
        check_model_endpoint(url, allow_private=False, resolver=resolving_to(address))


def test_a_public_or_not_yet_resolvable_model_endpoint_is_accepted():
    url = "https://api.example.com/v1"
    assert check_model_endpoint(url, allow_private=False, resolver=resolving_to("8.8.8.8")) == url

    def offline(host, port):
        raise OSError("no DNS")

    # Points nowhere now; checked again each time the config is used.
    assert check_model_endpoint(url, allow_private=False, resolver=offline) == url


@pytest.mark.parametrize("url", [12, "ftp://x/", "http://user:pw@host/v1", ""])
def test_a_model_endpoint_that_is_no_url_is_refused(url):
    with pytest.raises(ValidationError, match="baseUrl"):
        check_model_endpoint(url, allow_private=True, resolver=resolving_to("8.8.8.8"))
