//! The harness's own HTTP requests: readiness polls, the check that each endpoint answers 200
//! before it is measured, and the sign-in that gives the session and the API token measured.

use std::{
    fmt,
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
    time::Duration,
};

use anyhow::{Context, Result};

/// An HTTP response as [`http_request`] reads it.
pub(super) struct Reply {
    pub(super) status: u16,
    /// Header names in lower case.
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl Reply {
    pub(super) fn header(&self, name: &str) -> impl Iterator<Item = &str> {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A minimal HTTP/1.1 request on a fresh connection (`Connection: close`).
pub(super) fn http_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &str,
) -> Result<Reply> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_nodelay(true)?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .context("no status code")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let body = raw[head_end + 4..].to_vec();
    let mut reply = Reply {
        status,
        headers,
        body,
    };
    if reply
        .header("transfer-encoding")
        .any(|v| v.contains("chunked"))
    {
        reply.body = dechunk(&reply.body)?;
    }
    Ok(reply)
}

/// A plain GET: the status code and the body.
pub(super) fn http_get(addr: SocketAddr, path: &str) -> Result<(u16, Vec<u8>)> {
    let r = http_request(addr, "GET", path, &[], "")?;
    Ok((r.status, r.body))
}

/// How a measured request proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// No credentials: the server runs with `MIRANTE_PUBLIC_CATALOG=true`.
    Anonymous,
    /// `Authorization: Bearer <personal API token>`.
    Token,
    /// The `mirante_session` cookie of a signed-in user.
    Session,
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Access::Anonymous => "anonymous",
            Access::Token => "API token",
            Access::Session => "session cookie",
        })
    }
}

/// Credentials of a researcher signed in through the development sign-in.
pub(super) struct Credentials {
    cookie: String,
    token: String,
}

impl Credentials {
    pub(super) fn headers(&self, access: Access) -> Vec<(String, String)> {
        match access {
            Access::Anonymous => vec![],
            Access::Token => vec![("Authorization".into(), format!("Bearer {}", self.token))],
            Access::Session => vec![("Cookie".into(), self.cookie.clone())],
        }
    }
}

/// Signs in as the development sign-in's researcher (`rui`) and makes a personal API token,
/// as a person would in the browser: `POST /auth/dev`, `GET /profile`, `POST /profile/tokens`.
pub(super) fn sign_in(addr: SocketAddr) -> Result<Credentials> {
    let origin = vec![
        ("Origin".to_owned(), format!("http://{addr}")),
        (
            "Content-Type".to_owned(),
            "application/x-www-form-urlencoded".to_owned(),
        ),
    ];
    let r = http_request(addr, "POST", "/auth/dev", &origin, "user=rui&next=%2F")?;
    let cookie = r
        .header("set-cookie")
        .filter_map(|c| c.split(';').next())
        .filter(|c| c.starts_with("mirante_session="))
        .last()
        .map(str::to_owned)
        .with_context(|| {
            format!(
                "the development sign-in answered {} with no session",
                r.status
            )
        })?;
    let with_cookie = |mut h: Vec<(String, String)>| {
        h.push(("Cookie".to_owned(), cookie.clone()));
        h
    };
    let profile = http_request(addr, "GET", "/profile", &with_cookie(vec![]), "")?;
    let html = String::from_utf8_lossy(&profile.body);
    let csrf = between(&html, "name=\"csrf_token\" value=\"", "\"")
        .with_context(|| format!("no CSRF token on /profile (status {})", profile.status))?;
    let made = http_request(
        addr,
        "POST",
        "/profile/tokens",
        &with_cookie(origin),
        &format!("csrf_token={csrf}&name=bench"),
    )?;
    let html = String::from_utf8_lossy(&made.body);
    let token = between(&html, "<code id=\"new-token\">", "<")
        .with_context(|| format!("no new token on the profile page (status {})", made.status))?;
    Ok(Credentials {
        cookie,
        token: token.to_owned(),
    })
}

/// The text between `start` and the next `end`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .context("bad chunk")?;
        let size_str = String::from_utf8_lossy(&raw[..eol]);
        let size = usize::from_str_radix(size_str.split(';').next().unwrap_or("").trim(), 16)
            .context("bad chunk size")?;
        raw = &raw[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(raw.get(..size).context("short chunk")?);
        raw = raw.get(size + 2..).context("short chunk")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_bodies_are_joined() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
    }
}
