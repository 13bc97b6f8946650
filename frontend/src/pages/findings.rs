//! The consistency lint's findings, by severity, each linking to its item (admins).

use fluent_templates::fluent_bundle::FluentValue;
use leptos::prelude::*;
use leptos_meta::Title;
use mirante_domain::{
    State,
    lint::{Code, Finding, Severity},
};

use crate::{
    api::roadmap::get_findings,
    components::{Wait, loaded, state_key},
    i18n::{Lang, t, t_args, use_i18n},
};

pub(crate) fn severity_key(s: Severity) -> &'static str {
    match s {
        Severity::Error => "severity-error",
        Severity::Warning => "severity-warning",
        Severity::Info => "severity-info",
    }
}

/// Label of one finding's severity.
pub(crate) fn severity_one_key(s: Severity) -> &'static str {
    match s {
        Severity::Error => "severity-one-error",
        Severity::Warning => "severity-one-warning",
        Severity::Info => "severity-one-info",
    }
}

/// Names of the values a finding's message may use; Fluent takes them as `'static` keys.
const ARG_NAMES: [&str; 12] = [
    "by",
    "date",
    "age",
    "days",
    "url",
    "path",
    "key",
    "dependency",
    "state",
    "error",
    "reason",
    "app",
];

/// The finding's message in the reader's language, from its code and values.
pub(crate) fn message(lang: Lang, f: &Finding) -> String {
    let args: Vec<(&'static str, FluentValue<'static>)> = ARG_NAMES
        .iter()
        .map(|&k| {
            let v = f.args.get(k).cloned().unwrap_or_default();
            // A state is named in the reader's language.
            let v = match (k, State::parse(&v)) {
                ("state", Some(s)) => t(lang, state_key(s)).to_lowercase(),
                _ => v,
            };
            (k, v.into())
        })
        .collect();
    // A claim about one setting names it; a claim about a whole file does not.
    let key = if f.code == Code::DeclaredNotReal && f.args.contains_key("key") {
        "finding-declared-not-real-key".to_owned()
    } else {
        format!("finding-{}", f.code.as_str())
    };
    t_args(lang, &key, &args)
}

/// The findings page.
#[component]
pub fn FindingsPage() -> impl IntoView {
    let i18n = use_i18n();
    let data = Resource::new(|| (), |_| get_findings());
    view! {
        <Title text=move || t(i18n.lang(), "nav-findings")/>
        <header class="page-head">
            <h1>{i18n.tr("findings-title")}</h1>
            <p class="lead">{i18n.tr("findings-lead")}</p>
        </header>
        {loaded(Wait::Placeholder, data, move |page| {
            let names = page.names.clone();
            let name_of = move |id: &str| {
                names
                    .iter()
                    .find(|(i, _)| i == id)
                    .map_or_else(|| id.to_owned(), |(_, n)| n.clone())
            };
            let counts = Severity::ALL.map(|s| {
                (s, page.findings.iter().filter(|f| f.severity == s).count())
            });
            view! {
                <section class="totals findings-totals">
                    {counts
                        .into_iter()
                        .map(|(s, n)| {
                            view! {
                                <a class=format!("total-card sev-{}", s.as_str()) href=format!("#sev-{}", s.as_str())>
                                    <span class="total-n">{n}</span>
                                    <span class="total-label">{move || t(i18n.lang(), severity_key(s))}</span>
                                </a>
                            }
                        })
                        .collect_view()}
                </section>
                {page.findings.is_empty().then(|| view! { <p class="callout">{i18n.tr("findings-none")}</p> })}
                {Severity::ALL
                    .into_iter()
                    .map(|s| {
                        let of: Vec<Finding> = page
                            .findings
                            .iter()
                            .filter(|f| f.severity == s)
                            .cloned()
                            .collect();
                        let name_of = name_of.clone();
                        (!of.is_empty())
                            .then(|| {
                                view! {
                                    <section class=format!("findings sev-{}", s.as_str()) id=format!("sev-{}", s.as_str())>
                                        <h2>{move || t(i18n.lang(), severity_key(s))}</h2>
                                        <ul class="finding-list">
                                            {of
                                                .into_iter()
                                                .map(|f| {
                                                    let name = name_of(&f.item);
                                                    let code = f.code.as_str();
                                                    let f2 = f.clone();
                                                    view! {
                                                        <li class="finding">
                                                            <span class=format!("badge sev sev-{}", s.as_str())>
                                                                {move || t(i18n.lang(), severity_one_key(s))}
                                                            </span>
                                                            <a class="finding-item" href=format!("/items/{}", f.item)>{name}</a>
                                                            <span class="finding-msg">{move || message(i18n.lang(), &f2)}</span>
                                                            <code class="finding-code">{code}</code>
                                                        </li>
                                                    }
                                                })
                                                .collect_view()}
                                        </ul>
                                    </section>
                                }
                            })
                    })
                    .collect_view()}
            }
                .into_any()
        })}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_finding_code_has_a_message_in_both_languages() {
        for code in Code::ALL {
            let f = Finding {
                severity: code.severity(),
                code,
                item: "traefik-sp-ha".into(),
                message: String::new(),
                args: [("path".to_owned(), "pulumi/Pulumi.sp.yaml".to_owned())].into(),
            };
            for lang in Lang::ALL {
                let text = message(lang, &f);
                let key = format!("finding-{}", code.as_str());
                assert!(!text.is_empty() && text != key, "{key} in {lang:?}: {text}");
            }
        }
    }

    #[test]
    fn messages_carry_the_finding_values() {
        let f = Finding {
            severity: Severity::Info,
            code: mirante_domain::lint::Code::DeclaredNotReal,
            item: "traefik-sp-ha".into(),
            message: String::new(),
            args: [("path".to_owned(), "pulumi/Pulumi.sp.yaml".to_owned())].into(),
        };
        let mut with_key = f.clone();
        with_key.args.insert("key".into(), "traefik-sp.ha".into());

        assert!(message(Lang::PtBr, &f).contains("pulumi/Pulumi.sp.yaml"));
        assert!(!message(Lang::En, &f).contains("key"));
        assert!(message(Lang::En, &with_key).contains("traefik-sp.ha"));
    }
}
