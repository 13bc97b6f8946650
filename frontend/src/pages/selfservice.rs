//! Self-service: the templates a person may use, a template's form, the preview of the files
//! a request would propose, and (for admins) the templates that did not load.
//!
//! The form is a GET form to the preview page, so it works without JavaScript; after
//! hydration it is checked in the browser with the domain's `validate` before leaving the
//! page. The server checks again and is the authority: its field errors come back next to the
//! fields. Submitting is a POST form to a server function that goes on to the request's page.

use leptos::{ev::SubmitEvent, form::ActionForm, prelude::*};
use leptos_meta::Title;
use leptos_router::{
    NavigateOptions,
    hooks::{use_navigate, use_params_map, use_query_map},
    params::ParamsMap,
};
use mirante_domain::{
    Role,
    request::RequestState,
    selfservice::{
        CatalogContext, DEFAULT_MAX_LENGTH, ErrorCode, FieldError, Format, Localized, OptionSource,
        ParamType, Parameter, validate,
    },
};
use serde_json::Value;

use crate::{
    api::get_viewer,
    api::selfservice::{
        FileStatus, GpuCapacity, Preview, PreviewFile, PreviewPage, Refusal, SubmitRequest,
        TemplateForm, get_template_form, initial_fields, list_template_problems,
        list_template_updates, list_templates, preview_request, values_from_fields,
    },
    components::{LoadError, Loading, Wait, found, loaded},
    i18n::{I18n, Lang, t, t_args, use_i18n},
};

/// Text in the reader's language.
fn loc(i18n: I18n, text: &Localized) -> String {
    text.get(i18n.lang().tag()).to_owned()
}

/// Translation key of a request state's label.
pub fn request_state_key(s: RequestState) -> &'static str {
    match s {
        RequestState::Submitted => "req-state-submitted",
        RequestState::AwaitingApproval => "req-state-awaiting_approval",
        RequestState::Approved => "req-state-approved",
        RequestState::Rejected => "req-state-rejected",
        RequestState::Proposing => "req-state-proposing",
        RequestState::Proposed => "req-state-proposed",
        RequestState::Merged => "req-state-merged",
        RequestState::Closed => "req-state-closed",
        RequestState::Failed => "req-state-failed",
    }
}

/// Translation key of a refused value's explanation.
pub fn field_error_key(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::NotAnObject => "ss-err-not_an_object",
        ErrorCode::UnknownField => "ss-err-unknown_field",
        ErrorCode::Required => "ss-err-required",
        ErrorCode::WrongType => "ss-err-wrong_type",
        ErrorCode::TooSmall => "ss-err-too_small",
        ErrorCode::TooLarge => "ss-err-too_large",
        ErrorCode::TooShort => "ss-err-too_short",
        ErrorCode::TooLong => "ss-err-too_long",
        ErrorCode::NotInEnum => "ss-err-not_in_enum",
        ErrorCode::Pattern => "ss-err-pattern",
        ErrorCode::NotDnsLabel => "ss-err-not_dns_label",
        ErrorCode::NotExternalUrl => "ss-err-not_external_url",
        ErrorCode::ForbiddenCharacter => "ss-err-forbidden_character",
        ErrorCode::NotAnOption => "ss-err-not_an_option",
        ErrorCode::ExceedsCapacity => "ss-err-exceeds_capacity",
        ErrorCode::NotOnCluster => "ss-err-not_on_cluster",
        ErrorCode::ExceedsFreeCapacity => "ss-err-exceeds_free_capacity",
        ErrorCode::TooFewItems => "ss-err-too_few_items",
        ErrorCode::TooManyItems => "ss-err-too_many_items",
        ErrorCode::DuplicateItem => "ss-err-duplicate_item",
        ErrorCode::UnsafePath => "ss-err-unsafe_path",
        ErrorCode::InvalidCatalog => "ss-err-invalid_catalog",
        ErrorCode::NeedsVerifiableEvidence => "ss-err-needs_verifiable_evidence",
    }
}

/// The arguments the messages of refused values use.
const ERROR_ARGS: &[&str] = &[
    "allocated",
    "allowed",
    "capacity",
    "character",
    "cluster",
    "count",
    "detail",
    "expected",
    "field",
    "free",
    "got",
    "holders",
    "index",
    "length",
    "max_items",
    "max_length",
    "maximum",
    "min_items",
    "min_length",
    "minimum",
    "option",
    "pattern",
    "source",
    "value",
];

/// A refused value explained in the reader's language, with the numbers and names of its
/// arguments (a list is shown comma-separated; an item index counts from 1).
pub fn field_error_text(lang: Lang, e: &FieldError) -> String {
    let args: Vec<(
        &'static str,
        fluent_templates::fluent_bundle::FluentValue<'static>,
    )> = e
        .args
        .iter()
        .filter_map(|(k, v)| Some((ERROR_ARGS.iter().find(|a| **a == k)?, v)))
        .map(|(k, v)| {
            let value = match (*k, v) {
                ("index", Value::Number(n)) => (n.as_f64().unwrap_or_default() + 1.0).into(),
                (_, Value::Number(n)) => n.as_f64().unwrap_or_default().into(),
                (_, Value::String(s)) => s.clone().into(),
                (_, Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(", ")
                    .into(),
                (_, other) => other.to_string().into(),
            };
            (*k, value)
        })
        .collect();
    // A template that says what its pattern asks for is read in its own words.
    let hint = (e.code == ErrorCode::Pattern)
        .then(|| e.args.get("hint"))
        .flatten()
        .and_then(|h| h.get(lang.tag()).or_else(|| h.get("en")))
        .and_then(Value::as_str);
    let text = match hint {
        Some(words) => t_args(
            lang,
            "ss-err-pattern-words",
            &[("words", words.to_owned().into())],
        ),
        None => t_args(lang, field_error_key(e.code), &args),
    };
    match e.args.get("index").and_then(Value::as_u64) {
        Some(i) => format!("{} {}: {text}", t(lang, "ss-item"), i + 1),
        None => text,
    }
}

/// `0 / 1 GPUs free` in the reader's language.
pub fn gpus_free_text(lang: Lang, c: &GpuCapacity) -> String {
    t_args(
        lang,
        "ss-gpus-free",
        &[
            ("free", (c.free as f64).into()),
            ("total", (c.total as f64).into()),
        ],
    )
}

/// A time as the pages show it: `2026-11-30 14:05 UTC`.
pub fn short_time(at: &chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A coloured badge naming a request's state.
#[component]
pub fn RequestStateBadge(state: RequestState) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <span class=format!("badge req-state req-{}", state.as_str()) data-state=state.as_str()>
            {move || t(i18n.lang(), request_state_key(state))}
        </span>
    }
}

/// The "needs approval" badge.
#[component]
pub fn ApprovalBadge(needs_approval: bool) -> impl IntoView {
    let i18n = use_i18n();
    needs_approval.then(|| {
        view! { <span class="badge needs-approval">{i18n.tr("ss-needs-approval")}</span> }
    })
}

/// The catalogue of templates the viewer may use.
#[component]
pub fn TemplatesPage() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| list_templates());
    let viewer = Resource::new(|| (), |_| get_viewer());
    view! {
        <Title text=move || t(i18n.lang(), "nav-self-service")/>
        <header class="page-head">
            <h1>{i18n.tr("ss-title")}</h1>
            <p class="lead">{i18n.tr("ss-intro")}</p>
        </header>
        <Suspense fallback=Loading>
            {move || Suspend::new(async move {
                let admin = matches!(viewer.await, Ok(Some(v)) if v.role == Role::Admin);
                match data.await {
                    Err(e) => view! { <LoadError message=e.to_string()/> }.into_any(),
                    Ok(cards) if cards.is_empty() => {
                        view! { <p class="muted empty-list">{i18n.tr("ss-no-templates")}</p> }
                            .into_any()
                    }
                    Ok(cards) => view! {
                        <ul class="template-grid">
                            {cards
                                .into_iter()
                                .map(|c| {
                                    let title = c.localized_title();
                                    let description = c.localized_description();
                                    view! {
                                        <li class="template-card card" data-template=c.id.clone()>
                                            <h2>
                                                <a href=format!("/self-service/{}", c.id)>
                                                    {move || loc(i18n, &title)}
                                                </a>
                                            </h2>
                                            <p>{move || loc(i18n, &description)}</p>
                                            <div class="template-foot">
                                                <ApprovalBadge needs_approval=c.needs_approval/>
                                                <a class="button" href=format!("/self-service/{}", c.id)>
                                                    {i18n.tr("ss-start")}
                                                </a>
                                            </div>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                        <p class="muted page-links">
                            <a href="/requests">{i18n.tr("ss-see-requests")}</a>
                            {admin
                                .then(|| {
                                    view! {
                                        <a href="/admin/templates">{i18n.tr("ss-problems-link")}</a>
                                    }
                                })}
                        </p>
                    }
                        .into_any(),
                }
            })}
        </Suspense>
    }
}

/// The query string of the address, in order, as (key, value) pairs.
pub fn query_pairs(map: &ParamsMap) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, _) in map.latest_values() {
        for v in map.get_all(k).unwrap_or_default() {
            out.push((k.to_string(), v));
        }
    }
    out
}

/// What the portal calls a catalog change's "template".
const CATALOG_CHANGE: &str = "catalog:change";

/// A request's title in the reader's language: its template's title (from `titles`), a
/// catalog change named as such, else the title it was stored with.
pub fn request_title(
    lang: Lang,
    titles: &[(String, Localized)],
    r: &crate::api::selfservice::RequestSummary,
) -> String {
    if r.template == CATALOG_CHANGE {
        let name = r
            .template_title
            .strip_prefix("Catalog change: ")
            .unwrap_or(&r.template_title);
        return t_args(
            lang,
            "req-catalog-change-title",
            &[("name", name.to_owned().into())],
        );
    }
    titles.iter().find(|(id, _)| *id == r.template).map_or_else(
        || r.template_title.clone(),
        |(_, l)| l.get(lang.tag()).to_owned(),
    )
}

/// The query field naming the ended request a form makes again.
pub const RESUBMITS: &str = "resubmits";

/// The ended request named in a form's query, if any.
fn resubmits_of(pairs: &[(String, String)]) -> Option<i64> {
    last_value(pairs, RESUBMITS).and_then(|v| v.parse().ok())
}

/// A template's form page.
#[component]
pub fn TemplateFormPage() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let query = use_query_map();
    let data = Resource::new(
        move || params.get().get("template").unwrap_or_default(),
        get_template_form,
    );
    view! {
        {found(Wait::Placeholder, data, move |form| {
            let pairs = query_pairs(&query.get_untracked());
            let fields = initial_fields(&form.manifest, &pairs);
            let resubmits = resubmits_of(&pairs);
            let title = form.card.localized_title();
            view! {
                <Title text=move || loc(i18n, &title)/>
                <TemplateHead form=form.clone() step="ss-step-form"/>
                <ParameterForm form fields errors=Vec::new() general=None resubmits/>
            }
                .into_any()
        })}
    }
}

/// Title, description and approval of a template, above its form or preview.
#[component]
fn TemplateHead(form: TemplateForm, step: &'static str) -> impl IntoView {
    let i18n = use_i18n();
    let title = form.card.localized_title();
    let description = form.card.localized_description();
    view! {
        <nav class="crumbs">
            <a href="/self-service">{i18n.tr("nav-self-service")}</a>
            " / "
            <span>{i18n.tr(step)}</span>
        </nav>
        <header class="page-head">
            <span class="kicker"><code>{form.card.id.clone()}</code></span>
            <h1>{move || loc(i18n, &title)}</h1>
            <p class="lead">{move || loc(i18n, &description)}</p>
            <ApprovalBadge needs_approval=form.card.needs_approval/>
        </header>
    }
}

/// The errors of one field, in the reader's language.
fn errors_for(lang: Lang, errors: &[FieldError], name: &str) -> Vec<String> {
    errors
        .iter()
        .filter(|e| e.field == name)
        .map(|e| field_error_text(lang, e))
        .collect()
}

/// A pattern as an HTML `pattern` attribute, when the browser reads it as the server does.
/// Browsers compile `pattern` in the strict `v` mode, where some characters in a class need
/// escaping; rather than translate, such patterns are left to the checks after hydration and
/// on the server.
fn html_pattern(p: &Parameter) -> Option<String> {
    if p.format == Some(Format::DnsLabel) {
        return Some("[a-z0-9](?:[a-z0-9\\-]*[a-z0-9])?".to_owned());
    }
    let pattern = p.pattern.as_deref()?;
    let chars: Vec<char> = pattern.chars().collect();
    let mut in_class = false;
    for (i, c) in chars.iter().enumerate() {
        match (in_class, c) {
            (_, '\\') => return None,
            (false, '[') => in_class = true,
            (true, ']') => in_class = false,
            (true, '-') => {
                let around = (i.checked_sub(1).map(|j| chars[j]), chars.get(i + 1));
                if !matches!(around, (Some(a), Some(b)) if a.is_ascii_alphanumeric() && b.is_ascii_alphanumeric())
                {
                    return None;
                }
            }
            (true, '(' | ')' | '[' | '{' | '}' | '/' | '|') => return None,
            _ => {}
        }
    }
    // Browsers anchor the pattern themselves; `^…$` inside is harmless.
    Some(pattern.to_owned())
}

/// The form generated from a template's parameters.
#[component]
pub fn ParameterForm(
    form: TemplateForm,
    fields: Vec<(String, String)>,
    errors: Vec<FieldError>,
    general: Option<String>,
    /// The ended request this form makes again, carried to the preview and the submit.
    #[prop(default = None)]
    resubmits: Option<i64>,
) -> impl IntoView {
    let i18n = use_i18n();
    let navigate = use_navigate();
    let id = form.card.id.clone();
    let action = format!("/self-service/{id}/preview");
    let values = RwSignal::new(fields);
    let tried = RwSignal::new(!errors.is_empty());
    let errors = RwSignal::new(errors);
    // After hydration the portal checks the fields itself and shows its own messages.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    let manifest = StoredValue::new(form.manifest.clone());
    let catalog = StoredValue::new(form.catalog.clone());
    let recheck = move || {
        let vals = values_from_fields(&manifest.read_value(), &values.get_untracked());
        let found = validate(&manifest.read_value(), &vals, &catalog.read_value())
            .err()
            .unwrap_or_default();
        errors.set(found.clone());
        found
    };
    let set_field = move |name: String, value: String| {
        values.update(|v| {
            v.retain(|(k, _)| *k != name);
            v.push((name, value));
        });
        if tried.get_untracked() {
            recheck();
        }
    };
    let action_for_submit = action.clone();
    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        tried.set(true);
        if recheck().is_empty() {
            let map: ParamsMap = values
                .get_untracked()
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .chain(resubmits.map(|id| (RESUBMITS.to_owned(), id.to_string())))
                .collect();
            navigate(
                &format!("{action_for_submit}{}", map.to_query_string()),
                NavigateOptions::default(),
            );
        } else if let Some(first) = errors.get_untracked().first() {
            // Move to the first refused field, so its error is read out and it can be fixed.
            if let Some(el) = document().get_element_by_id(&format!("f-{}", first.field)) {
                el.scroll_into_view();
                if let Ok(el) =
                    leptos::wasm_bindgen::JsCast::dyn_into::<leptos::web_sys::HtmlElement>(el)
                {
                    let _ = el.focus();
                }
            }
        }
    };
    let unplaced = move || {
        let lang = i18n.lang();
        let m = manifest.read_value();
        errors
            .get()
            .iter()
            .filter(|e| m.parameter(&e.field).is_none())
            .map(|e| field_error_text(lang, e))
            .collect::<Vec<_>>()
    };
    view! {
        {general.map(|g| view! { <div class="error-box" role="alert">{g}</div> })}
        {resubmits.map(|id| view! {
            <p class="callout resubmitting">
                {move || t_args(i18n.lang(), "ss-resubmitting", &[("id", id.to_string().into())])}
            </p>
        })}
        <form
            class="ss-form card"
            method="get"
            action=action
            novalidate=move || hydrated.get()
            on:submit=on_submit
        >
            {resubmits.map(|id| view! { <input type="hidden" name=RESUBMITS value=id/> })}
            {move || {
                let list = unplaced();
                (!list.is_empty())
                    .then(|| {
                        view! {
                            <div class="error-box" role="alert">
                                {list.into_iter().map(|m| view! { <p>{m}</p> }).collect_view()}
                            </div>
                        }
                    })
            }}
            {form
                .manifest
                .parameters
                .iter()
                .cloned()
                .map(|p| {
                    let initial = last_value(&values.get_untracked(), &p.name).unwrap_or_default();
                    view! {
                        <Field
                            parameter=p
                            initial
                            catalog=form.catalog.clone()
                            capacity=form.capacity.clone()
                            values
                            errors
                            hydrated=hydrated.into()
                            on_change=Callback::new(move |(n, v)| set_field(n, v))
                        />
                    }
                })
                .collect_view()}
            <div class="form-actions">
                <button type="submit" class="button primary">{i18n.tr("ss-preview-button")}</button>
                <a href="/self-service" class="button">{i18n.tr("ss-cancel")}</a>
            </div>
        </form>
    }
}

/// The value last given for the field `name` among a form's pairs (a field may repeat).
fn last_value(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// One field of the form: its input, help and errors.
#[component]
fn Field(
    parameter: Parameter,
    initial: String,
    catalog: CatalogContext,
    capacity: Vec<GpuCapacity>,
    values: RwSignal<Vec<(String, String)>>,
    errors: RwSignal<Vec<FieldError>>,
    hydrated: Signal<bool>,
    on_change: Callback<(String, String)>,
) -> impl IntoView {
    let i18n = use_i18n();
    let p = parameter;
    let name = p.name.clone();
    let input_id = format!("f-{name}");
    let error_id = format!("err-{name}");
    let required = p.required && p.default.is_none();
    let title = p.title.clone();
    let description = p.description.clone();
    let name_for_errors = name.clone();
    let field_errors = Memo::new(move |_| errors_for(i18n.lang(), &errors.get(), &name_for_errors));
    let invalid = move || !field_errors.get().is_empty();
    let n = name.clone();
    let on_input = move |ev: leptos::ev::Event| on_change.run((n.clone(), event_target_value(&ev)));
    let input = match (p.kind, p.options, &p.choices) {
        (ParamType::String, Some(source), _) if catalog.is_closed(source) => {
            let all = catalog.options(source).to_vec();
            // A namespace list narrowed to the cluster chosen in another field, as it changes.
            // Without JavaScript the list cannot follow that choice, so the page as served lists
            // every namespace with its cluster and the server checks the pair.
            let from = p.cluster_from.clone();
            let chosen_cluster = move || {
                let from = from.as_ref().filter(|_| hydrated.get())?;
                last_value(&values.get(), from).filter(|v| !v.is_empty())
            };
            let chosen_cluster = Memo::new(move |_| chosen_cluster());
            let options = Memo::new(move |_| match chosen_cluster.get() {
                Some(cluster) => all
                    .iter()
                    .filter(|o| o.detail == cluster)
                    .cloned()
                    .collect::<Vec<_>>(),
                None => all.clone(),
            });
            let none_here =
                move || source == OptionSource::OwnNamespaces && options.with(Vec::is_empty);
            let initial = initial.clone();
            view! {
                <select
                    id=input_id.clone()
                    name=name.clone()
                    required=required
                    aria-invalid=move || invalid().then_some("true")
                    aria-describedby=error_id.clone()
                    on:change=on_input
                >
                    <option value="" selected=initial.is_empty()>{i18n.tr("ss-choose")}</option>
                    {move || options
                        .get()
                        .into_iter()
                        .map(|o| {
                            let free = capacity.iter().find(|c| c.id == o.value).cloned();
                            let capacity = o.capacity.filter(|_| free.is_none());
                            let label = if o.detail.is_empty() || o.label.contains(&o.detail) {
                                o.label.clone()
                            } else {
                                format!("{} — {}", o.label, o.detail)
                            };
                            view! {
                                <option value=o.value.clone() selected=o.value == initial>
                                    {label}
                                    {capacity
                                        .map(|c| {
                                            move || {
                                                format!(
                                                    " ({})",
                                                    t_args(i18n.lang(), "ss-capacity", &[("count", c.into())]),
                                                )
                                            }
                                        })}
                                    {free
                                        .map(|c| {
                                            move || {
                                                format!(
                                                    " ({})",
                                                    gpus_free_text(i18n.lang(), &c),
                                                )
                                            }
                                        })}
                                </option>
                            }
                        })
                        .collect_view()}
                </select>
                <Show when=none_here>
                    <p class="help no-namespace">
                        {move || {
                            // "On this cluster" only once one is chosen; before, on any.
                            if chosen_cluster.with(Option::is_some) {
                                t(i18n.lang(), "ss-no-namespace")
                            } else {
                                t(i18n.lang(), "ss-no-namespace-any")
                            }
                        }}
                        " "
                        <a href="/self-service/gpu-workspace">{i18n.tr("ss-no-namespace-link")}</a>
                    </p>
                </Show>
            }
            .into_any()
        }
        (_, _, Some(choices)) if p.kind != ParamType::Array => {
            let choices = choices.clone();
            view! {
                <select
                    id=input_id.clone()
                    name=name.clone()
                    required=required
                    aria-invalid=move || invalid().then_some("true")
                    aria-describedby=error_id.clone()
                    on:change=on_input
                >
                    {(!required || initial.is_empty())
                        .then(|| view! { <option value="">{i18n.tr("ss-choose")}</option> })}
                    {choices
                        .into_iter()
                        .map(|c| {
                            let text = crate::api::selfservice::field_text(&c);
                            view! { <option value=text.clone() selected=text == initial>{text.clone()}</option> }
                        })
                        .collect_view()}
                </select>
            }
            .into_any()
        }
        (ParamType::Boolean, _, _) => {
            let n = name.clone();
            view! {
                <input
                    type="checkbox"
                    id=input_id.clone()
                    name=name.clone()
                    value="true"
                    checked=matches!(initial.as_str(), "true" | "on")
                    aria-describedby=error_id.clone()
                    on:change=move |ev| {
                        on_change.run((n.clone(), event_target_checked(&ev).to_string()))
                    }
                />
            }
            .into_any()
        }
        (ParamType::Integer | ParamType::Number, _, _) => {
            // The most a chosen catalog option allows (GPUs of the chosen cluster).
            let from = p.maximum_from.clone();
            let static_max = p.maximum;
            let capacity = move || {
                let chosen = last_value(&values.get(), from.as_ref()?)?;
                catalog
                    .clusters
                    .iter()
                    .chain(&catalog.gpu_clusters)
                    .find(|o| o.value == chosen)
                    .and_then(|o| o.capacity)
            };
            let max = move || {
                let cap = capacity().map(|c| c as f64);
                match (static_max, cap) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
                .map(|m| m.to_string())
            };
            view! {
                <input
                    type="number"
                    id=input_id.clone()
                    name=name.clone()
                    value=initial.clone()
                    min=p.minimum.map(|m| m.to_string())
                    max=max
                    step=if p.kind == ParamType::Integer { "1" } else { "any" }
                    required=required
                    inputmode=if p.kind == ParamType::Integer { "numeric" } else { "decimal" }
                    aria-invalid=move || invalid().then_some("true")
                    aria-describedby=error_id.clone()
                    on:input=on_input
                />
            }
            .into_any()
        }
        (ParamType::Array, _, _) => view! {
            <textarea
                id=input_id.clone()
                name=name.clone()
                rows="3"
                required=required
                aria-invalid=move || invalid().then_some("true")
                aria-describedby=error_id.clone()
                on:input=on_input
            >
                {initial.clone()}
            </textarea>
        }
        .into_any(),
        (ParamType::String, _, _) => view! {
            <input
                type="text"
                id=input_id.clone()
                name=name.clone()
                value=initial.clone()
                required=required
                minlength=p.min_length.map(|m| m.to_string())
                maxlength=p.max_length.unwrap_or(DEFAULT_MAX_LENGTH).to_string()
                pattern=html_pattern(&p)
                title=p.pattern_message.as_ref().map(|m| m.get(i18n.lang().tag()).to_owned())
                autocomplete="off"
                spellcheck="false"
                aria-invalid=move || invalid().then_some("true")
                aria-describedby=error_id.clone()
                on:input=on_input
            />
        }
        .into_any(),
    };
    let array = p.kind == ParamType::Array;
    view! {
        <div class="field" class:invalid=invalid data-field=name.clone()>
            <label for=input_id>
                {move || loc(i18n, &title)}
                {required.then(|| view! { <span class="req" aria-hidden="true">" *"</span> })}
            </label>
            {input}
            {description.map(|d| view! { <p class="help">{move || loc(i18n, &d)}</p> })}
            {array.then(|| view! { <p class="help">{i18n.tr("ss-one-per-line")}</p> })}
            <p class="field-error" id=error_id aria-live="polite">
                {move || field_errors.get().join(" · ")}
            </p>
        </div>
    }
}

/// The preview page: every file a request would add, with its diff, then Submit.
#[component]
pub fn PreviewPageView() -> impl IntoView {
    let i18n = use_i18n();
    let params = use_params_map();
    let query = use_query_map();
    let data = Resource::new(
        move || {
            (
                params.get().get("template").unwrap_or_default(),
                query_pairs(&query.get()),
            )
        },
        |(template, fields)| preview_request(template, fields),
    );
    view! {
        <Title text=move || t(i18n.lang(), "ss-step-preview")/>
        {found(Wait::Placeholder, data, move |page| {
            preview_body(page, query_pairs(&query.get_untracked()))
        })}
    }
}

fn preview_body(page: PreviewPage, fields: Vec<(String, String)>) -> AnyView {
    let PreviewPage {
        form,
        values,
        outcome,
        csrf_token,
        request_key,
    } = page;
    let resubmits = resubmits_of(&fields);
    let fields = initial_fields(&form.manifest, &fields);
    match outcome {
        Err(Refusal::Invalid(errors)) => view! {
            <TemplateHead form=form.clone() step="ss-step-form"/>
            <ParameterForm form fields errors general=None resubmits/>
        }
        .into_any(),
        Err(Refusal::Refused(message)) => view! {
            <TemplateHead form=form.clone() step="ss-step-form"/>
            <ParameterForm form fields errors=Vec::new() general=Some(message) resubmits/>
        }
        .into_any(),
        Ok(preview) => view! {
            <TemplateHead form=form.clone() step="ss-step-preview"/>
            <PreviewFiles form preview values fields csrf_token request_key resubmits/>
        }
        .into_any(),
    }
}

#[component]
fn PreviewFiles(
    form: TemplateForm,
    preview: Preview,
    values: String,
    fields: Vec<(String, String)>,
    csrf_token: String,
    request_key: String,
    resubmits: Option<i64>,
) -> impl IntoView {
    let i18n = use_i18n();
    let submit = ServerAction::<SubmitRequest>::new();
    let back: ParamsMap = fields
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .chain(resubmits.map(|id| (RESUBMITS.to_owned(), id.to_string())))
        .collect();
    let back = format!("/self-service/{}{}", form.card.id, back.to_query_string());
    let refused = move || match submit.value().get() {
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
    let at = preview.at.to_rfc3339();
    view! {
        <PreviewSummary preview/>
        <ActionForm action=submit attr:class="submit-bar">
            <input type="hidden" name="template" value=form.card.id.clone()/>
            <input type="hidden" name="values" value=values/>
            <input type="hidden" name="at" value=at/>
            <input type="hidden" name="csrf_token" value=csrf_token/>
            <input type="hidden" name="request_key" value=request_key/>
            {resubmits.map(|id| view! { <input type="hidden" name=RESUBMITS value=id/> })}
            {move || refused().map(|m| view! { <div class="error-box" role="alert">{m}</div> })}
            <button type="submit" class="button primary" disabled=move || submit.pending().get()>
                {i18n.tr("ss-submit")}
            </button>
            <a class="button" href=back>{i18n.tr("ss-back-to-edit")}</a>
        </ActionForm>
    }
}

/// What a preview proposes: the folder, the branch it is compared with, whether an admin
/// approves it first, and every file with its diff.
#[component]
pub fn PreviewSummary(preview: Preview) -> impl IntoView {
    let i18n = use_i18n();
    let count = preview.files.len();
    let needs_approval = preview.needs_approval;
    view! {
        <section class="preview card">
            <dl class="preview-facts">
                <dt>{i18n.tr("ss-target")}</dt>
                <dd><code class="target">{preview.target.clone()}</code></dd>
                <dt>{i18n.tr("ss-compared-with")}</dt>
                <dd><code>{preview.base.clone()}</code></dd>
                <dt>{i18n.tr("ss-approval")}</dt>
                <dd class="approval" data-needs-approval=needs_approval.to_string()>
                    {move || {
                        if needs_approval {
                            t(i18n.lang(), "ss-approval-required")
                        } else {
                            t(i18n.lang(), "ss-approval-none")
                        }
                    }}
                </dd>
            </dl>
            <p class="muted">
                {move || t_args(i18n.lang(), "ss-files-count", &[("count", count.into())])}
            </p>
        </section>
        <div class="files">
            {preview.files.into_iter().map(|f| view! { <FileDiff file=f/> }).collect_view()}
        </div>
    }
}

/// Translation key of a file status.
fn file_status_key(s: FileStatus) -> &'static str {
    match s {
        FileStatus::Added => "ss-file-added",
        FileStatus::Modified => "ss-file-modified",
        FileStatus::Unchanged => "ss-file-unchanged",
        FileStatus::Deleted => "ss-file-deleted",
    }
}

/// One file with its diff, coloured line by line.
#[component]
pub fn FileDiff(file: PreviewFile) -> impl IntoView {
    let i18n = use_i18n();
    let status = file.status;
    view! {
        <details class="file" open=true data-path=file.path.clone()>
            <summary>
                <code class="path">{file.path.clone()}</code>
                <span class=format!("badge file-{}", match status {
                    FileStatus::Added => "added",
                    FileStatus::Modified => "modified",
                    FileStatus::Unchanged => "unchanged",
                    FileStatus::Deleted => "deleted",
                })>{move || t(i18n.lang(), file_status_key(status))}</span>
            </summary>
            <DiffLines diff=file.diff/>
        </details>
    }
}

/// A unified diff with added, removed and hunk lines marked for colour.
#[component]
pub fn DiffLines(diff: String) -> impl IntoView {
    view! {
        <pre class="diff">
            {diff
                .lines()
                .map(|line| {
                    let class = if line.starts_with("+++") || line.starts_with("---") {
                        "meta"
                    } else if line.starts_with('+') {
                        "add"
                    } else if line.starts_with('-') {
                        "del"
                    } else if line.starts_with("@@") {
                        "hunk"
                    } else {
                        "ctx"
                    };
                    view! { <span class=class>{line.to_owned()} "\n"</span> }
                })
                .collect_view()}
        </pre>
    }
}

/// Templates that did not load, with file and line (admins).
#[component]
pub fn TemplateProblemsPage() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| list_template_problems());
    let updates = Resource::new(|| (), |_| list_template_updates());
    view! {
        <Title text=move || t(i18n.lang(), "ss-problems-title")/>
        <h1>{i18n.tr("ss-problems-title")}</h1>
        <section class="template-updates" aria-labelledby="updates-title">
            <h2 id="updates-title">{i18n.tr("ss-updates-title")}</h2>
            {loaded(Wait::Placeholder, updates, move |list| match list {
                list if list.is_empty() => {
                    view! { <p class="callout ok">{i18n.tr("ss-updates-none")}</p> }.into_any()
                }
                list => list
                    .into_iter()
                    .map(|u| {
                        let title = u.title.clone();
                        view! {
                            <div class="card template-update" data-template=u.template.clone()>
                                <h3>
                                    {move || loc(i18n, &title)}" "
                                    <code>{u.template.clone()}</code>" "
                                    <span class="muted">{u.version.clone()}</span>
                                </h3>
                                <ul>
                                    {u.resources
                                        .iter()
                                        .map(|d| {
                                            let r = &d.resource;
                                            let count = d.update.as_ref().map_or(0, |u| u.files.len());
                                            view! {
                                                <li data-id=r.id>
                                                    <a href=format!("/resources/{}", r.id)>
                                                        {r.namespace.clone().unwrap_or_else(|| r.target.clone())}
                                                    </a>
                                                    " · "{r.owner.clone()}" · "
                                                    {move || t_args(i18n.lang(), "ss-files-count", &[("count", count.into())])}
                                                </li>
                                            }
                                        })
                                        .collect_view()}
                                </ul>
                            </div>
                        }
                    })
                    .collect_view()
                    .into_any(),
            })}
        </section>
        <h2>{i18n.tr("ss-problems-heading")}</h2>
        <p class="lead">{i18n.tr("ss-problems-intro")}</p>
        {loaded(Wait::Placeholder, data, move |value| match value {
            problems if problems.is_empty() => {
                view! { <p class="callout ok">{i18n.tr("ss-problems-none")}</p> }.into_any()
            }
            problems => view! {
                <div class="table-wrap">
                    <table class="problems">
                        <thead>
                            <tr>
                                <th>{i18n.tr("ss-problem-where")}</th>
                                <th>{i18n.tr("ss-problem-what")}</th>
                            </tr>
                        </thead>
                        <tbody>
                            {problems
                                .into_iter()
                                .map(|d| {
                                    let place = if d.line == 0 {
                                        d.file.clone()
                                    } else if d.column == 0 {
                                        format!("{}:{}", d.file, d.line)
                                    } else {
                                        format!("{}:{}:{}", d.file, d.line, d.column)
                                    };
                                    view! {
                                        <tr>
                                            <td><code>{place}</code></td>
                                            <td>{d.message.clone()}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </tbody>
                    </table>
                </div>
            }
                .into_any(),
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameter(pattern: Option<&str>, format: Option<Format>) -> Parameter {
        serde_json::from_value(serde_json::json!({
            "name": "x", "type": "string", "title": {"pt-BR": "x", "en": "x"},
            "pattern": pattern, "format": format,
        }))
        .expect("a parameter")
    }

    #[test]
    fn patterns_the_browser_reads_alike_become_html_attributes_and_others_do_not() {
        let simple = parameter(Some("^[a-z](_?[a-z0-9])*$"), None);
        assert_eq!(
            html_pattern(&simple).as_deref(),
            Some("^[a-z](_?[a-z0-9])*$")
        );
        // A leading `-` in a class is an error in the browser's strict mode.
        let dash = parameter(Some("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"), None);
        assert_eq!(html_pattern(&dash), None);
        let escaped = parameter(Some("^s3://[a-z]+\\.x$"), None);
        assert_eq!(html_pattern(&escaped), None);
        let label = parameter(None, Some(Format::DnsLabel));
        assert!(html_pattern(&label).is_some());
        assert_eq!(html_pattern(&parameter(None, None)), None);
    }

    #[test]
    fn a_capacity_error_names_the_cluster_and_its_gpus_in_both_languages() {
        let e: FieldError = serde_json::from_value(serde_json::json!({
            "field": "gpus", "code": "exceeds_capacity", "message": "m",
            "args": {"capacity": 1, "option": "gpu-sp-01", "detail": "1× NVIDIA RTX A5000", "value": 2},
        }))
        .expect("an error");
        let strip = |s: String| s.replace(['\u{2068}', '\u{2069}'], "");
        assert_eq!(
            strip(field_error_text(Lang::En, &e)),
            "2 asked for, but gpu-sp-01 has 1 (1× NVIDIA RTX A5000)."
        );
        assert!(strip(field_error_text(Lang::PtBr, &e)).contains("gpu-sp-01 tem 1"));
    }

    #[test]
    fn a_pattern_error_reads_the_template_s_words_in_the_reader_s_language_not_the_expression() {
        let e: FieldError = serde_json::from_value(serde_json::json!({
            "field": "owner", "code": "pattern", "message": "m",
            "args": {"pattern": "^[a-z](_?[a-z0-9])*$", "hint": {"pt-BR": "Só minúsculas.", "en": "Lowercase only."}},
        }))
        .expect("an error");
        assert_eq!(
            field_error_text(Lang::En, &e),
            "Does not have the expected form: Lowercase only."
        );
        assert_eq!(
            field_error_text(Lang::PtBr, &e),
            "Não tem a forma esperada: Só minúsculas."
        );
        let bare: FieldError = serde_json::from_value(serde_json::json!({
            "field": "owner", "code": "pattern", "message": "m", "args": {"pattern": "^x$"},
        }))
        .expect("an error");
        assert!(
            field_error_text(Lang::En, &bare).contains("^x$"),
            "without words, the expression"
        );
    }

    #[test]
    fn an_error_on_an_array_item_counts_items_from_one() {
        let e: FieldError = serde_json::from_value(serde_json::json!({
            "field": "databases", "code": "duplicate_item", "message": "m", "args": {"index": 1},
        }))
        .expect("an error");
        assert!(field_error_text(Lang::En, &e).starts_with("Item 2: "));
    }
}
