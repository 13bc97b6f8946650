//! Catalog changes: an admin's change of one item's state, qualifier and evidence, and what
//! it would propose.

use mirante_domain::{Evidence, Item, Qualifier, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An admin's change of one item: the new state, qualifier and evidence (the whole list:
/// entries left out are removed), and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CatalogChangeInput {
    /// `validated`, `declared` or `desired`.
    #[serde(default)]
    pub state: String,
    /// `partial`, `in_progress`, `deferred`, `rejected`, `future`; empty or absent for none.
    #[serde(default)]
    pub qualifier: Option<String>,
    /// Every evidence entry the item keeps or gains, as in the catalog
    /// (`{"kind": "attestation", "by", "date", "what"}`, `probe`, `argocd`, `reference`).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub evidence: Vec<Value>,
    /// Why (required); shown on the request and in the pull request.
    #[serde(default)]
    pub reason: String,
}

/// An item's fields a catalog change sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ItemFields {
    /// Its state.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "validated"))]
    pub state: State,
    /// Its qualifier.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub qualifier: Option<Qualifier>,
    /// Its evidence.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub evidence: Vec<Evidence>,
}

impl ItemFields {
    /// The fields of a catalog item as they are.
    pub fn of(item: &Item) -> Self {
        ItemFields {
            state: item.state,
            qualifier: item.qualifier,
            evidence: item.evidence.to_vec(),
        }
    }
}

/// What a catalog change would propose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogChangePreview {
    /// The item's id.
    pub item: String,
    /// Its name.
    pub name: String,
    /// Its catalog file, as a path in the monorepo.
    pub file: String,
    /// The branch compared against.
    pub base: String,
    /// The fields now, on the base branch.
    pub from: ItemFields,
    /// The fields after the change.
    pub to: ItemFields,
    /// A unified diff of the file against the base branch.
    pub diff: String,
    /// The reason given.
    pub reason: String,
}
