//! Small pieces shared by pages: state badges, the legend, section headings.

use leptos::prelude::*;
use mirante_domain::{Evidence, Priority, Qualifier, State, TaskKind, roadmap::Status};

use crate::i18n::{Lang, t, use_i18n};

/// Translation key of a state's label.
pub fn state_key(s: State) -> &'static str {
    match s {
        State::Validated => "state-validated",
        State::Declared => "state-declared",
        State::Desired => "state-desired",
    }
}

/// Translation key of a roadmap status.
pub fn status_key(s: Status) -> &'static str {
    match s {
        Status::Done => "status-done",
        Status::Ready => "status-ready",
        Status::Blocked => "status-blocked",
    }
}

/// Translation key of a state's one-sentence explanation.
pub fn state_help_key(s: State) -> &'static str {
    match s {
        State::Validated => "state-validated-help",
        State::Declared => "state-declared-help",
        State::Desired => "state-desired-help",
    }
}

/// Translation key of a qualifier's label.
pub fn qualifier_key(q: Qualifier) -> &'static str {
    match q {
        Qualifier::Partial => "qualifier-partial",
        Qualifier::InProgress => "qualifier-in_progress",
        Qualifier::Deferred => "qualifier-deferred",
        Qualifier::Rejected => "qualifier-rejected",
        Qualifier::Future => "qualifier-future",
    }
}

/// Translation key of a priority's label.
pub fn priority_key(p: Priority) -> &'static str {
    match p {
        Priority::Critical => "priority-critical",
        Priority::Mvp => "priority-mvp",
        Priority::Later => "priority-later",
        Priority::Normal => "priority-normal",
    }
}

/// A page title that depends on more than the language (a route parameter): reactive in the
/// browser, where the route can change under the page; on the server computed once while the
/// page renders, because the title is written after the render, outside the request's reactive
/// arena, where reading a signal panics.
pub fn page_title(text: impl Fn() -> String + Send + Sync + 'static) -> TextProp {
    #[cfg(feature = "ssr")]
    {
        TextProp::from(text())
    }
    #[cfg(not(feature = "ssr"))]
    {
        TextProp::from(text)
    }
}

/// A coloured badge naming the state, and the qualifier when there is one.
#[component]
pub fn StateBadge(
    state: State,
    #[prop(default = None)] qualifier: Option<Qualifier>,
) -> impl IntoView {
    let i18n = use_i18n();
    let class = format!("badge state-{}", state.as_str());
    view! {
        <span class=class title=move || t(i18n.lang(), state_help_key(state))>
            <span class="dot" aria-hidden="true"></span>
            {move || t(i18n.lang(), state_key(state))}
        </span>
        {qualifier.map(|q| {
            view! {
                <span class=format!("badge qualifier q-{}", q.as_str())>
                    {move || t(i18n.lang(), qualifier_key(q))}
                </span>
            }
        })}
    }
}

/// [`StateBadge`] written as HTML into `out`, for tables written as one fragment
/// ([`crate::pages::catalog::ItemTable`]). The same markup, attribute for attribute, as the
/// component's (a unit test compares them).
pub fn state_badge_html(out: &mut String, lang: Lang, state: State, qualifier: Option<Qualifier>) {
    use html_escape::{encode_double_quoted_attribute_to_string, encode_text_to_string};
    out.push_str("<span title=\"");
    encode_double_quoted_attribute_to_string(t(lang, state_help_key(state)), out);
    out.push_str("\" class=\"badge state-");
    out.push_str(state.as_str());
    out.push_str("\"><span class=\"dot\" aria-hidden=\"true\"></span>");
    encode_text_to_string(t(lang, state_key(state)), out);
    out.push_str("</span>");
    if let Some(q) = qualifier {
        out.push_str("<span class=\"badge qualifier q-");
        out.push_str(q.as_str());
        out.push_str("\">");
        encode_text_to_string(t(lang, qualifier_key(q)), out);
        out.push_str("</span>");
    }
}

/// A badge for a task's priority.
#[component]
pub fn PriorityBadge(priority: Option<Priority>) -> impl IntoView {
    let i18n = use_i18n();
    priority.map(|p| {
        let class = format!("badge priority p-{}", priority_key(p));
        view! { <span class=class>{move || t(i18n.lang(), priority_key(p))}</span> }
    })
}

/// The three states explained in one sentence each.
#[component]
pub fn Legend() -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <ul class="legend">
            {State::ALL
                .into_iter()
                .map(|s| {
                    view! {
                        <li class=format!("legend-{}", s.as_str())>
                            <StateBadge state=s/>
                            <span>{move || t(i18n.lang(), state_help_key(s))}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}

/// A list of pending tasks with priority and kind.
#[component]
pub fn TaskList(
    tasks: Vec<mirante_domain::Task>,
    /// Titles of what tasks wait for, by id; ids without a title are shown as they are.
    #[prop(default = Vec::new())]
    after_names: Vec<(String, String)>,
) -> impl IntoView {
    let i18n = use_i18n();
    if tasks.is_empty() {
        return view! { <p class="muted">{i18n.tr("none")}</p> }.into_any();
    }
    view! {
        <ul class="tasks">
            {tasks
                .into_iter()
                .map(|task| {
                    let decision = task.kind == TaskKind::Decision;
                    let after: Vec<String> = task
                        .after
                        .iter()
                        .map(|id| {
                            after_names
                                .iter()
                                .find(|(k, _)| k == id)
                                .map(|(_, title)| title.clone())
                                .unwrap_or_else(|| id.clone())
                        })
                        .collect();
                    view! {
                        <li id=format!("task-{}", task.id)>
                            <PriorityBadge priority=task.priority/>
                            {decision
                                .then(|| {
                                    view! {
                                        <span class="badge kind-decision">
                                            {i18n.tr("task-kind-decision")}
                                        </span>
                                    }
                                })}
                            <span class="task-title">{task.title.clone()}</span>
                            {(!after.is_empty())
                                .then(|| {
                                    view! {
                                        <span class="after">
                                            {i18n.tr("task-after")} " "
                                            {after.join(" · ")}
                                        </span>
                                    }
                                })}
                            {(!task.notes.is_empty())
                                .then(|| view! { <p class="notes">{task.notes.clone()}</p> })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

/// The ADR-style decisions table.
#[component]
pub fn DecisionTable(
    decisions: Vec<mirante_domain::Decision>,
    /// Where ADRs are read (the platform's `adr_url`); their names link there when set.
    #[prop(default = None)]
    adr_url: Option<String>,
) -> impl IntoView {
    let i18n = use_i18n();
    if decisions.is_empty() {
        return view! { <p class="muted">{i18n.tr("none")}</p> }.into_any();
    }
    // Each cell carries its column's name: on a phone the rows stack, one card per decision,
    // and the names stand above the cells they head.
    let labels = [
        i18n.tr("decision-topic"),
        i18n.tr("decision-decision"),
        i18n.tr("decision-rejected"),
        i18n.tr("decision-reason"),
        i18n.tr("decision-adr"),
    ];
    view! {
        <div class="table-wrap">
            <table class="decisions">
                <thead>
                    <tr>
                        <th>{i18n.tr("decision-topic")}</th>
                        <th>{i18n.tr("decision-decision")}</th>
                        <th>{i18n.tr("decision-rejected")}</th>
                        <th>{i18n.tr("decision-reason")}</th>
                        <th>{i18n.tr("decision-adr")}</th>
                    </tr>
                </thead>
                <tbody>
                    {decisions
                        .into_iter()
                        .map(|d| {
                            let refs: Vec<(String, Option<String>)> = d
                                .adrs
                                .iter()
                                .map(|a| {
                                    let link = adr_url
                                        .as_deref()
                                        .and_then(|t| mirante_domain::link::adr_link(t, a));
                                    (a.clone(), link)
                                })
                                .chain(d.refs.iter().map(|r| (r.clone(), None)))
                                .collect();
                            let empty = refs.is_empty();
                            view! {
                                <tr id=format!("decision-{}", d.id)>
                                    <td class="topic" data-label=labels[0]><InlineText text=d.topic.clone()/></td>
                                    <td data-label=labels[1]><InlineText text=d.decision.clone()/></td>
                                    <td class="rejected" data-label=labels[2]><InlineText text=d.rejected.clone()/></td>
                                    <td data-label=labels[3]><InlineText text=d.reason.clone()/></td>
                                    <td class="adr" data-label=labels[4]>
                                        {empty.then_some("—")}
                                        {refs
                                            .into_iter()
                                            .enumerate()
                                            .map(|(i, (name, link))| {
                                                view! {
                                                    {(i > 0).then_some(", ")}
                                                    {match link {
                                                        Some(href) => view! { <a href=href>{name}</a> }.into_any(),
                                                        None => name.into_any(),
                                                    }}
                                                }
                                            })
                                            .collect_view()}
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

/// Catalog text with its `code spans` (between backticks, as the catalog's authors write
/// names of repositories, files and commands) shown as code; a backtick without its pair stays
/// as written.
#[component]
pub fn InlineText(text: String) -> impl IntoView {
    code_spans(&text)
        .into_iter()
        .map(|(code, part)| {
            if code {
                view! { <code>{part}</code> }.into_any()
            } else {
                part.into_any()
            }
        })
        .collect_view()
}

/// `text` cut into plain and code parts (`true`), by pairs of backticks from the left.
pub fn code_spans(text: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    let plain = |out: &mut Vec<(bool, String)>, part: &str| {
        if part.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((false, last)) => last.push_str(part),
            _ => out.push((false, part.to_owned())),
        }
    };
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        plain(&mut out, &rest[..open]);
        let code = &rest[open + 1..open + 1 + len];
        if code.is_empty() {
            // An empty pair is no code span: shown as written.
            plain(&mut out, "``");
        } else {
            out.push((true, code.to_owned()));
        }
        rest = &rest[open + 2 + len..];
    }
    plain(&mut out, rest);
    out
}

/// One evidence entry.
#[component]
pub fn EvidenceView(evidence: Evidence) -> impl IntoView {
    let i18n = use_i18n();
    match evidence {
        Evidence::Reference { text, url } => view! {
            <li class="evidence">
                <span class="badge ev">{i18n.tr("evidence-reference")}</span>
                // The loader refuses other schemes; a value that reached the page some other way
                // still never becomes a `javascript:` or `data:` link.
                {match url {
                    Some(u) if mirante_domain::link::is_http_url(&u) => {
                        view! { <a href=u rel="noopener noreferrer">{text}</a> }.into_any()
                    }
                    _ => view! { <span>{text}</span> }.into_any(),
                }}
            </li>
        }
        .into_any(),
        Evidence::Attestation { by, date, what } => view! {
            <li class="evidence">
                <span class="badge ev">{i18n.tr("evidence-attestation")}</span>
                <span>{what}</span>
                <span class="muted">" — " {by} ", " {date}</span>
            </li>
        }
        .into_any(),
        Evidence::Probe { url, expect_status } => view! {
            <li class="evidence">
                <span class="badge ev">{i18n.tr("evidence-probe")}</span>
                <code>{url}</code>
                <span class="muted">" → " {expect_status}</span>
            </li>
        }
        .into_any(),
        Evidence::Argocd { app, instance } => view! {
            <li class="evidence">
                <span class="badge ev">{i18n.tr("evidence-argocd")}</span>
                <code>{app}</code>
                {instance.map(|i| view! { <span class="muted">" @ " {i}</span> })}
            </li>
        }
        .into_any(),
    }
}

/// How a page of data waits while its data loads again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The loading placeholder takes the page's place (`Suspense`): pages that load once.
    Placeholder,
    /// The page stays as it was until the new data is in (`Transition`): pages that follow
    /// filters or refresh themselves.
    Keep,
}

/// The skeleton every page of data shares: the loading placeholder while `data` loads, the
/// error box when the server function failed, otherwise `body` of what it answered.
pub fn loaded<T, F>(wait: Wait, data: Resource<Result<T, ServerFnError>>, body: F) -> AnyView
where
    T: Clone + Send + Sync + 'static,
    F: Fn(T) -> AnyView + Send + Sync + 'static,
{
    let body = std::sync::Arc::new(body);
    let content = move || {
        let body = std::sync::Arc::clone(&body);
        Suspend::new(async move {
            match data.await {
                Err(e) => view! { <LoadError message=e.to_string()/> }.into_any(),
                Ok(value) => body(value),
            }
        })
    };
    match wait {
        Wait::Placeholder => view! { <Suspense fallback=Loading>{content}</Suspense> }.into_any(),
        Wait::Keep => view! { <Transition fallback=Loading>{content}</Transition> }.into_any(),
    }
}

/// [`loaded`] for data that may name nothing: `None` is the "not found" page (and its 404).
pub fn found<T, F>(wait: Wait, data: Resource<Result<Option<T>, ServerFnError>>, body: F) -> AnyView
where
    T: Clone + Send + Sync + 'static,
    F: Fn(T) -> AnyView + Send + Sync + 'static,
{
    loaded(wait, data, move |value| match value {
        None => view! { <NotFound/> }.into_any(),
        Some(value) => body(value),
    })
}

/// A "loading" placeholder for suspended sections.
#[component]
pub fn Loading() -> impl IntoView {
    let i18n = use_i18n();
    view! { <p class="loading muted">{i18n.tr("loading")}</p> }
}

/// Shown when a server function fails.
#[component]
pub fn LoadError(message: String) -> impl IntoView {
    let i18n = use_i18n();
    view! {
        <div class="error-box" role="alert">
            <strong>{i18n.tr("error-loading")}</strong>
            <p>{message}</p>
        </div>
    }
}

/// Shown when an id names nothing in the catalog.
#[component]
pub fn NotFound() -> impl IntoView {
    let i18n = use_i18n();
    #[cfg(feature = "ssr")]
    if let Some(resp) = use_context::<leptos_axum::ResponseOptions>() {
        resp.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <section class="not-found">
            <h1>{i18n.tr("not-found-title")}</h1>
            <p>{i18n.tr("not-found-text")}</p>
            <a href="/catalog">{i18n.tr("nav-catalog")}</a>
        </section>
    }
}

/// A counter that goes up by itself while `moving()` says the page shows something still in
/// flight (a request being proposed, a resource being applied): a page puts it in its data's
/// source, so the data is fetched again and the page follows with no reload. The first checks
/// come after 2 s, then each wait is half as long again, up to 30 s; `moving()` answering
/// `false` (or `None`: not loaded) stops it. Browser only: effects do not run on the server.
pub fn refresh_while(moving: impl Fn() -> Option<bool> + Send + Sync + 'static) -> RwSignal<u32> {
    let tick = RwSignal::new(0u32);
    Effect::new(move |_| {
        if moving() == Some(true) {
            let n = tick.get_untracked().min(10);
            let wait = (2000.0 * 1.5f64.powi(n as i32)).min(30_000.0) as u64;
            // The next check is cancelled when the page goes away or the effect runs again,
            // so no fetch starts for a page nobody looks at.
            if let Ok(next) = set_timeout_with_handle(
                move || tick.update(|t| *t += 1),
                std::time::Duration::from_millis(wait),
            ) {
                on_cleanup(move || next.clear());
            }
        }
    });
    tick
}

#[cfg(test)]
mod tests {
    use super::code_spans;

    /// The title is written after the render, on a thread whose reactive arena is not the
    /// request's; a thread that never entered one stands for it.
    #[cfg(feature = "ssr")]
    #[test]
    fn a_title_with_a_route_parameter_is_computed_while_the_page_renders() {
        use leptos::prelude::*;
        let owner = Owner::new();
        let title = owner.with(|| {
            let id = RwSignal::new(7);
            super::page_title(move || format!("Request #{}", id.get()))
        });
        let text = std::thread::spawn(move || title.get().to_string()).join();
        assert_eq!(text.ok().as_deref(), Some("Request #7"));
        drop(owner);
    }

    /// The fragment's badge is the component's, in both languages, with and without a
    /// qualifier (Leptos's hydration markers `<!>` aside).
    #[cfg(feature = "ssr")]
    #[test]
    fn the_badge_written_as_html_is_the_badge_the_component_renders() {
        use crate::i18n::{I18n, Lang};
        use leptos::prelude::*;
        use mirante_domain::{Qualifier, State};
        let owner = Owner::new();
        for lang in Lang::ALL {
            for state in State::ALL {
                for qualifier in std::iter::once(None).chain(Qualifier::ALL.map(Some)) {
                    let rendered = owner.with(|| {
                        provide_context(I18n::new(lang));
                        view! { <super::StateBadge state qualifier/> }.to_html()
                    });
                    let mut written = String::new();
                    super::state_badge_html(&mut written, lang, state, qualifier);
                    assert_eq!(
                        rendered.replace("<!>", ""),
                        written,
                        "{lang:?} {state:?} {qualifier:?}"
                    );
                }
            }
        }
        drop(owner);
    }

    fn spans(text: &str) -> Vec<(bool, String)> {
        code_spans(text)
    }

    fn want(parts: &[(bool, &str)]) -> Vec<(bool, String)> {
        parts.iter().map(|(c, s)| (*c, (*s).to_owned())).collect()
    }

    #[test]
    fn paired_backticks_become_code_and_the_rest_stays_text() {
        assert_eq!(
            spans("Monorepo `colabhd/devops` for all"),
            want(&[
                (false, "Monorepo "),
                (true, "colabhd/devops"),
                (false, " for all")
            ])
        );
        assert_eq!(spans("no code"), want(&[(false, "no code")]));
    }

    #[test]
    fn a_backtick_without_its_pair_or_an_empty_pair_is_shown_as_written() {
        assert_eq!(
            spans("a `b` c`"),
            want(&[(false, "a "), (true, "b"), (false, " c`")])
        );
        assert_eq!(spans("x``y"), want(&[(false, "x``y")]));
    }
}
