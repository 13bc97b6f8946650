//! Catalog edits (`mirante_domain::catalog_edit`) with hostile values and hostile files.
//!
//! - Any new evidence (texts, names, dates of any characters; URLs the catalog accepts)
//!   written into a known good file: the edit succeeds, and the edited file, edited again the same way, is unchanged
//!   (the edit read its own output back as the intended change).
//! - Any file text and any item id: an edit answers the new text or an error, never a panic,
//!   and what it answers is again edited into itself.

#![no_main]

use libfuzzer_sys::{
    arbitrary::{self, Arbitrary},
    fuzz_target,
};
use mirante_domain::{
    Evidence, Qualifier, State,
    catalog_edit::{ItemEdit, edit_item},
    link::is_http_url,
};

const FILE: &str = "\
# Layer 3: network.
items:
  - id: vyos-franca   # the edge router
    name: VyOS Franca
    kind: component
    layer: l3
    state: validated # checked in October
    evidence:
      - kind: reference
        text: VyOS Franca em produção
      # the probe runs from the SP site
      - kind: probe
        url: https://vyos.example.org/healthz

  - id: vyos-sp
    name: VyOS SP
    kind: component
    layer: l3
    state: desired
    qualifier: in_progress
";

#[derive(Debug, Arbitrary)]
enum NewEvidence {
    Reference(String, Option<String>),
    Probe(String, u16),
    Attestation(String, String, String),
    Argocd(String, Option<String>),
}

#[derive(Debug, Arbitrary)]
struct Input {
    /// `None`: the known good file; `Some`: a file of any text.
    file: Option<String>,
    id: String,
    state: u8,
    qualifier: Option<u8>,
    evidence: Vec<NewEvidence>,
}

fuzz_target!(|input: Input| {
    let edit = ItemEdit {
        state: State::ALL[usize::from(input.state) % State::ALL.len()],
        qualifier: input
            .qualifier
            .map(|q| Qualifier::ALL[usize::from(q) % Qualifier::ALL.len()]),
        evidence: input
            .evidence
            .into_iter()
            .map(|e| match e {
                NewEvidence::Reference(text, url) => Evidence::Reference { text, url },
                NewEvidence::Probe(url, expect_status) => Evidence::Probe { url, expect_status },
                NewEvidence::Attestation(by, date, what) => {
                    Evidence::Attestation { by, date, what }
                }
                NewEvidence::Argocd(app, instance) => Evidence::Argocd { app, instance },
            })
            .collect(),
    };
    // A URL that is not http(s) is refused before any edit (the catalog's own rule, which
    // reading the edited file back applies too): only texts may be anything.
    let urls_ok = edit.evidence.iter().all(|e| match e {
        Evidence::Reference { url: Some(url), .. } | Evidence::Probe { url, .. } => {
            is_http_url(url)
        }
        _ => true,
    });
    let (file, id) = match &input.file {
        None if !urls_ok => return,
        None => (FILE, "vyos-franca"),
        Some(file) => (file.as_str(), input.id.as_str()),
    };
    match edit_item(file, id, &edit) {
        Ok(out) => {
            let again = edit_item(&out, id, &edit)
                .unwrap_or_else(|e| panic!("the edited file does not take the edit again: {e}"));
            assert_eq!(again, out, "an edit applied twice changed the file twice");
        }
        Err(e) => assert!(
            input.file.is_some(),
            "the known good file refused the edit: {e}"
        ),
    }
});
