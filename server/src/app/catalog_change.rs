//! Catalog changes: an admin sets one item's `state`, `qualifier` and `evidence`, and the
//! change is proposed as a pull request on the monorepo, as a request of kind
//! [`RequestKind::CatalogChange`] with the same lifecycle as self-service requests.
//!
//! The portal never edits its own copy of the catalog. The item's file is read from the base
//! branch, edited in place ([`catalog_edit`](crate::app::selfservice::catalog_edit): only the lines
//! of those three fields change), and the whole catalog with the edited file must pass the
//! same validation as a reload; otherwise every problem is answered as an invalid field.
//! A change needs no approval in the portal: its author is an admin, and the pull request is
//! reviewed on the forge (docs/adr/0012-catalog-changes-as-requests.md).

use chrono::NaiveDate;
use mirante_domain::{
    Evidence, Qualifier, State,
    selfservice::{ErrorCode, FieldError, is_forbidden_char},
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::app::selfservice::catalog_edit::ItemEdit;

pub use mirante_api_types::catalog_change::{CatalogChangeInput, CatalogChangePreview, ItemFields};

/// The template id recorded on catalog-change requests (never a template's: ids of templates
/// are DNS labels and this is not one).
pub const CATALOG_CHANGE: &str = "catalog:change";
/// Longest reason, in characters.
pub(crate) const MAX_REASON: usize = 2000;
/// Longest text of one evidence field, in characters.
pub(crate) const MAX_EVIDENCE_TEXT: usize = 500;
/// Most evidence entries on one item.
pub(crate) const MAX_EVIDENCE: usize = 64;

/// SHA-256 of a file's content, hex: what the worker compares before it proposes.
pub fn content_sha256(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

pub(crate) fn field_error(
    field: &str,
    code: ErrorCode,
    message: String,
    args: Map<String, Value>,
) -> FieldError {
    FieldError {
        field: field.to_owned(),
        code,
        args,
        message,
    }
}

/// Checks one text: forbidden characters (newlines allowed where `multiline`), length, and
/// presence when `required`.
fn check_text(
    errors: &mut Vec<FieldError>,
    field: &str,
    index: Option<usize>,
    text: &str,
    required: bool,
    max: usize,
    multiline: bool,
) {
    let mut args = Map::new();
    if let Some(i) = index {
        args.insert("index".into(), json!(i));
    }
    if required && text.trim().is_empty() {
        errors.push(field_error(
            field,
            ErrorCode::Required,
            "a value is required".into(),
            args,
        ));
        return;
    }
    if let Some(c) = text
        .chars()
        .find(|&c| is_forbidden_char(c) && !(multiline && c == '\n'))
    {
        let code = format!("U+{:04X}", u32::from(c));
        let mut args = args.clone();
        args.insert("character".into(), json!(code));
        errors.push(field_error(
            field,
            ErrorCode::ForbiddenCharacter,
            format!("holds the control or invisible character {code}"),
            args,
        ));
    }
    let length = text.chars().count();
    if length > max {
        let mut args = args;
        args.insert("max_length".into(), json!(max));
        args.insert("length".into(), json!(length));
        errors.push(field_error(
            field,
            ErrorCode::TooLong,
            format!("{length} characters, at most {max}"),
            args,
        ));
    }
}

/// The input as an [`ItemEdit`] and a reason, or every problem with it.
pub(crate) fn parse_input(
    input: &CatalogChangeInput,
) -> Result<(ItemEdit, String), Vec<FieldError>> {
    let mut errors = Vec::new();
    let state = State::parse(input.state.trim());
    if state.is_none() {
        let allowed: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
        let (code, message) = if input.state.trim().is_empty() {
            (ErrorCode::Required, "a state is required".to_owned())
        } else {
            (
                ErrorCode::NotInEnum,
                format!("one of {}", allowed.join(", ")),
            )
        };
        let mut args = Map::new();
        args.insert("allowed".into(), json!(allowed));
        errors.push(field_error("state", code, message, args));
    }
    let qualifier = match input.qualifier.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(q) => {
            let parsed = Qualifier::parse(q);
            if parsed.is_none() {
                let allowed: Vec<&str> = Qualifier::ALL.iter().map(|q| q.as_str()).collect();
                let mut args = Map::new();
                args.insert("allowed".into(), json!(allowed));
                errors.push(field_error(
                    "qualifier",
                    ErrorCode::NotInEnum,
                    format!("one of {} or none", allowed.join(", ")),
                    args,
                ));
            }
            parsed
        }
    };
    if input.evidence.len() > MAX_EVIDENCE {
        let mut args = Map::new();
        args.insert("max_items".into(), json!(MAX_EVIDENCE));
        errors.push(field_error(
            "evidence",
            ErrorCode::TooManyItems,
            format!("at most {MAX_EVIDENCE} entries"),
            args,
        ));
    }
    let mut evidence = Vec::with_capacity(input.evidence.len());
    for (i, value) in input.evidence.iter().enumerate().take(MAX_EVIDENCE) {
        match serde_json::from_value::<Evidence>(value.clone()) {
            Ok(e) => {
                check_evidence(&mut errors, i, &e);
                evidence.push(e);
            }
            Err(e) => {
                let mut args = Map::new();
                args.insert("index".into(), json!(i));
                args.insert("expected".into(), json!("evidence"));
                args.insert("got".into(), json!(e.to_string()));
                errors.push(field_error(
                    "evidence",
                    ErrorCode::WrongType,
                    format!("not an evidence entry: {e}"),
                    args,
                ));
            }
        }
    }
    let reason = input.reason.replace("\r\n", "\n").trim().to_owned();
    check_text(&mut errors, "reason", None, &reason, true, MAX_REASON, true);
    match (state, errors.is_empty()) {
        (Some(state), true) => Ok((
            ItemEdit {
                state,
                qualifier,
                evidence,
            },
            reason,
        )),
        _ => Err(errors),
    }
}

fn check_evidence(errors: &mut Vec<FieldError>, i: usize, e: &Evidence) {
    let text = |errors: &mut Vec<FieldError>, field: &str, value: &str, required: bool| {
        check_text(
            errors,
            &format!("evidence.{field}"),
            Some(i),
            value,
            required,
            MAX_EVIDENCE_TEXT,
            false,
        );
    };
    match e {
        Evidence::Attestation { by, date, what } => {
            text(errors, "by", by, true);
            text(errors, "what", what, true);
            if date.trim().is_empty() {
                text(errors, "date", date, true);
            } else if NaiveDate::parse_from_str(date, "%Y-%m-%d").is_err() {
                let mut args = Map::new();
                args.insert("index".into(), json!(i));
                args.insert("pattern".into(), json!("YYYY-MM-DD"));
                errors.push(field_error(
                    "evidence.date",
                    ErrorCode::Pattern,
                    "a date as YYYY-MM-DD".into(),
                    args,
                ));
            }
        }
        Evidence::Probe { url, .. } => text(errors, "url", url, true),
        Evidence::Argocd { app, instance } => {
            text(errors, "app", app, true);
            if let Some(instance) = instance {
                text(errors, "instance", instance, false);
            }
        }
        Evidence::Reference { text: t, url } => {
            text(errors, "text", t, true);
            if let Some(url) = url {
                text(errors, "url", url, false);
            }
        }
    }
}

pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// An evidence entry in one line, for the pull request and the request's page.
pub(crate) fn evidence_line(e: &mirante_domain::Evidence) -> String {
    use mirante_domain::Evidence;
    one_line(&match e {
        Evidence::Attestation { by, date, what } => {
            format!("attestation by {by} on {date}: {what}")
        }
        Evidence::Probe { url, expect_status } => format!("probe {url} (expects {expect_status})"),
        Evidence::Argocd { app, instance } => match instance {
            Some(i) => format!("argocd app {app} on {i}"),
            None => format!("argocd app {app}"),
        },
        Evidence::Reference { text, url } => match url {
            Some(u) => format!("reference: {text} ({u})"),
            None => format!("reference: {text}"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(value: Value) -> CatalogChangeInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn every_bad_field_is_listed_at_once() {
        let errors = parse_input(&input(json!({
            "state": "done",
            "qualifier": "maybe",
            "evidence": [
                {"kind": "attestation", "by": "", "date": "30/11/2026", "what": "a\u{202E}b"},
                {"kind": "nonsense"}
            ],
            "reason": "  "
        })))
        .unwrap_err();

        let got: Vec<(String, ErrorCode)> =
            errors.iter().map(|e| (e.field.clone(), e.code)).collect();
        assert_eq!(
            got,
            [
                ("state".to_owned(), ErrorCode::NotInEnum),
                ("qualifier".to_owned(), ErrorCode::NotInEnum),
                ("evidence.by".to_owned(), ErrorCode::Required),
                ("evidence.what".to_owned(), ErrorCode::ForbiddenCharacter),
                ("evidence.date".to_owned(), ErrorCode::Pattern),
                ("evidence".to_owned(), ErrorCode::WrongType),
                ("reason".to_owned(), ErrorCode::Required),
            ]
        );
        assert_eq!(errors[2].args["index"], json!(0));
        assert_eq!(errors[5].args["index"], json!(1));
    }

    #[test]
    fn a_reason_may_span_lines_but_a_state_must_be_given() {
        let errors = parse_input(&input(json!({"reason": "checked\r\nby hand"}))).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(
            (errors[0].field.as_str(), errors[0].code),
            ("state", ErrorCode::Required)
        );

        let (edit, reason) = parse_input(&input(json!({
            "state": "validated", "qualifier": "", "reason": "checked\r\nby hand"
        })))
        .unwrap();
        assert_eq!(edit.state, State::Validated);
        assert_eq!(edit.qualifier, None);
        assert_eq!(reason, "checked\nby hand");
    }
}
