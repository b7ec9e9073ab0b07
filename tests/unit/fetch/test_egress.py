"""Egress decisions: which addresses the crawler may connect to."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.http import EgressPolicy, EgressRefused, FetchConfigError, is_public
from crawler.core.http.egress import parse_address

NOT_PUBLIC = [
    "127.0.0.1", "127.255.255.254", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.64.0.1", "100.127.255.254",  # CGNAT
    "0.0.0.0", "0.1.2.3", "255.255.255.255", "224.0.0.1", "239.255.255.250", "240.0.0.1",
    "192.0.0.8", "192.0.2.1", "198.51.100.7", "203.0.113.9", "198.18.0.1", "192.88.99.1",
    "::1", "::", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
    "2001:db8::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
    "2002:7f00:1::1",            # 6to4 of 127.0.0.1
    "2002:a00:1::1",             # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
    "64:ff9b::7f00:1",           # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",            # NAT64 of 10.0.0.1
    "64:ff9b::808:808",          # NAT64 of a public address: refused too (see egress.py)
    "64:ff9b:1::1",              # NAT64 local use
    "::127.0.0.1",               # IPv4-compatible (deprecated)
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111",
          "2a00:1450:4001:81c::200e", "::ffff:8.8.8.8", "2002:808:808::1",
          "100.63.255.255", "100.128.0.1", "172.32.0.1", "11.0.0.1"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_not_public(address: str) -> None:
    assert not is_public(address)
    assert not EgressPolicy.from_strings(["public"]).allows(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_public(address: str) -> None:
    assert is_public(address)
    assert EgressPolicy.from_strings(["public"]).allows(address)


def test_cidr_lists() -> None:
    policy = EgressPolicy.from_strings(["127.0.0.0/8", "::1/128", "10.1.0.0/16"])
    assert policy.allows("127.0.0.1") and policy.allows("127.3.4.5")
    assert policy.allows("::ffff:127.0.0.1")  # mapped forms are judged as IPv4
    assert policy.allows("::1") and policy.allows("10.1.200.3")
    assert not policy.allows("10.2.0.1") and not policy.allows("8.8.8.8")
    assert not policy.allows("::2") and not policy.allows("not an address")
    both = EgressPolicy.from_strings(["public", "127.0.0.1"])
    assert both.allows("8.8.8.8") and both.allows("127.0.0.1") and not both.allows("127.0.0.2")


def test_mapped_network_entries_also_match() -> None:
    policy = EgressPolicy.from_strings(["::ffff:127.0.0.0/104"])
    assert policy.allows("::ffff:127.0.0.1")
    assert not policy.allows("::ffff:10.0.0.1")


def test_vet_keeps_allowed_in_order_and_names_the_host() -> None:
    policy = EgressPolicy.from_strings(["public"])
    assert policy.vet("h", ["10.0.0.1", "8.8.8.8", "::ffff:8.8.8.8", "1.1.1.1"]) == [
        "8.8.8.8", "1.1.1.1"]
    with pytest.raises(EgressRefused) as info:
        policy.vet("intranet.example", ["10.0.0.1", "::1"], url="http://intranet.example/")
    error = info.value
    assert error.host == "intranet.example" and error.addresses == ("10.0.0.1", "::1")
    assert "intranet.example" in error.message and "10.0.0.1" in error.message
    assert error.url == "http://intranet.example/" and not error.retryable


@pytest.mark.parametrize("entries", [["10.0.0.0/33"], ["nonsense"], [""], ["public", "1.2.3"]])
def test_bad_entries_raise(entries: list[str]) -> None:
    with pytest.raises(FetchConfigError):
        EgressPolicy.from_strings(entries)


def test_parse_address_normalises() -> None:
    assert str(parse_address("::ffff:127.0.0.1")) == "127.0.0.1"
    assert str(parse_address("fe80::1%eth0")) == "fe80::1"
    assert str(parse_address("[::1]")) == "::1"


ipv4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
ipv6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


@given(ipv4)
def test_ipv4_and_its_mapped_form_agree(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    assert is_public(address) == is_public(mapped)
    loopback = EgressPolicy.from_strings(["127.0.0.0/8"])
    assert loopback.allows(str(address)) == loopback.allows(str(mapped)) == (
        address in ipaddress.ip_network("127.0.0.0/8"))


@given(ipv4)
def test_public_ipv4_is_never_in_a_special_range(address: ipaddress.IPv4Address) -> None:
    if is_public(address):
        assert address.is_global and not address.is_multicast and not address.is_private
        assert address not in ipaddress.ip_network("100.64.0.0/10")


@given(ipv6)
def test_public_ipv6_never_embeds_a_private_ipv4(address: ipaddress.IPv6Address) -> None:
    if is_public(address):
        assert not address.is_private and not address.is_multicast
        for embedded in (address.ipv4_mapped, address.sixtofour):
            assert embedded is None or is_public(embedded)


@given(st.sampled_from(["10.0.0.0/8", "192.168.0.0/16", "127.0.0.0/8", "fd00::/8"]), ipv4)
def test_private_allow_list_never_allows_public_by_accident(net: str, address) -> None:
    policy = EgressPolicy.from_strings([net])
    network = ipaddress.ip_network(net)
    assert policy.allows(str(address)) == (network.version == 4 and address in network)


def test_the_engines_own_endpoints_are_refused_even_inside_the_allow_list() -> None:
    policy = EgressPolicy.from_strings(
        ["127.0.0.0/8", "::1/128"],
        refused_endpoints=[("127.0.0.0/8", 8000), ("::1/128", 8000), ("10.0.0.5", 6379)])
    assert policy.refuses("127.0.0.1", 8000) and policy.refuses("127.0.0.2", 8000)
    assert policy.refuses("::ffff:127.0.0.1", 8000) and policy.refuses("::1", 8000)
    assert policy.refuses("10.0.0.5", 6379) and not policy.refuses("10.0.0.5", 6380)
    assert not policy.refuses("127.0.0.1", 8001)
    assert policy.vet("site.test", ["127.0.0.1"], port=8001) == ["127.0.0.1"]
    with pytest.raises(EgressRefused, match="one of the engine's own services"):
        policy.vet("localhost", ["127.0.0.1", "::1"], port=8000)


@pytest.mark.parametrize("entry", [("not-an-address", 80), ("127.0.0.1", 0),
                                   ("127.0.0.1", "http"), ("127.0.0.1",)])
def test_a_bad_refused_endpoint_is_a_clear_error(entry) -> None:
    with pytest.raises(FetchConfigError, match="refused_endpoints"):
        EgressPolicy.from_strings(["public"], refused_endpoints=[entry])
