//! Addresses a connection reaches only by a rule naming them exactly: this machine, the
//! networks behind it, and the cloud metadata services ([`internal`]). Checked after a name
//! is resolved, so that no name (a DNS answer an attacker controls, a decimal IP like
//! `2130706433`) leads into them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

/// What kind of internal address `address` is, or `None` for an address on the internet.
pub fn internal(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
    .or_else(|| {
        own_addresses()
            .contains(&address)
            .then_some("this machine's own")
    })
}

fn internal_v4(a: Ipv4Addr) -> Option<&'static str> {
    let [first, second, third, _] = a.octets();
    Some(match (first, second) {
        _ if a.is_loopback() => "loopback",
        _ if a.is_unspecified() || first == 0 => "this host (0.0.0.0/8)",
        (169, 254) => "link-local (where cloud metadata services answer)",
        _ if a.is_private() => "private",
        (100, 64..=127) => {
            "shared address space (100.64.0.0/10, where some metadata services answer)"
        }
        (192, 0) if third == 0 => "IETF protocol assignments (192.0.0.0/24)",
        (198, 18..=19) => "benchmarking (198.18.0.0/15)",
        _ if a.is_multicast() => "multicast",
        _ if first >= 240 => "reserved (240.0.0.0/4)",
        _ => return None,
    })
}

fn internal_v6(a: Ipv6Addr) -> Option<&'static str> {
    // IPv4 written as IPv6 (mapped, compatible, NAT64, 6to4) is judged as the IPv4 address.
    if let Some(v4) = a.to_ipv4_mapped() {
        return internal_v4(v4);
    }
    let segments = a.segments();
    if segments[..6] == [0; 6] && !a.is_loopback() && !a.is_unspecified() {
        return internal_v4(Ipv4Addr::from_bits(a.to_bits() as u32));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return internal_v4(Ipv4Addr::from_bits(a.to_bits() as u32));
    }
    if segments[0] == 0x2002 {
        return internal_v4(Ipv4Addr::from_bits((a.to_bits() >> 80) as u32));
    }
    Some(match segments[0] {
        _ if a.is_loopback() => "loopback",
        _ if a.is_unspecified() => "unspecified",
        s if s & 0xfe00 == 0xfc00 => "unique local (fc00::/7, where some metadata services answer)",
        s if s & 0xffc0 == 0xfe80 => "link-local",
        s if s & 0xff00 == 0xff00 => "multicast",
        _ => return None,
    })
}

/// The addresses of this machine's interfaces, read once.
fn own_addresses() -> &'static [IpAddr] {
    static OWN: OnceLock<Vec<IpAddr>> = OnceLock::new();
    OWN.get_or_init(|| {
        let Ok(interfaces) = nix::ifaddrs::getifaddrs() else {
            return Vec::new();
        };
        interfaces
            .filter_map(|interface| interface.address)
            .filter_map(|address| {
                if let Some(v4) = address.as_sockaddr_in() {
                    Some(IpAddr::V4(v4.ip()))
                } else {
                    address.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip()))
                }
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<&'static str> {
        let address: IpAddr = text.parse().unwrap_or(IpAddr::V4(Ipv4Addr::BROADCAST));
        internal(address)
    }

    #[test]
    fn internal_addresses_in_every_spelling() {
        for address in [
            "127.0.0.1",
            "127.1.2.3",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "::1",
            "::",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "fd00:ec2::254",
            "fe80::1",
        ] {
            assert!(kind(address).is_some(), "{address} passed as external");
        }
        assert_eq!(
            kind("169.254.169.254"),
            Some("link-local (where cloud metadata services answer)")
        );
    }

    #[test]
    fn internet_addresses_pass() {
        for address in [
            "1.1.1.1",
            "151.101.1.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(kind(address), None, "{address}");
        }
    }
}
