//! Where a request says it is going and where it comes from.
//!
//! - **Host.** The portal answers only for its public URL's host and for loopback names
//!   (`localhost`, `127.0.0.1`, `[::1]`, on any port). Any other `Host` is refused on every
//!   route but the probes: a page on another site whose name an attacker re-points at a
//!   developer's `127.0.0.1` (DNS rebinding) sends its own name as `Host`, so it can never
//!   drive a local portal, not even its development sign-in. Kubelet probes name the pod's
//!   address, so `/healthz` and `/readyz` answer any `Host`.
//! - **Origin.** A state-changing request carried by the browser's cookie must come from a
//!   page of the portal: its `Origin` (or `Referer`) is the public URL's origin or the
//!   (already accepted) `Host` it was sent to.

use axum::http::{HeaderMap, Uri, header};

/// The names the portal answers for.
#[derive(Debug, Clone)]
pub(crate) struct PublicHost {
    /// The public URL's host, lowercase (`portal.example`, `[2001:db8::1]`).
    host: String,
    /// Its port, explicit or the scheme's.
    port: u16,
    /// The scheme's port, which a `Host` without a port means.
    default_port: u16,
}

impl PublicHost {
    /// From the public URL (`https://portal.example`).
    pub(crate) fn of(public_url: &url::Url) -> Self {
        let host = match public_url.host() {
            Some(url::Host::Ipv6(a)) => format!("[{a}]"),
            Some(h) => h.to_string().to_ascii_lowercase(),
            None => String::new(),
        };
        PublicHost {
            host,
            port: public_url.port_or_known_default().unwrap_or(80),
            default_port: if public_url.scheme() == "https" {
                443
            } else {
                80
            },
        }
    }

    /// Whether a request sent to `Host` (or, in HTTP/2, the URI's authority) is for the
    /// portal. A request naming no host at all is not.
    pub(crate) fn accepts(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        let named = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
            .or_else(|| uri.authority().map(|a| a.as_str().to_owned()));
        let Some(named) = named else {
            return false;
        };
        let Ok(authority) = named.parse::<axum::http::uri::Authority>() else {
            return false;
        };
        let host = authority.host().to_ascii_lowercase();
        if matches!(host.as_str(), "localhost" | "127.0.0.1" | "[::1]") {
            return true;
        }
        let port = authority.port_u16().unwrap_or(self.default_port);
        host == self.host && port == self.port
    }
}

/// Whether a path answers any `Host`: the probes.
pub(crate) fn any_host(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz")
}

/// Whether the request's `Origin` (or, without one, `Referer`) is the portal: the public URL's
/// origin or the `Host` the request was sent to (which [`PublicHost::accepts`] let through).
pub(crate) fn same_origin(headers: &HeaderMap, public_origin: &str) -> bool {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = match headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        Some(o) => o.to_owned(),
        None => match headers
            .get(header::REFERER)
            .and_then(|r| r.to_str().ok())
            .and_then(|r| url::Url::parse(r).ok())
        {
            Some(r) => r.origin().ascii_serialization(),
            None => return false,
        },
    };
    if origin == public_origin {
        return true;
    }
    host.is_some_and(|h| origin == format!("http://{h}") || origin == format!("https://{h}"))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn host(value: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static(value));
        h
    }

    #[test]
    fn only_the_public_host_and_loopback_names_are_answered() {
        let public = PublicHost::of(&url::Url::parse("https://Portal.Example").unwrap());
        let uri = Uri::from_static("/");
        for ok in [
            "portal.example",
            "PORTAL.example:443",
            "localhost:3101",
            "127.0.0.1:3000",
            "[::1]:8080",
        ] {
            assert!(public.accepts(&host(ok), &uri), "{ok}");
        }
        for refused in [
            "rebind.example:3101",
            "portal.example:8443",
            "portal.example.evil.example",
            "127.0.0.2",
            "",
            "a b",
        ] {
            assert!(!public.accepts(&host(refused), &uri), "{refused}");
        }
        assert!(!public.accepts(&HeaderMap::new(), &uri), "no host at all");
        let h2 = Uri::from_static("https://portal.example/catalog");
        assert!(public.accepts(&HeaderMap::new(), &h2), "HTTP/2 authority");
    }

    #[test]
    fn a_public_url_with_a_port_is_answered_on_that_port_only() {
        let public = PublicHost::of(&url::Url::parse("http://10.0.0.5:3000/").unwrap());
        let uri = Uri::from_static("/");
        assert!(public.accepts(&host("10.0.0.5:3000"), &uri));
        assert!(!public.accepts(&host("10.0.0.5"), &uri));
        assert!(!public.accepts(&host("10.0.0.6:3000"), &uri));
    }

    #[test]
    fn the_origin_must_be_the_portal() {
        let mut h = host("127.0.0.1:3000");
        assert!(!same_origin(&h, "https://portal.example"));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:3000"),
        );
        assert!(same_origin(&h, "https://portal.example"));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(!same_origin(&h, "https://portal.example"));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://portal.example"),
        );
        assert!(same_origin(&h, "https://portal.example"));
    }
}
