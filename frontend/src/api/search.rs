//! The header search: one query over the catalog's items, decisions and pending tasks, and the
//! self-service templates and requests the reader may see, answered by kind.

use leptos::prelude::*;
use mirante_domain::selfservice::Localized;
use mirante_domain::{Qualifier, State};
use serde::{Deserialize, Serialize};

/// Most entries of one kind the page lists; the total says how many match.
pub const PER_KIND: usize = 10;

/// A catalog item found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundItem {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: State,
    /// Its qualifier.
    pub qualifier: Option<Qualifier>,
}

/// Anything else found: where it is read and what it is called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// Its page.
    pub href: String,
    /// Its name, in one language.
    pub title: String,
    /// Its name in both languages, for templates and requests whose template names them.
    pub localized: Option<Localized>,
    /// What else identifies it (an id, a folder).
    pub detail: String,
}

/// One kind's matches: the first [`PER_KIND`] and how many match in all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group<T> {
    /// The first matches.
    pub first: Vec<T>,
    /// How many match.
    pub total: usize,
}

impl<T> Default for Group<T> {
    fn default() -> Self {
        Group {
            first: Vec::new(),
            total: 0,
        }
    }
}

impl<T> Group<T> {
    #[cfg(feature = "ssr")]
    fn of(all: impl IntoIterator<Item = T>) -> Self {
        let (first, total) = mirante_domain::search::first_and_total(all, PER_KIND);
        Group { first, total }
    }
}

/// The search page: what was asked and what matches, by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchPage {
    /// The query as typed.
    pub q: String,
    /// Catalog items.
    pub items: Group<FoundItem>,
    /// Architecture decisions.
    pub decisions: Group<Found>,
    /// Pending tasks and open decisions.
    pub tasks: Group<Found>,
    /// Self-service templates the reader may use (signed in).
    pub templates: Group<Found>,
    /// Requests the reader may see (signed in: their own; an admin's all).
    pub requests: Group<Found>,
}

impl SearchPage {
    /// How many entries match, of every kind.
    pub fn total(&self) -> usize {
        self.items.total
            + self.decisions.total
            + self.tasks.total
            + self.templates.total
            + self.requests.total
    }
}

/// What matches `q`, by kind; empty for a blank query.
#[server(prefix = "/_fn", endpoint = "search")]
pub async fn search(q: String) -> Result<SearchPage, ServerFnError> {
    crate::ssr::authorize("search")?;
    use mirante_domain::search::{Query, catalog};

    let q: String = q.chars().take(200).collect();
    let Some(query) = Query::parse(&q) else {
        return Ok(SearchPage {
            q,
            ..SearchPage::default()
        });
    };
    let snap = super::snapshot()?;
    let hits = catalog(&snap, &query, PER_KIND);
    let mut page = SearchPage {
        q,
        items: Group {
            first: hits
                .items
                .first
                .iter()
                .map(|i| FoundItem {
                    id: i.id.to_string(),
                    name: i.name.to_string(),
                    state: i.state,
                    qualifier: i.qualifier,
                })
                .collect(),
            total: hits.items.total,
        },
        decisions: Group {
            first: hits
                .decisions
                .first
                .iter()
                .map(|d| Found {
                    href: format!("/decisions#decision-{}", d.id),
                    title: d.topic.clone(),
                    localized: None,
                    detail: d.decision.clone(),
                })
                .collect(),
            total: hits.decisions.total,
        },
        tasks: Group {
            first: hits
                .tasks
                .first
                .iter()
                .map(|t| Found {
                    href: format!("/layers/{}", t.layer),
                    title: t.title.clone(),
                    localized: None,
                    detail: t.id.clone(),
                })
                .collect(),
            total: hits.tasks.total,
        },
        ..SearchPage::default()
    };
    // Self-service: only what the reader may see; nothing when not signed in.
    if let (Some(service), Some(parts)) = (
        use_context::<crate::ssr::SelfServiceHandle>(),
        use_context::<http::request::Parts>(),
    ) {
        if let Ok(templates) = service.templates(&parts).await {
            page.templates = Group::of(
                templates
                    .into_iter()
                    .filter(|t| {
                        query.matches([
                            t.id.as_str(),
                            t.title.as_str(),
                            t.title_pt_br.as_str(),
                            t.description.as_str(),
                            t.description_pt_br.as_str(),
                        ])
                    })
                    .map(|t| Found {
                        href: format!("/self-service/{}", t.id),
                        localized: Some(Localized {
                            pt_br: t.title_pt_br.clone(),
                            en: t.title.clone(),
                        }),
                        title: t.title,
                        detail: t.id,
                    }),
            );
        }
        if let Ok(requests) = service.requests(&parts).await {
            page.requests = Group::of(
                requests
                    .into_iter()
                    .filter(|r| {
                        let number = format!("#{}", r.id);
                        query.matches([
                            number.as_str(),
                            r.template.as_str(),
                            r.template_title.as_str(),
                            r.target.as_str(),
                            r.author.as_str(),
                            r.author_name.as_str(),
                        ])
                    })
                    .map(|r| Found {
                        href: format!("/requests/{}", r.id),
                        title: format!("#{} {}", r.id, r.template_title),
                        localized: None,
                        detail: r.target,
                    }),
            );
        }
    }
    Ok(page)
}
