//! One translation mechanism for every user-visible string: Fluent files in `locales/`,
//! embedded at compile time, looked up by key in the reader's language.
//!
//! The language is chosen on the server (cookie, then `Accept-Language`) and written into
//! `<html lang>`, which the browser reads back at hydration so both sides render alike.
//! Catalog text is shown as written; only the portal's own words go through here.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{LazyLock, PoisonError, RwLock},
};

use fluent_templates::{LanguageIdentifier, Loader, langid};

/// The values [`t_args`] takes, for callers outside this crate.
pub use fluent_templates::fluent_bundle::FluentValue;
use leptos::prelude::*;

fluent_templates::static_loader! {
    static LOCALES = {
        locales: "./locales",
        fallback_language: "en",
        // The UI's languages are both left-to-right: Unicode isolation marks around arguments
        // would only get in the way of copying names and searching the page.
        customise: |bundle| bundle.set_use_isolating(false),
    };
}

/// Cookie that remembers the reader's choice of language.
pub const LANG_COOKIE: &str = "mirante_lang";

/// The languages the UI speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English.
    En = 0,
    /// Brazilian Portuguese.
    PtBr = 1,
}

static EN: LanguageIdentifier = langid!("en");
static PT_BR: LanguageIdentifier = langid!("pt-BR");

impl Lang {
    /// Every language, in the order the switch shows them.
    pub const ALL: [Lang; 2] = [Lang::PtBr, Lang::En];

    /// BCP 47 tag, as used in `<html lang>` and the cookie.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::PtBr => "pt-BR",
        }
    }

    /// Short label for the language switch.
    pub fn label(self) -> &'static str {
        match self {
            Lang::En => "EN",
            Lang::PtBr => "PT",
        }
    }

    /// Reads a tag such as `pt-BR`, `pt`, `en-GB`; `None` for languages the UI lacks.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        let primary = tag.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        match primary.as_str() {
            "pt" => Some(Lang::PtBr),
            "en" => Some(Lang::En),
            _ => None,
        }
    }

    fn id(self) -> &'static LanguageIdentifier {
        match self {
            Lang::En => &EN,
            Lang::PtBr => &PT_BR,
        }
    }
}

/// Chooses the language from the cookie value, then the `Accept-Language` header.
#[cfg(any(feature = "ssr", test))]
pub fn negotiate(cookie: Option<&str>, accept_language: Option<&str>) -> Lang {
    if let Some(lang) = cookie.and_then(Lang::from_tag) {
        return lang;
    }
    // accept-language orders the tags by their q weights and drops q=0.
    accept_language
        .map(accept_language::parse)
        .unwrap_or_default()
        .iter()
        .find_map(|tag| Lang::from_tag(tag))
        .unwrap_or(Lang::En)
}

/// The reader's language from a request's headers: the language cookie, then
/// `Accept-Language`. Used by the pages the server renders outside the Leptos app too.
#[cfg(feature = "ssr")]
pub fn from_headers(headers: &http::HeaderMap) -> Lang {
    let joined = |name: http::header::HeaderName| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(";")
    };
    let cookies = joined(http::header::COOKIE);
    let cookie = cookies.split(';').find_map(|c| {
        let (k, v) = c.trim().split_once('=')?;
        (k == LANG_COOKIE).then_some(v.to_string())
    });
    negotiate(
        cookie.as_deref(),
        Some(&joined(http::header::ACCEPT_LANGUAGE)),
    )
}

/// Translations without arguments already formatted, by key.
type Kept = RwLock<HashMap<Box<str>, Box<str>>>;

/// [`Kept`] translations by language ([`Lang`] as index).
static PLAIN: LazyLock<[Kept; 2]> = LazyLock::new(Default::default);

/// The translation of `key` in `lang`.
///
/// Words without arguments are formatted once per language and kept: a page repeats them (a
/// state badge on every row of the catalog list), and formatting a Fluent message costs about
/// 6,700 instructions, reading and copying a kept one about 1,100. Only keys the locales hold
/// are kept, so the cache never outgrows them.
pub fn t(lang: Lang, key: &str) -> String {
    let kept = &PLAIN[lang as usize];
    if let Some(text) = kept.read().unwrap_or_else(PoisonError::into_inner).get(key) {
        return text.to_string();
    }
    match LOCALES.try_lookup(lang.id(), key) {
        Some(text) => {
            kept.write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key.into(), text.as_str().into());
            text
        }
        None => LOCALES.lookup(lang.id(), key),
    }
}

/// The translation of `key` in `lang` with named arguments.
pub fn t_args(lang: Lang, key: &str, args: &[(&'static str, FluentValue<'static>)]) -> String {
    let map: HashMap<Cow<'static, str>, FluentValue<'static>> = args
        .iter()
        .map(|(k, v)| (Cow::Borrowed(*k), v.clone()))
        .collect();
    LOCALES.lookup_with_args(lang.id(), key, &map)
}

/// The reader's language, shared through context.
///
/// On the server the language is the request's and never changes while the page renders, so
/// it is read as a plain value: the page's title and `<html lang>` are written by the
/// integration after the render, outside the request's reactive arena, where reading a signal
/// panics (and, under load, could read another request's arena). In the browser it is a signal
/// the language switch sets. Reading it never panics: without context it is English.
#[derive(Clone, Copy)]
pub struct I18n {
    /// The language the page was rendered in.
    initial: Lang,
    /// The language now, in the browser.
    #[cfg(not(feature = "ssr"))]
    signal: Option<RwSignal<Lang>>,
}

/// The reader's language from context (English when there is none).
pub fn use_i18n() -> I18n {
    use_context::<I18n>().unwrap_or(I18n {
        initial: Lang::En,
        #[cfg(not(feature = "ssr"))]
        signal: None,
    })
}

impl I18n {
    /// A language to provide as context.
    pub fn new(lang: Lang) -> Self {
        I18n {
            initial: lang,
            #[cfg(not(feature = "ssr"))]
            signal: Some(RwSignal::new(lang)),
        }
    }

    /// The language now (tracked in reactive contexts, in the browser).
    pub fn lang(self) -> Lang {
        #[cfg(not(feature = "ssr"))]
        if let Some(lang) = self.signal.and_then(|s| s.try_get()) {
            return lang;
        }
        self.initial
    }

    /// A reactive translation of `key`, for use in views.
    pub fn tr(self, key: &'static str) -> impl Fn() -> String + Copy + Send + Sync + 'static {
        move || t(self.lang(), key)
    }

    /// Switches the language and remembers the choice.
    pub fn set(self, lang: Lang) {
        #[cfg(not(feature = "ssr"))]
        if let Some(signal) = self.signal {
            signal.try_set(lang);
        }
        // The server renders in the request's language; the switch happens in the browser.
        #[cfg(feature = "ssr")]
        let _ = lang;
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            if let Ok(doc) = document().dyn_into::<web_sys::HtmlDocument>() {
                let _ = doc.set_cookie(&lang_cookie(lang));
            }
        }
    }
}

/// The cookie that remembers `lang`.
pub fn lang_cookie(lang: Lang) -> String {
    format!(
        "{LANG_COOKIE}={}; Path=/; Max-Age=31536000; SameSite=Lax",
        lang.tag()
    )
}

/// Sets the language cookie on the response being rendered.
#[cfg(feature = "ssr")]
fn remember(lang: Lang) {
    if let (Some(resp), Ok(value)) = (
        use_context::<leptos_axum::ResponseOptions>(),
        http::HeaderValue::from_str(&lang_cookie(lang)),
    ) {
        resp.append_header(http::header::SET_COOKIE, value);
    }
}

/// The language to start with: on the server from the request, in the browser from the
/// `<html lang>` the server rendered.
pub fn initial_lang() -> Lang {
    #[cfg(feature = "ssr")]
    {
        use leptos::context::use_context;
        if let Some(parts) = use_context::<http::request::Parts>() {
            // `?lang=` is the language switch without JavaScript: it wins and is remembered.
            let asked = parts.uri.query().and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("lang="))
                    .and_then(Lang::from_tag)
            });
            if let Some(lang) = asked {
                remember(lang);
                return lang;
            }
            return from_headers(&parts.headers);
        }
    }
    #[cfg(feature = "hydrate")]
    {
        if let Some(tag) = document()
            .document_element()
            .and_then(|e| e.get_attribute("lang"))
        {
            return Lang::from_tag(&tag).unwrap_or(Lang::En);
        }
    }
    Lang::En
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The integration writes `<title>` and `<html lang>` after the render, on a thread whose
    /// reactive arena is not the request's; a thread that never entered one stands for it.
    #[cfg(feature = "ssr")]
    #[test]
    fn on_the_server_the_language_is_read_without_the_requests_reactive_arena() {
        let owner = Owner::new();
        let i18n = owner.with(|| I18n::new(Lang::PtBr));
        let read = std::thread::spawn(move || i18n.lang()).join();
        assert!(matches!(read, Ok(Lang::PtBr)), "{read:?}");
        drop(owner);
    }

    /// Calls `f` with every message of a language's locale files.
    fn each_message(lang_dir: &str, mut f: impl FnMut(&fluent_syntax::ast::Message<&str>)) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("locales")
            .join(lang_dir);
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let res = fluent_syntax::parser::parse(text.as_str()).expect("valid Fluent");
            for e in &res.body {
                if let fluent_syntax::ast::Entry::Message(m) = e {
                    f(m);
                }
            }
        }
    }

    fn keys(lang_dir: &str) -> BTreeSet<String> {
        let mut keys = BTreeSet::new();
        each_message(lang_dir, |m| {
            keys.insert(m.id.name.to_string());
        });
        keys
    }

    /// The string literal at the start of `s` (after whitespace), if there is one.
    fn literal(s: &str) -> Option<&str> {
        let s = s.trim_start().strip_prefix('"')?;
        s.find('"').map(|end| &s[..end])
    }

    /// Keys used in the sources: the literal argument of `tr(…)`, the literal second argument
    /// of `t(…)` / `t_args(…)`, `label="…"` props, and `=> "a-key"` arms of the `*_key` maps.
    fn used_keys() -> BTreeSet<String> {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut out = BTreeSet::new();
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let whole = std::fs::read_to_string(&path).unwrap();
                // Test code names keys in ways the scan would misread; it is not UI.
                let text = whole.split("#[cfg(test)]").next().unwrap_or_default();
                for (pos, _) in text.match_indices("tr(") {
                    // `i18n.tr(`, not `push_str(` or `attr(`.
                    let prev = text[..pos].chars().next_back().unwrap_or(' ');
                    if prev.is_alphanumeric() || prev == '_' {
                        continue;
                    }
                    out.extend(literal(&text[pos + 3..]).map(str::to_string));
                }
                for call in ["t(", "t_args("] {
                    for (pos, _) in text.match_indices(call) {
                        let prev = text[..pos].chars().next_back().unwrap_or(' ');
                        if prev.is_alphanumeric() || prev == '_' {
                            continue;
                        }
                        // Skip the first argument (a language expression) up to its comma.
                        let rest = &text[pos + call.len()..];
                        let mut depth = 0i32;
                        let comma = rest.char_indices().find_map(|(i, c)| {
                            match c {
                                '(' => depth += 1,
                                ')' if depth == 0 => return Some(None),
                                ')' => depth -= 1,
                                ',' if depth == 0 => return Some(Some(i)),
                                _ => {}
                            }
                            None
                        });
                        if let Some(Some(i)) = comma {
                            out.extend(literal(&rest[i + 1..]).map(str::to_string));
                        }
                    }
                }
                for marker in ["label=", "=> "] {
                    for (pos, _) in text.match_indices(marker) {
                        if let Some(k) = literal(&text[pos + marker.len()..]) {
                            let looks_like_key = k.contains('-')
                                && k.chars()
                                    .all(|c| c.is_ascii_lowercase() || c == '-' || c == '_');
                            if looks_like_key {
                                out.insert(k.to_string());
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Variables a pattern names, and whether it chooses its words by `$count`.
    fn variables(pattern: &fluent_syntax::ast::Pattern<&str>, vars: &mut BTreeSet<String>) -> bool {
        use fluent_syntax::ast::{Expression, InlineExpression, PatternElement};
        fn inline(e: &InlineExpression<&str>, vars: &mut BTreeSet<String>) -> bool {
            match e {
                InlineExpression::VariableReference { id } => {
                    vars.insert(id.name.to_owned());
                    false
                }
                InlineExpression::Placeable { expression } => expr(expression, vars),
                InlineExpression::FunctionReference { arguments, .. } => {
                    arguments.positional.iter().any(|a| inline(a, vars))
                        | arguments.named.iter().any(|a| inline(&a.value, vars))
                }
                _ => false,
            }
        }
        fn expr(e: &Expression<&str>, vars: &mut BTreeSet<String>) -> bool {
            match e {
                Expression::Inline(i) => inline(i, vars),
                Expression::Select { selector, variants } => {
                    let by_count = matches!(
                        selector,
                        InlineExpression::VariableReference { id } if id.name == "count"
                    );
                    inline(selector, vars);
                    variants
                        .iter()
                        .fold(by_count, |found, v| variables(&v.value, vars) | found)
                }
            }
        }
        pattern
            .elements
            .iter()
            .fold(false, |found, element| match element {
                PatternElement::Placeable { expression } => expr(expression, vars) | found,
                PatternElement::TextElement { .. } => found,
            })
    }

    /// Every message that chooses its words by `$count`, with the names of its variables.
    fn counted(lang_dir: &str) -> Vec<(String, BTreeSet<String>)> {
        let mut out = Vec::new();
        each_message(lang_dir, |m| {
            let mut vars = BTreeSet::new();
            if m.value.as_ref().is_some_and(|p| variables(p, &mut vars)) {
                out.push((m.id.name.to_owned(), vars));
            }
        });
        out
    }

    /// Portuguese puts 0 in the same plural category as 1 (CLDR: `i = 0..1`), so a message
    /// whose `[one]` variant says "1 item" or "Um" would say it of nothing too.
    #[test]
    fn every_counted_message_says_none_differently_from_one_in_both_languages() {
        let mut same = Vec::new();
        for (lang, dir) in [(Lang::En, "en"), (Lang::PtBr, "pt-BR")] {
            let messages = counted(dir);
            assert!(
                messages.len() > 10,
                "{dir}: {} counted messages",
                messages.len()
            );
            for (key, vars) in messages {
                let with = |count: i64| {
                    let args: Vec<(&'static str, FluentValue<'static>)> = vars
                        .iter()
                        .map(|v| {
                            let name: &'static str = Box::leak(v.clone().into_boxed_str());
                            let value = if v == "count" {
                                FluentValue::from(count)
                            } else {
                                FluentValue::from("x")
                            };
                            (name, value)
                        })
                        .collect();
                    t_args(lang, &key, &args)
                };
                let (none, one) = (with(0), with(1));
                if none == one {
                    same.push(format!("{dir} `{key}`: {none}"));
                }
            }
        }
        assert!(
            same.is_empty(),
            "the same for 0 and for 1:\n{}",
            same.join("\n")
        );
    }

    #[test]
    fn english_and_portuguese_have_the_same_keys() {
        let en = keys("en");
        let pt = keys("pt-BR");
        let only_en: Vec<_> = en.difference(&pt).collect();
        let only_pt: Vec<_> = pt.difference(&en).collect();
        assert!(only_en.is_empty(), "missing in pt-BR: {only_en:?}");
        assert!(only_pt.is_empty(), "missing in en: {only_pt:?}");
        assert!(en.len() > 20, "locales look empty: {}", en.len());
    }

    #[test]
    fn every_key_used_in_the_code_exists_in_both_languages() {
        let en = keys("en");
        let pt = keys("pt-BR");
        let used = used_keys();
        assert!(used.len() > 20, "key scan found too little: {used:?}");
        let missing: Vec<_> = used
            .iter()
            .filter(|k| !en.contains(*k) || !pt.contains(*k))
            .collect();
        assert!(
            missing.is_empty(),
            "keys used but not translated: {missing:?}"
        );
    }

    #[test]
    fn portuguese_speakers_get_portuguese_and_a_cookie_overrides_the_header() {
        assert_eq!(negotiate(None, Some("pt-BR,pt;q=0.9,en;q=0.8")), Lang::PtBr);
        assert_eq!(negotiate(None, Some("en-US,en;q=0.9,pt;q=0.5")), Lang::En);
        assert_eq!(negotiate(None, Some("de-DE, pt;q=0.4")), Lang::PtBr);
        assert_eq!(negotiate(None, Some("de-DE")), Lang::En);
        assert_eq!(negotiate(Some("en"), Some("pt-BR")), Lang::En);
        assert_eq!(negotiate(Some("xx"), Some("pt-BR")), Lang::PtBr);
        assert_eq!(negotiate(None, None), Lang::En);
    }

    #[test]
    fn a_kept_translation_reads_the_same_as_the_first_and_unknown_keys_are_not_kept() {
        for lang in Lang::ALL {
            let first = t(lang, "state-declared");
            assert_eq!(t(lang, "state-declared"), first);
            assert_eq!(first, LOCALES.lookup(lang.id(), "state-declared"));
        }
        assert_ne!(
            t(Lang::PtBr, "state-declared"),
            t(Lang::En, "state-declared")
        );
        let unknown = t(Lang::En, "no-such-key-here");
        assert_eq!(unknown, LOCALES.lookup(Lang::En.id(), "no-such-key-here"));
        let kept = PLAIN[Lang::En as usize].read().unwrap();
        assert!(kept.contains_key("state-declared"));
        assert!(!kept.contains_key("no-such-key-here"));
    }

    #[test]
    fn lookups_translate_and_interpolate() {
        assert_eq!(t(Lang::PtBr, "state-validated"), "Validado");
        assert_eq!(t(Lang::En, "state-validated"), "Validated");
        let s = t_args(Lang::En, "items-count", &[("count", 3.into())]);
        assert!(s.contains('3') && s.contains("items"), "{s}");
    }
}
