//! Test peers shared by the API tests (`api/`) and the browser tests (`browser/`): the fake
//! Argo CD ([`argocd`]), held to Argo CD's published API description. The API tests' own
//! helpers live in `api/helpers.rs`.

#[path = "argocd/fake.rs"]
pub mod argocd;

/// A request's query parameters, decoded, in order; one given twice is there twice.
pub fn query_pairs(uri: &axum::http::Uri) -> Vec<(String, String)> {
    uri.query()
        .map(|q| {
            url::form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .collect()
        })
        .unwrap_or_default()
}
