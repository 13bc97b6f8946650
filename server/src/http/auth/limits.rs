//! Rate limits on what an attacker repeats: sign-in, API-token checks and webhook deliveries.
//!
//! Each kind has its own budget per client address, a generic cell rate
//! ([`governor`]): `N` per minute, all of them at once if need be, one more every `60/N`
//! seconds. A request over the budget is answered 429 with `Retry-After` before anything else
//! is done for it (no session is read, no token hashed, no signature checked, no audit row
//! written), and the refusals of one kind are logged once per window
//! ([`crate::http::api::refusals`]).
//!
//! - **Sign-in** (`/auth/login`, `/auth/callback`, `/auth/dev`): every attempt. A person signs
//!   in a few times a day; a script trying users or replaying callbacks does not get far.
//! - **Token checks**: every request on `/api/*` that carries `Authorization: Bearer`. Tokens
//!   are 256 random bits, so this is not about guessing one: it keeps a flood of bad tokens from
//!   becoming a flood of database reads. The default is generous for scripts that poll.
//! - **Webhooks**: every delivery to the routes the sender signs (`/api/v1/forge/webhook`). A
//!   forge sends a few per merge.
//!
//! ## Who the client is
//! The peer address of the connection, unless that peer is one of `MIRANTE_TRUSTED_PROXIES`
//! (Traefik in front of the portal): then the rightmost address of `X-Forwarded-For` that is
//! not itself a trusted proxy. Entries further left are what the client wrote and are never
//! believed, and with no trusted proxies configured the header is ignored entirely (ADR 0019).
//! IPv6 clients are counted per /64, the smallest network a host is usually given.

use std::{
    net::{IpAddr, Ipv6Addr},
    num::NonZeroU32,
    time::Duration,
};

use axum::http::HeaderMap;
use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter,
    clock::{Clock, DefaultClock},
};
use ipnet::IpNet;

/// What a request spends its budget on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bucket {
    /// Starting a sign-in, finishing one, or the development sign-in.
    SignIn,
    /// An API request carrying a bearer token.
    TokenCheck,
    /// A webhook delivery.
    Webhook,
}

impl Bucket {
    /// The name refusals of this kind are logged under.
    pub(crate) fn refusal_kind(self) -> &'static str {
        match self {
            Bucket::SignIn => "rate limit: sign-in",
            Bucket::TokenCheck => "rate limit: token checks",
            Bucket::Webhook => "rate limit: webhooks",
        }
    }

    /// The bucket of a request to `path`, if it has one; `bearer` when it carries a token on
    /// the API.
    pub(crate) fn of(path: &str, bearer: bool) -> Option<Bucket> {
        if matches!(path, "/auth/login" | "/auth/callback" | "/auth/dev") {
            Some(Bucket::SignIn)
        } else if super::policy::signed_by_sender(path) {
            Some(Bucket::Webhook)
        } else if bearer {
            Some(Bucket::TokenCheck)
        } else {
            None
        }
    }
}

/// How many requests of each kind a client may send per minute; `0` turns a limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PerMinute {
    /// Sign-in attempts.
    pub(crate) sign_in: u32,
    /// API requests with a bearer token.
    pub(crate) token_checks: u32,
    /// Webhook deliveries.
    pub(crate) webhooks: u32,
}

/// The budgets of every client, and who is trusted to say who the client is.
#[derive(Debug)]
pub(crate) struct RateLimits {
    sign_in: Option<DefaultKeyedRateLimiter<IpAddr>>,
    token_checks: Option<DefaultKeyedRateLimiter<IpAddr>>,
    webhooks: Option<DefaultKeyedRateLimiter<IpAddr>>,
    proxies: TrustedProxies,
}

impl RateLimits {
    /// Budgets of `per_minute`, with the client addresses that `proxies` forward believed.
    pub(crate) fn new(per_minute: PerMinute, proxies: TrustedProxies) -> Self {
        let limiter = |n: u32| NonZeroU32::new(n).map(|n| RateLimiter::keyed(Quota::per_minute(n)));
        RateLimits {
            sign_in: limiter(per_minute.sign_in),
            token_checks: limiter(per_minute.token_checks),
            webhooks: limiter(per_minute.webhooks),
            proxies,
        }
    }

    /// Who sent a request that reached us from `peer` with `headers`.
    pub(crate) fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        self.proxies.client(peer, headers)
    }

    /// Spends one request of `bucket` for `client`. `Err` with how long to wait when its
    /// budget is spent.
    pub(crate) fn check(&self, bucket: Bucket, client: IpAddr) -> Result<(), Duration> {
        let limiter = match bucket {
            Bucket::SignIn => &self.sign_in,
            Bucket::TokenCheck => &self.token_checks,
            Bucket::Webhook => &self.webhooks,
        };
        let Some(limiter) = limiter else {
            return Ok(());
        };
        limiter
            .check_key(&key(client))
            .map_err(|not_until| not_until.wait_time_from(DefaultClock::default().now()))
    }

    /// Forgets clients whose budget is whole again, so that the table does not keep every
    /// address ever seen.
    pub(crate) fn forget_idle(&self) {
        for limiter in [&self.sign_in, &self.token_checks, &self.webhooks]
            .into_iter()
            .flatten()
        {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// How many clients are remembered, over all kinds.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        [&self.sign_in, &self.token_checks, &self.webhooks]
            .into_iter()
            .flatten()
            .map(|l| l.len())
            .sum()
    }
}

/// The whole seconds to put in `Retry-After` for a wait: rounded up, at least 1.
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// The address a client is counted under: IPv4 as it is, IPv6 by its /64.
fn key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(bits))
        }
    }
}

/// The proxies whose `X-Forwarded-For` is believed (`MIRANTE_TRUSTED_PROXIES`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TrustedProxies(Vec<IpNet>);

/// An entry of `MIRANTE_TRUSTED_PROXIES` that is neither an address nor a network.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("MIRANTE_TRUSTED_PROXIES: `{0}` is not an IP address or a network (10.42.0.0/16)")]
pub(crate) struct BadProxyEntry(pub String);

impl TrustedProxies {
    /// Reads a comma-separated list of addresses and networks; empty entries are skipped.
    pub(crate) fn parse(list: &str) -> Result<Self, BadProxyEntry> {
        list.split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|entry| {
                entry
                    .parse::<IpNet>()
                    .map(|net| net.trunc())
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| BadProxyEntry(entry.to_owned()))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(TrustedProxies)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// The client behind `peer`: `peer` itself unless it is a trusted proxy, else the
    /// rightmost `X-Forwarded-For` address that is not a trusted proxy. An entry that is not
    /// an address stops the walk there: what is left of it cannot be told from a forgery.
    pub(crate) fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        let hops = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect::<Vec<_>>();
        for hop in hops.into_iter().rev() {
            let Ok(ip) = hop.parse::<IpAddr>() else {
                break;
            };
            client = ip.to_canonical();
            if !self.trusts(client) {
                break;
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        headers
    }

    #[test]
    fn without_trusted_proxies_the_forwarded_header_is_ignored() {
        let proxies = TrustedProxies::default();
        let headers = forwarded(&["203.0.113.7"]);
        assert_eq!(proxies.client(ip("10.0.0.9"), &headers), ip("10.0.0.9"));
    }

    #[test]
    fn behind_a_trusted_proxy_the_rightmost_untrusted_address_is_the_client() {
        let proxies = TrustedProxies::parse("10.42.0.0/16, 127.0.0.1").unwrap();
        // The client wrote the first entry itself; Traefik appended the real one.
        let headers = forwarded(&["198.51.100.1, 203.0.113.7", "10.42.3.4"]);
        assert_eq!(proxies.client(ip("10.42.0.5"), &headers), ip("203.0.113.7"));
    }

    #[test]
    fn a_peer_that_is_not_a_trusted_proxy_is_the_client_whatever_it_forwards() {
        let proxies = TrustedProxies::parse("10.42.0.0/16").unwrap();
        let headers = forwarded(&["10.42.0.7"]);
        assert_eq!(
            proxies.client(ip("203.0.113.9"), &headers),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn a_garbled_forwarded_entry_stops_the_walk_at_the_last_address_believed() {
        let proxies = TrustedProxies::parse("10.42.0.0/16").unwrap();
        let headers = forwarded(&["203.0.113.7, not-an-address, 10.42.9.9"]);
        assert_eq!(proxies.client(ip("10.42.0.5"), &headers), ip("10.42.9.9"));
        let empty = HeaderMap::new();
        assert_eq!(proxies.client(ip("10.42.0.5"), &empty), ip("10.42.0.5"));
    }

    #[test]
    fn an_entry_that_is_no_address_or_network_is_refused_by_name() {
        let error = TrustedProxies::parse("10.0.0.0/8, traefik").unwrap_err();
        assert_eq!(error, BadProxyEntry("traefik".to_owned()));
        assert!(error.to_string().contains("MIRANTE_TRUSTED_PROXIES"));
    }

    #[test]
    fn ipv6_clients_share_the_budget_of_their_slash_64() {
        assert_eq!(key(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }

    #[test]
    fn a_spent_budget_says_how_long_to_wait_and_other_clients_keep_theirs() {
        let limits = RateLimits::new(
            PerMinute {
                sign_in: 2,
                token_checks: 0,
                webhooks: 5,
            },
            TrustedProxies::default(),
        );
        let client = ip("203.0.113.7");
        assert!(limits.check(Bucket::SignIn, client).is_ok());
        assert!(limits.check(Bucket::SignIn, client).is_ok());
        let wait = limits.check(Bucket::SignIn, client).unwrap_err();
        // Two per minute: the next one is free after at most 30 s.
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(30));
        assert!(limits.check(Bucket::SignIn, ip("203.0.113.8")).is_ok());
        // The budgets of the kinds are apart; 0 is no limit.
        assert!(limits.check(Bucket::Webhook, client).is_ok());
        for _ in 0..100 {
            assert!(limits.check(Bucket::TokenCheck, client).is_ok());
        }
    }

    #[test]
    fn clients_whose_budget_is_whole_again_are_forgotten() {
        let limits = RateLimits::new(
            PerMinute {
                sign_in: 60_000,
                token_checks: 0,
                webhooks: 0,
            },
            TrustedProxies::default(),
        );
        for i in 0..50u8 {
            limits
                .check(Bucket::SignIn, IpAddr::from([192, 0, 2, i]))
                .unwrap();
        }
        assert_eq!(limits.remembered(), 50);
        // One cell comes back every millisecond at 60,000 per minute.
        std::thread::sleep(Duration::from_millis(5));
        limits.forget_idle();
        assert_eq!(limits.remembered(), 0);
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(retry_after_secs(Duration::from_millis(2001)), 3);
        assert_eq!(retry_after_secs(Duration::from_secs(2)), 2);
        assert_eq!(retry_after_secs(Duration::ZERO), 1);
    }
}
