//! Server functions for an admin's change of a catalog item (state, qualifier, evidence),
//! proposed as a pull request on the monorepo. The form on the item page is a GET form to the
//! preview page, so it works without JavaScript; proposing is a POST form that goes on to the
//! request's page. Who may do it is decided by the server's self-service layer.

use leptos::prelude::*;
pub use mirante_api_types::catalog_change::{CatalogChangePreview, ItemFields};
use mirante_domain::Evidence;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::selfservice::Refusal;

/// The preview page of a change: the item as it is, the fields as sent, and the outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChangePreviewPage {
    /// The item's id.
    pub item: String,
    /// Its name.
    pub name: String,
    /// Its fields now, to fill the form again.
    pub current: ItemFields,
    /// The change as JSON, for the propose form.
    pub input: String,
    /// The diff, or why there is none.
    pub outcome: Result<CatalogChangePreview, Refusal>,
    /// The session's token for the propose form.
    pub csrf_token: String,
    /// The propose form's `Idempotency-Key`: proposing twice from this page makes one request.
    pub request_key: String,
}

/// The last value of a form field.
pub fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The form's fields as the API's input: `state`, `qualifier`, the current evidence entries
/// whose index is checked in `keep`, then a new attestation when any of `by`, `date`, `what`
/// is filled in, a probe when `probe_url` is (`probe_status`, 200 when empty), an Argo CD
/// application when `argocd_app` is (`argocd_instance`), a reference when `ref_text` is
/// (`ref_url`) — each checked by the server —, and `reason`.
pub fn change_input(current: &[Evidence], fields: &[(String, String)]) -> Value {
    let keep: Vec<usize> = fields
        .iter()
        .filter(|(k, _)| k == "keep")
        .filter_map(|(_, v)| v.parse().ok())
        .collect();
    let mut evidence: Vec<Value> = current
        .iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .filter_map(|(_, e)| serde_json::to_value(e).ok())
        .collect();
    let (by, date, what) = (
        field(fields, "by").unwrap_or_default().trim(),
        field(fields, "date").unwrap_or_default().trim(),
        field(fields, "what").unwrap_or_default().trim(),
    );
    if !(by.is_empty() && date.is_empty() && what.is_empty()) {
        evidence.push(json!({"kind": "attestation", "by": by, "date": date, "what": what}));
    }
    let text = |name: &str| field(fields, name).unwrap_or_default().trim().to_owned();
    let probe = text("probe_url");
    if !probe.is_empty() {
        // A status that is not a number goes as the text it is, for the server to refuse.
        let status = text("probe_status");
        let expect = match status.parse::<u16>() {
            Ok(n) => json!(n),
            Err(_) if status.is_empty() => json!(200),
            Err(_) => json!(status),
        };
        evidence.push(json!({"kind": "probe", "url": probe, "expect_status": expect}));
    }
    let app = text("argocd_app");
    if !app.is_empty() {
        let instance = Some(text("argocd_instance")).filter(|i| !i.is_empty());
        evidence.push(json!({"kind": "argocd", "app": app, "instance": instance}));
    }
    let reference = text("ref_text");
    if !reference.is_empty() {
        let url = Some(text("ref_url")).filter(|u| !u.is_empty());
        evidence.push(json!({"kind": "reference", "text": reference, "url": url}));
    }
    json!({
        "state": field(fields, "state").unwrap_or_default(),
        "qualifier": field(fields, "qualifier").unwrap_or_default(),
        "evidence": evidence,
        "reason": field(fields, "reason").unwrap_or_default(),
    })
}

#[cfg(feature = "ssr")]
fn service() -> Result<(crate::ssr::SelfServiceHandle, http::request::Parts), ServerFnError> {
    let service = use_context::<crate::ssr::SelfServiceHandle>()
        .ok_or_else(|| ServerFnError::new("self-service is not available"))?;
    let parts =
        use_context::<http::request::Parts>().ok_or_else(|| ServerFnError::new("no request"))?;
    Ok((service, parts))
}

/// What the form's fields would change in item `item`'s catalog file; `None` when there is no
/// such item. Refused fields answer 422 with every problem.
#[server(prefix = "/_fn", endpoint = "catalog-change-preview", input = leptos::server_fn::codec::Json)]
pub async fn preview_catalog_change(
    item: String,
    fields: Vec<(String, String)>,
) -> Result<Option<ChangePreviewPage>, ServerFnError> {
    crate::ssr::authorize("catalog-change-preview")?;
    use super::selfservice::SsError;
    let (service, parts) = service()?;
    let snapshot = use_context::<crate::ssr::PortalHandle>()
        .ok_or_else(|| ServerFnError::new("the catalog is not available"))?
        .snapshot();
    let Some(it) = snapshot.catalog().items.iter().find(|i| i.id == item) else {
        return Ok(None);
    };
    let current = ItemFields::of(it);
    let input = change_input(&current.evidence, &fields);
    let outcome = match service
        .preview_catalog_change(&parts, &item, input.clone())
        .await
    {
        Ok(view) => Ok(view),
        Err(SsError::Refused(r)) => {
            super::selfservice::set_status(match r {
                Refusal::Invalid(_) => http::StatusCode::UNPROCESSABLE_ENTITY,
                Refusal::Refused(_) => http::StatusCode::CONFLICT,
            });
            Err(r)
        }
        Err(SsError::NotFound) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(ChangePreviewPage {
        item: it.id.to_string(),
        name: it.name.to_string(),
        current,
        input: input.to_string(),
        outcome,
        csrf_token: super::selfservice::csrf(&parts),
        request_key: service.request_key(),
    }))
}

/// Proposes the previewed change, then goes to the request's page.
#[server(prefix = "/_fn", endpoint = "catalog-change")]
pub async fn propose_catalog_change(
    item: String,
    input: String,
    csrf_token: String,
    request_key: Option<String>,
) -> Result<Result<i64, Refusal>, ServerFnError> {
    crate::ssr::authorize("catalog-change")?;
    use super::selfservice::SsError;
    let (service, parts) = service()?;
    super::selfservice::check_csrf(&parts, &csrf_token)?;
    let input: Value = serde_json::from_str(&input)
        .map_err(|_| ServerFnError::new("the change is not valid JSON"))?;
    let key = request_key.filter(|k| !k.is_empty());
    match service
        .submit_catalog_change(&parts, &item, input, key.as_deref())
        .await
    {
        Ok(id) => {
            leptos_axum::redirect(&format!("/requests/{id}"));
            Ok(Ok(id))
        }
        Err(SsError::Refused(r)) => {
            super::selfservice::set_status(http::StatusCode::UNPROCESSABLE_ENTITY);
            Ok(Err(r))
        }
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn checked_entries_stay_and_a_filled_in_attestation_is_added() {
        let current = vec![
            Evidence::Reference {
                text: "doc".into(),
                url: None,
            },
            Evidence::Probe {
                url: "https://x/healthz".into(),
                expect_status: 200,
            },
        ];

        let input = change_input(
            &current,
            &fields(&[
                ("state", "declared"),
                ("qualifier", ""),
                ("keep", "1"),
                ("by", " ana "),
                ("date", "2026-11-30"),
                ("what", "restored a VM"),
                ("reason", "why"),
            ]),
        );

        assert_eq!(
            input,
            json!({
                "state": "declared",
                "qualifier": "",
                "evidence": [
                    {"kind": "probe", "url": "https://x/healthz", "expect_status": 200},
                    {"kind": "attestation", "by": "ana", "date": "2026-11-30", "what": "restored a VM"}
                ],
                "reason": "why"
            })
        );
    }

    #[test]
    fn a_probe_an_argo_cd_application_and_a_reference_are_added_when_their_first_field_is_filled() {
        let input = change_input(
            &[],
            &fields(&[
                ("state", "validated"),
                ("probe_url", " https://grafana.example.org/api/health "),
                ("probe_status", ""),
                ("argocd_app", "grafana"),
                ("argocd_instance", "sp"),
                ("ref_text", ""),
                ("ref_url", "https://ignored.example.org/"),
            ]),
        );

        assert_eq!(
            input["evidence"],
            json!([
                {"kind": "probe", "url": "https://grafana.example.org/api/health", "expect_status": 200},
                {"kind": "argocd", "app": "grafana", "instance": "sp"}
            ])
        );
        let odd = change_input(
            &[],
            &fields(&[("probe_url", "https://x/"), ("probe_status", "ok")]),
        );
        assert_eq!(
            odd["evidence"][0]["expect_status"], "ok",
            "left for the server to refuse"
        );
    }

    #[test]
    fn an_empty_attestation_adds_nothing_and_unchecked_entries_go() {
        let current = vec![Evidence::Reference {
            text: "doc".into(),
            url: None,
        }];

        let input = change_input(&current, &fields(&[("state", "desired"), ("by", "  ")]));

        assert_eq!(input["evidence"], json!([]));
    }
}
