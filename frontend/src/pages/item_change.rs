//! An admin's change of an item's state, qualifier and evidence, proposed as a pull request on
//! the monorepo: the "Propose a change" form on the item page (admins only) and its preview page
//! (`/items/{id}/change`) with the catalog file's diff and the Propose button.
//!
//! The form is a GET form to the preview page and Propose a POST form to a server function, so
//! both work without JavaScript, like the self-service form. The server decides who may do it
//! and checks every field; its errors come back above the form.

use leptos::{form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};
use mirante_domain::{Evidence, Item, Qualifier, Role, State, selfservice::FieldError};

use crate::{
    api::{
        catalog_change::{
            CatalogChangePreview, ChangePreviewPage, ItemFields, ProposeCatalogChange, field,
            preview_catalog_change,
        },
        get_viewer,
        selfservice::Refusal,
    },
    components::{Wait, found},
    i18n::{Lang, t, use_i18n},
    pages::selfservice::{DiffLines, field_error_text, query_pairs},
};

fn state_key(s: State) -> &'static str {
    match s {
        State::Validated => "state-validated",
        State::Declared => "state-declared",
        State::Desired => "state-desired",
    }
}

fn qualifier_key(q: Option<Qualifier>) -> &'static str {
    match q {
        None => "change-qualifier-none",
        Some(Qualifier::Partial) => "qualifier-partial",
        Some(Qualifier::InProgress) => "qualifier-in_progress",
        Some(Qualifier::Deferred) => "qualifier-deferred",
        Some(Qualifier::Rejected) => "qualifier-rejected",
        Some(Qualifier::Future) => "qualifier-future",
    }
}

/// An evidence entry in one line: its kind's label in `lang` and what it says.
fn evidence_line(lang: Lang, e: &Evidence) -> (String, String) {
    match e {
        Evidence::Reference { text, url } => (
            t(lang, "evidence-reference"),
            match url {
                Some(u) => format!("{text} ({u})"),
                None => text.clone(),
            },
        ),
        Evidence::Attestation { by, date, what } => (
            t(lang, "evidence-attestation"),
            format!("{what} — {by}, {date}"),
        ),
        Evidence::Probe { url, expect_status } => (
            t(lang, "evidence-probe"),
            format!("{url} → {expect_status}"),
        ),
        Evidence::Argocd { app, instance } => (
            t(lang, "evidence-argocd"),
            match instance {
                Some(i) => format!("{app} @ {i}"),
                None => app.clone(),
            },
        ),
    }
}

/// "Propose a change" on the item page: shown to admins only.
#[component]
pub fn ItemChange(item: Item) -> impl IntoView {
    let i18n = use_i18n();
    let id = item.id.to_string();
    let iac = item.iac;
    let current = ItemFields {
        state: item.state,
        qualifier: item.qualifier,
        evidence: item.evidence.into_vec(),
    };
    let viewer = Resource::new(|| (), |_| get_viewer());
    view! {
        <Suspense fallback=|| ()>
            {move || {
                let (id, current, iac) = (id.clone(), current.clone(), iac.clone());
                Suspend::new(async move {
                    let admin = matches!(viewer.await, Ok(Some(v)) if v.role == Role::Admin);
                    admin.then(|| view! {
                        <details class="card change-panel" id="propose-change">
                            <summary><h2>{i18n.tr("change-title")}</h2></summary>
                            <ChangeForm id current fields=Vec::new() errors=Vec::new() general=None iac/>
                        </details>
                    })
                })
            }}
        </Suspense>
    }
}

/// The change form: state, qualifier, the evidence to keep, a new attestation and the reason.
/// `fields` are the values sent last (empty: the item as it is).
#[component]
fn ChangeForm(
    id: String,
    current: ItemFields,
    fields: Vec<(String, String)>,
    errors: Vec<FieldError>,
    general: Option<String>,
    /// The item's IaC reference, shown with the evidence (the form does not change it).
    #[prop(default = None)]
    iac: Option<mirante_domain::IacRef>,
) -> impl IntoView {
    let i18n = use_i18n();
    let fresh = fields.is_empty();
    let state = field(&fields, "state")
        .and_then(State::parse)
        .unwrap_or(current.state);
    let qualifier = if fresh {
        current.qualifier
    } else {
        field(&fields, "qualifier").and_then(Qualifier::parse)
    };
    let kept: Vec<usize> = fields
        .iter()
        .filter(|(k, _)| k == "keep")
        .filter_map(|(_, v)| v.parse().ok())
        .collect();
    let value = |name: &str| field(&fields, name).unwrap_or_default().to_owned();
    // Sent again with any of these filled in: shown open, so nothing typed is hidden.
    let other_open = ["probe_url", "argocd_app", "ref_text"]
        .iter()
        .any(|n| !field(&fields, n).unwrap_or_default().trim().is_empty());
    // Each message in the reader's language, read in the view so it follows the switch.
    let messages: Vec<_> = errors
        .iter()
        .map(|e| {
            let e = e.clone();
            move || {
                let text = field_error_text(i18n.lang(), &e);
                if e.field.is_empty() || e.field == "catalog" {
                    text
                } else {
                    format!("{}: {text}", e.field)
                }
            }
        })
        .collect();
    view! {
        <form method="get" action=format!("/items/{id}/change") class="change-form">
            {general.map(|m| view! { <div class="error-box" role="alert">{m}</div> })}
            {(!messages.is_empty())
                .then(|| {
                    view! {
                        <div class="error-box" role="alert">
                            <ul>{messages.into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}</ul>
                        </div>
                    }
                })}
            <div class="field">
                <label for="change-state">{i18n.tr("change-state")}</label>
                <select id="change-state" name="state">
                    {State::ALL
                        .into_iter()
                        .map(|s| {
                            view! {
                                <option value=s.as_str() selected=s == state>
                                    {i18n.tr(state_key(s))}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <div class="field">
                <label for="change-qualifier">{i18n.tr("change-qualifier")}</label>
                <select id="change-qualifier" name="qualifier">
                    {std::iter::once(None)
                        .chain(Qualifier::ALL.into_iter().map(Some))
                        .map(|q| {
                            view! {
                                <option value=q.map_or("", |q| q.as_str()) selected=q == qualifier>
                                    {i18n.tr(qualifier_key(q))}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
            </div>
            <fieldset class="field">
                <legend>{i18n.tr("change-evidence")}</legend>
                {(current.evidence.is_empty() && iac.is_none())
                    .then(|| view! { <p class="muted">{i18n.tr("none")}</p> })}
                {iac
                    .map(|iac| {
                        view! {
                            <p class="iac">
                                <span class="badge ev">{i18n.tr("item-iac")}</span>
                                " "
                                <code>{String::from(iac.path)}</code>
                                {iac.key.map(|k| view! { " → " <code>{String::from(k)}</code> })}
                                " "
                                <span class="muted">{i18n.tr("change-iac-kept")}</span>
                            </p>
                        }
                    })}
                <ul class="keep-list">
                    {current
                        .evidence
                        .iter()
                        .enumerate()
                        .map(|(i, e)| {
                            let text = evidence_line(Lang::En, e).1;
                            let entry = e.clone();
                            let kind = move || evidence_line(i18n.lang(), &entry).0;
                            view! {
                                <li>
                                    <label>
                                        <input
                                            type="checkbox"
                                            name="keep"
                                            value=i.to_string()
                                            checked=fresh || kept.contains(&i)
                                        />
                                        " "
                                        <span class="badge ev">{kind}</span>
                                        " "
                                        <span>{text}</span>
                                    </label>
                                </li>
                            }
                        })
                        .collect_view()}
                </ul>
                <p class="help">{i18n.tr("change-keep-help")}</p>
            </fieldset>
            <fieldset class="field attestation">
                <legend>{i18n.tr("change-add-attestation")}</legend>
                <label for="change-by">{i18n.tr("change-by")}</label>
                <input id="change-by" type="text" name="by" value=value("by") autocomplete="off"/>
                <label for="change-date">{i18n.tr("change-date")}</label>
                <input id="change-date" type="date" name="date" value=value("date")/>
                <label for="change-what">{i18n.tr("change-what")}</label>
                <input id="change-what" type="text" name="what" value=value("what") autocomplete="off"/>
                <p class="help">{i18n.tr("change-attestation-help")}</p>
            </fieldset>
            <details class="field other-evidence" open=other_open>
                <summary>{i18n.tr("change-add-other")}</summary>
                <label for="change-probe-url">{i18n.tr("change-probe-url")}</label>
                <input id="change-probe-url" type="url" name="probe_url" value=value("probe_url") autocomplete="off"/>
                <label for="change-probe-status">{i18n.tr("change-probe-status")}</label>
                <input
                    id="change-probe-status"
                    type="number"
                    name="probe_status"
                    min="100"
                    max="599"
                    placeholder="200"
                    value=value("probe_status")
                />
                <label for="change-argocd-app">{i18n.tr("change-argocd-app")}</label>
                <input id="change-argocd-app" type="text" name="argocd_app" value=value("argocd_app") autocomplete="off"/>
                <label for="change-argocd-instance">{i18n.tr("change-argocd-instance")}</label>
                <input
                    id="change-argocd-instance"
                    type="text"
                    name="argocd_instance"
                    value=value("argocd_instance")
                    autocomplete="off"
                />
                <label for="change-ref-text">{i18n.tr("change-ref-text")}</label>
                <input id="change-ref-text" type="text" name="ref_text" value=value("ref_text") autocomplete="off"/>
                <label for="change-ref-url">{i18n.tr("change-ref-url")}</label>
                <input id="change-ref-url" type="url" name="ref_url" value=value("ref_url") autocomplete="off"/>
                <p class="help">{i18n.tr("change-other-help")}</p>
            </details>
            <div class="field">
                <label for="change-reason">
                    {i18n.tr("change-reason")}
                    <span class="req" aria-hidden="true">" *"</span>
                </label>
                <textarea id="change-reason" name="reason" rows="3" required=true maxlength="2000">
                    {value("reason")}
                </textarea>
                <p class="help">{i18n.tr("change-reason-help")}</p>
            </div>
            <button type="submit" class="button primary">{i18n.tr("change-preview")}</button>
        </form>
    }
}

/// The preview of a change: what changes, the file's diff, and Propose.
#[component]
pub fn ItemChangePage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let query = use_query_map();
    let data = Resource::new(
        move || {
            (
                params.get().get("id").unwrap_or_default(),
                query_pairs(&query.get()),
            )
        },
        |(id, fields)| preview_catalog_change(id, fields),
    );
    view! {
        <Title text=move || t(i18n.lang(), "change-title")/>
        {found(Wait::Placeholder, data, move |page| {
            change_body(page, query_pairs(&query.get_untracked()))
        })}
    }
}

fn change_body(page: ChangePreviewPage, fields: Vec<(String, String)>) -> AnyView {
    let ChangePreviewPage {
        item,
        name,
        current,
        input,
        outcome,
        csrf_token,
        request_key,
    } = page;
    let head = view! { <ChangeHead id=item.clone() name/> };
    match outcome {
        Err(Refusal::Invalid(errors)) => view! {
            {head}
            <ChangeForm id=item current fields errors general=None/>
        }
        .into_any(),
        Err(Refusal::Refused(message)) => view! {
            {head}
            <ChangeForm id=item current fields errors=Vec::new() general=Some(message)/>
        }
        .into_any(),
        Ok(change) => {
            let reason = field(&fields, "reason").unwrap_or_default().to_owned();
            view! {
                {head}
                <ChangeSummary change=change.clone() reason/>
                <div class="files">
                    <details class="file" open=true data-path=change.file.clone()>
                        <summary><code class="path">{change.file.clone()}</code></summary>
                        <DiffLines diff=change.diff.clone()/>
                    </details>
                </div>
                <ProposeForm id=item input csrf_token request_key/>
            }
            .into_any()
        }
    }
}

#[component]
fn ChangeHead(id: String, name: String) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <nav class="crumbs">
            <a href="/catalog">{i18n.tr("nav-catalog")}</a>
            " / "
            <a href=format!("/items/{id}")>{name.clone()}</a>
        </nav>
        <header class="page-head">
            <span class="kicker"><code>{id}</code></span>
            <h1>{i18n.tr("change-title")} ": " {name}</h1>
            <p class="lead">{i18n.tr("change-lead")}</p>
        </header>
    }
}

#[component]
fn ChangeSummary(change: CatalogChangePreview, reason: String) -> impl IntoView {
    let i18n = use_i18n();
    let (from, to) = (change.from, change.to);
    let added: Vec<Evidence> = to
        .evidence
        .iter()
        .filter(|e| !from.evidence.contains(e))
        .cloned()
        .collect();
    let removed: Vec<Evidence> = from
        .evidence
        .iter()
        .filter(|e| !to.evidence.contains(e))
        .cloned()
        .collect();
    // Read in the view, so the kind's label follows the language switch.
    let line = move |e: &Evidence| {
        let e = e.clone();
        move || {
            let (kind, text) = evidence_line(i18n.lang(), &e);
            format!("{kind}: {text}")
        }
    };
    view! {
        <section class="preview card">
            <dl class="preview-facts">
                <dt>{i18n.tr("change-file")}</dt>
                <dd><code class="target">{change.file.clone()}</code></dd>
                <dt>{i18n.tr("ss-compared-with")}</dt>
                <dd><code>{change.base.clone()}</code></dd>
                <dt>{i18n.tr("change-state")}</dt>
                <dd class="from-to">
                    {i18n.tr(state_key(from.state))} " → " <strong>{i18n.tr(state_key(to.state))}</strong>
                </dd>
                <dt>{i18n.tr("change-qualifier")}</dt>
                <dd class="from-to">
                    {i18n.tr(qualifier_key(from.qualifier))} " → "
                    <strong>{i18n.tr(qualifier_key(to.qualifier))}</strong>
                </dd>
                <dt>{i18n.tr("change-evidence")}</dt>
                <dd>
                    <ul class="evidence-changes">
                        {added.iter().map(|e| view! { <li class="add">"+ " {line(e)}</li> }).collect_view()}
                        {removed.iter().map(|e| view! { <li class="del">"− " {line(e)}</li> }).collect_view()}
                    </ul>
                    {(added.is_empty() && removed.is_empty())
                        .then(|| view! { <span class="muted">{i18n.tr("change-evidence-same")}</span> })}
                </dd>
                <dt>{i18n.tr("change-reason")}</dt>
                <dd class="reason">{reason}</dd>
                <dt>{i18n.tr("ss-approval")}</dt>
                <dd>{i18n.tr("change-no-approval")}</dd>
            </dl>
        </section>
    }
}

#[component]
fn ProposeForm(
    id: String,
    input: String,
    csrf_token: String,
    request_key: String,
) -> impl IntoView {
    let i18n = use_i18n();
    let propose = ServerAction::<ProposeCatalogChange>::new();
    let refused = move || match propose.value().get() {
        Some(Ok(Err(Refusal::Refused(m)))) => Some(m),
        Some(Ok(Err(Refusal::Invalid(errors)))) => Some(
            errors
                .iter()
                .map(|e| format!("{}: {}", e.field, field_error_text(i18n.lang(), e)))
                .collect::<Vec<_>>()
                .join(" · "),
        ),
        Some(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    view! {
        <ActionForm action=propose attr:class="submit-bar">
            <input type="hidden" name="item" value=id.clone()/>
            <input type="hidden" name="input" value=input/>
            <input type="hidden" name="csrf_token" value=csrf_token/>
            <input type="hidden" name="request_key" value=request_key/>
            {move || refused().map(|m| view! { <div class="error-box" role="alert">{m}</div> })}
            <button type="submit" class="button primary" disabled=move || propose.pending().get()>
                {i18n.tr("change-propose")}
            </button>
            <a class="button" href=format!("/items/{id}#propose-change")>{i18n.tr("change-back")}</a>
        </ActionForm>
    }
}
