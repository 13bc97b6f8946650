//! Addresses the catalog may hold: `http` and `https` only.
//!
//! Evidence URLs end up as links in every reader's browser and as targets of the portal's
//! probes. Any other scheme is a hazard there: `javascript:` and `data:` links run code in the
//! reader's session, `file:` and friends point the probe at the portal's own machine. So the
//! model refuses them while it is read — a catalog file holding one fails to load with the
//! line and column of its evidence entry, and the catalog already served stays — and the UI checks again
//! before it renders a link, for values that reach it any other way.

use std::net::IpAddr;

use serde::{Deserialize, Deserializer};

/// Whether `s` is an absolute `http` or `https` URL with a host, as the WHATWG URL parser (the
/// one browsers use) reads it, so that what is checked here is what a browser would follow.
pub fn is_http_url(s: &str) -> bool {
    url::Url::parse(s).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

/// Loopback, link-local (where cloud metadata services answer), unspecified ("this host"),
/// multicast and broadcast addresses: none of them is another machine's service.
pub fn is_internal_address(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.octets()[0] == 0
                || v4.is_multicast()
                || v4.is_broadcast()
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // fe80::/10, link-local.
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                // fd00:ec2::254, the IPv6 address of a well-known cloud metadata service.
                || v6 == std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
        }
    }
}

/// The error a refused address gets, naming the value (cut, so a hostile one cannot fill a log).
fn refusal(s: &str) -> String {
    const SHOWN: usize = 80;
    let shown: String = s.chars().take(SHOWN).collect();
    let cut = if s.chars().count() > SHOWN { "…" } else { "" };
    format!("`{shown}{cut}` is not an http:// or https:// address")
}

/// Deserializes a required URL, refusing anything but an http(s) address.
pub(crate) fn http_url<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if is_http_url(&s) {
        Ok(s)
    } else {
        Err(serde::de::Error::custom(refusal(&s)))
    }
}

/// Deserializes an optional URL, refusing anything but an http(s) address when present.
pub(crate) fn opt_http_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Option::<String>::deserialize(d)? {
        Some(s) if !is_http_url(&s) => Err(serde::de::Error::custom(refusal(&s))),
        v => Ok(v),
    }
}

/// What an address template (the platform's `adr_url`) holds where a name goes.
pub const ADR_PLACEHOLDER: &str = "{adr}";

/// The address of ADR `name` in `template` (see the platform's `adr_url`): `None` unless the
/// name can stand in an address as it is (letters, digits, `.`, `_`, `-`) and the result is an
/// http(s) address.
pub fn adr_link(template: &str, name: &str) -> Option<String> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let url = template.replace(ADR_PLACEHOLDER, name);
    (plain && is_http_url(&url)).then_some(url)
}

/// Deserializes an optional address template: with its [`ADR_PLACEHOLDER`], an http(s)
/// address once a name stands in it.
pub(crate) fn opt_http_url_template<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    match Option::<String>::deserialize(d)? {
        Some(s) if !s.contains(ADR_PLACEHOLDER) => Err(serde::de::Error::custom(format!(
            "`{}` does not say where the ADR's name goes: write {ADR_PLACEHOLDER} in it",
            s.chars().take(80).collect::<String>()
        ))),
        Some(s) if !is_http_url(&s.replace(ADR_PLACEHOLDER, "ADR-001")) => {
            Err(serde::de::Error::custom(refusal(&s)))
        }
        v => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adr_address_template_is_http_with_a_place_for_the_name() {
        let read = |url: Option<&str>| -> Result<crate::model::Platform, String> {
            serde_json::from_value(serde_json::json!({"name": "P", "adr_url": url}))
                .map_err(|e| e.to_string())
        };
        let ok = read(Some(
            "https://git.example.org/devops/-/blob/main/docs/adr/{adr}.md",
        ))
        .unwrap();
        assert_eq!(
            ok.adr_link("ADR-003").as_deref(),
            Some("https://git.example.org/devops/-/blob/main/docs/adr/ADR-003.md")
        );
        assert_eq!(
            ok.adr_link("ADR 3/../x"),
            None,
            "a name that is not plain is not linked"
        );
        let script = read(Some("javascript:alert(1)//{adr}")).unwrap_err();
        assert!(script.contains("not an http"), "{script}");
        let nowhere = read(Some("https://git.example.org/adr/")).unwrap_err();
        assert!(nowhere.contains("{adr}"), "{nowhere}");
        assert_eq!(read(None).unwrap().adr_link("ADR-003"), None);
    }

    #[test]
    fn http_and_https_addresses_with_a_host_are_accepted() {
        for ok in [
            "https://grafana.example.org/api/health",
            "http://10.0.0.1:8080/",
            "HTTPS://Example.org",
            "https://[2001:db8::1]/x?y#z",
        ] {
            assert!(is_http_url(ok), "{ok}");
        }
    }

    #[test]
    fn script_data_file_relative_and_hostless_addresses_are_refused() {
        for bad in [
            "javascript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "ftp://example.org/x",
            "//example.org/x",
            "/relative",
            "http://",
            "https:// spaced.example",
            "",
        ] {
            assert!(!is_http_url(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_refused_address_is_named_and_a_long_one_is_cut() {
        let long = format!("javascript:{}", "a".repeat(500));
        let msg = refusal(&long);
        assert!(msg.starts_with("`javascript:aaa"), "{msg}");
        assert!(msg.contains('…') && msg.chars().count() < 140, "{msg}");
    }
}
