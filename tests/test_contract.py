"""contract.py and servers/CONTRACT.md must say the same thing."""

import json
import re

import pytest

from loadlab import contract, paths
from loadlab.errors import ParameterError

DOCUMENT = paths.CONTRACT_MD.read_text()


def test_cpu_hash_matches_every_test_vector_in_contract_md():
    rows = re.findall(r"^\| (\d+) \| `(\{\"n\":\d+,\"hash\":\"\d+\"\})` \|$", DOCUMENT, re.MULTILINE)
    assert len(rows) == len(contract.CPU_TEST_VECTORS) >= 8
    for rounds, body in rows:
        assert contract.cpu_body(int(rounds)).decode() == body
        assert json.loads(body)["hash"] == str(contract.CPU_TEST_VECTORS[int(rounds)])


def test_cpu_hash_is_a_64_bit_xorshift_chain():
    # One round by hand from the definition: x ^= 0; x ^= x<<13; x ^= x>>7; x ^= x<<17 (mod 2^64).
    mask = (1 << 64) - 1
    x = contract.CPU_HASH_SEED
    x ^= (x << 13) & mask
    x ^= x >> 7
    x ^= (x << 17) & mask
    assert contract.cpu_hash(1) == x
    assert all(0 <= contract.cpu_hash(n) <= mask for n in range(50))


def test_users_body_is_the_one_in_contract_md():
    block = re.search(r"```json\n(.*)\n```", DOCUMENT).group(1)
    assert contract.users_body().decode() == block
    assert f"{len(contract.users_body())} bytes" in DOCUMENT
    assert len(contract.USERS) == 10


def test_bounds_and_messages_appear_in_contract_md():
    assert f"0 ≤ ms ≤ {contract.IO_MS_MAX}" in DOCUMENT
    assert f"0 ≤ n ≤ {contract.CPU_N_MAX}" in DOCUMENT
    for message in ("parameter P is required", "parameter P must be a non-negative integer", "parameter P must be at most MAX"):
        assert message in DOCUMENT
    assert contract.missing_message("P") == "parameter P is required"
    assert contract.above_bound_message("n", 5) == "parameter n must be at most 5"
    assert contract.NOT_FOUND_BODY.decode() in DOCUMENT
    assert contract.METHOD_NOT_ALLOWED_BODY.decode() in DOCUMENT


def test_every_route_in_contract_md_is_known():
    routes = set(re.findall(r"^\| `GET (/[a-z0-9/]+)", DOCUMENT, re.MULTILINE))
    assert routes == set(contract.ROUTES)


def test_plaintext200_is_s1s_200_bytes_as_contract_md_spells_it():
    assert len(contract.PLAINTEXT_200_BODY) == 200
    assert contract.PLAINTEXT_200_BODY == b"0123456789" * 20
    assert "`0123456789` twenty times (200 bytes)" in DOCUMENT
    assert contract.expected_body("/plaintext200") == contract.PLAINTEXT_200_BODY
    assert contract.ROUTE_MEDIA_TYPES["/plaintext200"] == "text/plain"


@pytest.mark.parametrize("target", ["/nope", "/cpu", "/cpu?n=x", "/cpu?n=10000001", "/io?ms=-1", "/mixed?cpu=1"])
def test_validate_route_rejects_targets_outside_the_contract(target):
    with pytest.raises(ParameterError) as caught:
        contract.validate_route(target)
    assert caught.value.parameter == "route"
    assert target in str(caught.value)


def test_validate_route_accepts_contract_targets():
    assert contract.validate_route("/mixed?cpu=10&io=5") == ("/mixed", {"cpu": 10, "io": 5})
    assert contract.validate_route("/json") == ("/json", {})


def test_the_listen_queue_is_the_one_contract_md_asks_and_checked_as_the_kernel_caps_it():
    from loadlab.contract import verify

    assert f"backlog of {contract.LISTEN_BACKLOG:,}" in DOCUMENT
    assert verify.check_listen_backlog(contract.LISTEN_BACKLOG, 4096).passed
    # tokio's TcpListener::bind (1,024) and Node.js's default (511): not the contract's.
    assert not verify.check_listen_backlog(1024, 4096).passed
    assert "1,024" in verify.check_listen_backlog(1024, 4096).detail
    # A kernel that caps the queue lower: the cap is what a server asking the contract's gets.
    assert verify.check_listen_backlog(128, 128).passed
    assert verify.check_listen_backlog(contract.LISTEN_BACKLOG, None).passed
    assert verify.somaxconn("/nonexistent/somaxconn") is None
