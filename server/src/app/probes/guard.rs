//! Where probes may go: never to the portal's own machine or the cloud's metadata service,
//! unless an operator says so.
//!
//! A probe's URL comes from the catalog, which anyone who can commit to the monorepo writes, and
//! its result is shown to readers. Unguarded, that is a way to make the portal request
//! `http://127.0.0.1:…` (its own admin-only ports, a sidecar) or `http://169.254.169.254/`
//! (cloud credentials) and read back what happened. Private networks (10/8, 192.168/16, ULA)
//! stay allowed: the platform's own services live there and are what the probes exist for.
//!
//! The check is made on the addresses a name resolves to (a custom resolver for the probe
//! clients, so `localhost` or a DNS name pointing at 127.0.0.1 is caught), on IP literals
//! before a request and on every redirect target. `MIRANTE_PROBE_ALLOW` lists host names,
//! addresses and networks that may be reached anyway, e.g. `localhost,127.0.0.1/8`.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
};

use ipnet::IpNet;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Host names, addresses and networks probes may reach although they are internal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ProbeAllow {
    hosts: Vec<String>,
    nets: Vec<IpNet>,
}

/// An entry of `MIRANTE_PROBE_ALLOW` that is neither a host name, an address nor a network.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("MIRANTE_PROBE_ALLOW: `{0}` is not a host name, an IP address or a network (10.0.0.0/8)")]
pub(crate) struct BadAllowEntry(pub String);

impl ProbeAllow {
    /// Reads a comma-separated list; empty entries are skipped.
    pub(crate) fn parse(list: &str) -> Result<Self, BadAllowEntry> {
        let mut allow = ProbeAllow::default();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if let Ok(net) = entry.parse::<IpNet>() {
                allow.nets.push(net.trunc());
            } else if let Ok(ip) = entry.parse::<IpAddr>() {
                allow.nets.push(IpNet::from(ip));
            } else if is_host_name(entry) {
                allow.hosts.push(entry.to_ascii_lowercase());
            } else {
                return Err(BadAllowEntry(entry.to_owned()));
            }
        }
        Ok(allow)
    }

    /// Whether the host name is listed (then every address it resolves to may be reached).
    fn allows_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&name)
    }

    /// Whether the address is in a listed network.
    fn allows_ip(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.nets.iter().any(|n| n.contains(&ip))
    }

    /// Why `ip` (reached as `host`) may not be probed, if it may not.
    pub(crate) fn refusal(&self, host: &str, ip: IpAddr) -> Option<String> {
        if is_internal(ip) && !self.allows_name(host) && !self.allows_ip(ip) {
            Some(format!(
                "refused: {host} is an internal address ({}); MIRANTE_PROBE_ALLOW can allow it",
                canonical(ip)
            ))
        } else {
            None
        }
    }

    /// Why the URL's host may not be probed, when it is an IP literal that may not be; names
    /// are checked by [`GuardedResolver`] when they are resolved.
    pub(crate) fn refuse_literal(&self, url: &Url) -> Option<String> {
        let ip = match url.host()? {
            Host::Ipv4(ip) => IpAddr::V4(ip),
            Host::Ipv6(ip) => IpAddr::V6(ip),
            Host::Domain(_) => return None,
        };
        self.refusal(url.host_str().unwrap_or_default(), ip)
    }
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) is the IPv4 address.
fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

pub(crate) use mirante_domain::link::is_internal_address as is_internal;

/// Letters, digits, dashes and dots, as DNS names are written.
fn is_host_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// The probe clients' resolver: the system's, minus the addresses [`ProbeAllow`] refuses.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    allow: Arc<ProbeAllow>,
}

impl GuardedResolver {
    /// A resolver that lets through what `allow` allows.
    pub(crate) fn new(allow: Arc<ProbeAllow>) -> Self {
        GuardedResolver { allow }
    }
}

/// A name that resolved only to refused addresses.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub String);

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = Arc::clone(&self.allow);
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let mut refusal = None;
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| match allow.refusal(&host, a.ip()) {
                    Some(why) => {
                        refusal.get_or_insert(why);
                        false
                    }
                    None => true,
                })
                .collect();
            match (kept.is_empty(), refusal) {
                (true, Some(why)) => Err(Box::new(Refused(why)) as _),
                _ => Ok(Box::new(kept.into_iter()) as Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_link_local_metadata_and_unspecified_addresses_are_internal() {
        for s in [
            "127.0.0.1",
            "127.8.9.10",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "fd00:ec2::254",
        ] {
            assert!(is_internal(ip(s)), "{s}");
        }
    }

    #[test]
    fn public_and_private_network_addresses_may_be_probed() {
        for s in [
            "10.0.0.5",
            "192.168.10.1",
            "172.16.0.1",
            "8.8.8.8",
            "2001:db8::1",
            "fd12:3456::1",
            "::ffff:10.0.0.5",
        ] {
            assert!(!is_internal(ip(s)), "{s}");
        }
    }

    #[test]
    fn the_allow_list_takes_names_addresses_and_networks_and_refuses_anything_else() {
        let allow = ProbeAllow::parse(" localhost , 127.0.0.2,169.254.0.0/16,,").unwrap();

        assert_eq!(allow.refusal("localhost", ip("127.0.0.1")), None);
        assert_eq!(allow.refusal("LOCALHOST.", ip("::1")), None);
        assert_eq!(allow.refusal("127.0.0.2", ip("127.0.0.2")), None);
        assert_eq!(allow.refusal("meta", ip("169.254.169.254")), None);
        let refused = allow.refusal("127.0.0.1", ip("127.0.0.1")).unwrap();
        assert!(
            refused.contains("internal address (127.0.0.1)"),
            "{refused}"
        );
        assert!(refused.contains("MIRANTE_PROBE_ALLOW"), "{refused}");
        assert_eq!(
            ProbeAllow::parse("localhost, http://x/"),
            Err(BadAllowEntry("http://x/".into()))
        );
        assert_eq!(ProbeAllow::parse(""), Ok(ProbeAllow::default()));
    }

    #[test]
    fn an_ip_literal_url_is_refused_before_any_request_and_a_name_is_left_to_the_resolver() {
        let none = ProbeAllow::default();
        let url = |s: &str| Url::parse(s).unwrap();

        assert!(none.refuse_literal(&url("http://127.0.0.1:9/")).is_some());
        assert!(none.refuse_literal(&url("http://[::1]/")).is_some());
        assert!(
            none.refuse_literal(&url("http://[::ffff:169.254.169.254]/"))
                .is_some()
        );
        assert!(none.refuse_literal(&url("http://0x7f000001/")).is_some());
        assert!(none.refuse_literal(&url("http://10.1.1.1/")).is_none());
        assert!(none.refuse_literal(&url("http://localhost/")).is_none());
    }

    #[tokio::test]
    async fn the_resolver_refuses_a_name_that_resolves_to_loopback_unless_it_is_allowed() {
        let name = |s: &str| s.parse::<Name>().unwrap();
        let guarded = GuardedResolver::new(Arc::new(ProbeAllow::default()));
        let error = match guarded.resolve(name("localhost")).await {
            Ok(addrs) => panic!("resolved to {:?}", addrs.collect::<Vec<_>>()),
            Err(e) => e.to_string(),
        };
        assert!(
            error.starts_with("refused: localhost is an internal address"),
            "{error}"
        );

        let allowed = GuardedResolver::new(Arc::new(ProbeAllow::parse("localhost").unwrap()));
        let addrs: Vec<SocketAddr> = allowed.resolve(name("localhost")).await.unwrap().collect();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
    }
}
