"""IdentityLinkStore: the same behaviour on SQLite and on DynamoDB (moto): a person at an
identity provider (issuer, subject) links to one user, once; a user's links go with them."""

from __future__ import annotations

import threading

import pytest

from bunko.errors import ConflictError
from tests.contract.accounts import AccountStores

ISSUER = "https://login.example.org/tenant"
OTHER = "https://accounts.example.com"


def test_a_person_links_to_one_user_once(accounts: AccountStores):
    links = accounts.links
    assert links.linked_user(ISSUER, "sub-1") is None
    links.link(ISSUER, "sub-1", "u-ada")
    assert links.linked_user(ISSUER, "sub-1") == "u-ada"
    with pytest.raises(ConflictError):
        links.link(ISSUER, "sub-1", "u-bob")
    assert links.linked_user(ISSUER, "sub-1") == "u-ada"  # the refused link wrote nothing
    # the same subject at another issuer is another person; subjects are exact strings
    assert links.linked_user(OTHER, "sub-1") is None
    assert links.linked_user(ISSUER, "SUB-1") is None


def test_unlink_and_forget_a_user(accounts: AccountStores):
    links = accounts.links
    links.link(ISSUER, "sub-1", "u-ada")
    links.link(OTHER, "ada@example.com", "u-ada")
    links.link(ISSUER, "sub-2", "u-bob")
    assert links.unlink(ISSUER, "sub-2") is True
    assert links.unlink(ISSUER, "sub-2") is False
    assert links.linked_user(ISSUER, "sub-2") is None
    assert links.forget_user("u-ada") == 2
    assert links.linked_user(ISSUER, "sub-1") is None
    assert links.linked_user(OTHER, "ada@example.com") is None
    links.link(ISSUER, "sub-1", "u-carol")  # free again
    assert links.linked_user(ISSUER, "sub-1") == "u-carol"


def test_two_first_sign_ins_at_once_make_one_link(accounts: AccountStores):
    links, won, lost = accounts.links, [], []
    barrier = threading.Barrier(8)

    def sign_in(user_id: str) -> None:
        barrier.wait()
        try:
            links.link(ISSUER, "sub-race", user_id)
            won.append(user_id)
        except ConflictError:
            lost.append(user_id)

    threads = [threading.Thread(target=sign_in, args=(f"u-{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7
    assert links.linked_user(ISSUER, "sub-race") == won[0]


def test_a_user_is_linked_to_the_issuers_they_signed_in_with(accounts: AccountStores):
    links = accounts.links
    assert links.is_linked(ISSUER, "u-ada") is False
    links.link(ISSUER, "sub-1", "u-ada")
    links.link(ISSUER + "-2", "sub-9", "u-bob")  # an issuer whose URL starts like ISSUER's
    assert links.is_linked(ISSUER, "u-ada") is True
    assert links.is_linked(OTHER, "u-ada") is False
    assert links.is_linked(ISSUER, "u-bob") is False
    links.forget_user("u-ada")
    assert links.is_linked(ISSUER, "u-ada") is False
