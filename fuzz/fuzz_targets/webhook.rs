//! Forge webhook deliveries of any headers and body, for each forge (`mirante_domain::webhook`).
//!
//! - Never a panic; a delivery that is read as a pull request change passed the signature
//!   check.
//! - A delivery the target signs with the secret, as the forge would, passes the check; the
//!   same delivery with one character of its signature changed does not.

#![no_main]

use hmac::{Hmac, Mac};
use libfuzzer_sys::{
    arbitrary::{self, Arbitrary},
    fuzz_target,
};
use mirante_domain::webhook::{Headers, Sender, WebhookRefusal, verify, verify_and_parse};
use sha2::Sha256;

#[derive(Debug, Arbitrary)]
struct Input {
    sender: u8,
    secret: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Sign the delivery with the secret, then change the signature's character at this
    /// position (modulo its length) when given.
    sign: Option<Option<u16>>,
}

struct Map(Vec<(String, String)>);

impl Headers for Map {
    fn header(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// `value` with the character at `at` (modulo its length) replaced by another one.
fn altered(value: &str, at: u16) -> String {
    let mut chars: Vec<char> = value.chars().collect();
    if chars.is_empty() {
        return "x".to_owned();
    }
    let i = usize::from(at) % chars.len();
    chars[i] = if chars[i] == '0' { '1' } else { '0' };
    chars.into_iter().collect()
}

fuzz_target!(|input: Input| {
    let sender = [Sender::Github, Sender::Gitlab, Sender::Gitea][usize::from(input.sender) % 3];
    let secret = input.secret.as_bytes();
    let mut headers = input.headers;

    if let Some(alter) = input.sign
        && !secret.is_empty()
    {
        let (name, value) = match sender {
            Sender::Gitlab => ("x-gitlab-token", input.secret.clone()),
            Sender::Github | Sender::Gitea => {
                let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
                mac.update(&input.body);
                let hex = hex::encode(mac.finalize().into_bytes());
                match sender {
                    Sender::Github => ("x-hub-signature-256", format!("sha256={hex}")),
                    _ => ("x-gitea-signature", hex),
                }
            }
        };
        headers.retain(|(n, _)| {
            !matches!(
                n.to_ascii_lowercase().as_str(),
                "x-gitlab-token"
                    | "x-hub-signature-256"
                    | "x-gitea-signature"
                    | "x-forgejo-signature"
            )
        });
        let value = match alter {
            Some(at) => altered(&value, at),
            None => value,
        };
        headers.push((name.to_owned(), value));
        let map = Map(headers);
        let checked = verify(sender, &map, &input.body, secret);
        match alter {
            None => assert_eq!(
                checked,
                Ok(()),
                "a delivery signed with the secret is refused"
            ),
            Some(_) => assert_eq!(
                checked,
                Err(WebhookRefusal::BadSignature),
                "a changed signature is accepted"
            ),
        }
        let _ = verify_and_parse(sender, &map, &input.body, secret);
        return;
    }

    let map = Map(headers);
    if let Ok(Some(_)) = verify_and_parse(sender, &map, &input.body, secret) {
        assert_eq!(verify(sender, &map, &input.body, secret), Ok(()));
    }
});
