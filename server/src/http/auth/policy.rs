//! Who may do what: the one place that decides, for every route, whether anonymous callers,
//! researchers or only admins may use it. The authentication layer asks [`decide`] for every
//! request. Rules about one object (which request a user sees, who decides) are the `may_*`
//! functions of `mirante_domain::access`, asked by the application services.
//!
//! A path missing from [`ROUTES`] is answered 404 before it reaches any handler or page (deny
//! by default), and another spelling of a known path is redirected to its one spelling
//! ([`route`]); a served route missing here makes the route-walk test fail, so each new route
//! needs a line. Server functions also run in-process while a page is rendered, where no
//! middleware sees them: each asks [`access`] with its own path before it answers.

use std::sync::LazyLock;

use axum::http::Method;
use mirante_domain::Role;

/// What a route requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone: probes, static assets, the sign-in routes.
    Public,
    /// The read-only catalog: anyone when `MIRANTE_PUBLIC_CATALOG=true`, otherwise signed-in
    /// users.
    Catalog,
    /// Any signed-in user (researcher or admin).
    SignedIn,
    /// Admins only.
    Admin,
}

/// What the caller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// No session, no token.
    Anonymous,
    /// A signed-in user with this role.
    User(Role),
}

impl Caller {
    /// What the policy sees of whoever authenticated the request, if anyone did.
    pub fn of(principal: Option<&mirante_domain::access::Principal>) -> Self {
        principal.map_or(Caller::Anonymous, |p| Caller::User(p.viewer.role))
    }
}

/// The outcome of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Go ahead.
    Allow,
    /// Sign in first (401, or a redirect to the sign-in page for HTML).
    SignIn,
    /// Signed in, but not allowed (403).
    Forbid,
}

/// Which methods a line of the table covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Methods {
    /// `GET` and `HEAD`.
    Read,
    /// `POST`.
    Post,
    /// `GET`, `HEAD` and `POST` (server functions answer both).
    ReadOrPost,
}

impl Methods {
    fn list(self) -> &'static [Method] {
        match self {
            Methods::Read => &[Method::GET, Method::HEAD],
            Methods::Post => &[Method::POST],
            Methods::ReadOrPost => &[Method::GET, Method::HEAD, Method::POST],
        }
    }

    fn covers(self, method: &Method) -> bool {
        let read = method == Method::GET || method == Method::HEAD;
        match self {
            Methods::Read => read,
            Methods::Post => method == Method::POST,
            Methods::ReadOrPost => read || method == Method::POST,
        }
    }
}

/// Every route of the server with what it requires. Paths use axum's syntax: `{name}` is one
/// segment, `{*rest}` the rest of the path.
pub const ROUTES: &[(Methods, &str, Access)] = &[
    // Probes and the hydration bundle.
    (Methods::Read, "/healthz", Access::Public),
    (Methods::Read, "/readyz", Access::Public),
    (Methods::Read, "/pkg/{*path}", Access::Public),
    // Sign-in and sign-out.
    (Methods::Read, "/auth/login", Access::Public),
    (Methods::Read, "/auth/callback", Access::Public),
    (Methods::Post, "/auth/dev", Access::Public),
    (Methods::Post, "/auth/logout", Access::Public),
    // The signed-in user and their API tokens.
    (Methods::Read, "/api/v1/me", Access::SignedIn),
    (Methods::Post, "/api/v1/me/notifications", Access::SignedIn),
    (Methods::Read, "/profile", Access::SignedIn),
    (Methods::Post, "/profile/tokens", Access::SignedIn),
    (Methods::Post, "/profile/notifications", Access::SignedIn),
    (
        Methods::Post,
        "/profile/tokens/{id}/revoke",
        Access::SignedIn,
    ),
    // The catalog API.
    (Methods::Read, "/api/v1/openapi.json", Access::Catalog),
    (Methods::Read, "/api/v1/items", Access::Catalog),
    (Methods::Read, "/api/v1/items/{id}", Access::Catalog),
    (Methods::Read, "/api/v1/items/{id}/history", Access::Catalog),
    // An admin's change of an item, proposed as a pull request.
    (Methods::Post, "/api/v1/items/{id}/changes", Access::Admin),
    (
        Methods::Post,
        "/api/v1/items/{id}/changes/preview",
        Access::Admin,
    ),
    (Methods::Read, "/api/v1/sites", Access::Catalog),
    (Methods::Read, "/api/v1/layers", Access::Catalog),
    (Methods::Read, "/api/v1/decisions", Access::Catalog),
    (Methods::Read, "/api/v1/tasks", Access::Catalog),
    (Methods::Read, "/api/v1/overview", Access::Catalog),
    (Methods::Read, "/api/v1/catalog", Access::Catalog),
    (Methods::Post, "/api/v1/catalog/reload", Access::Admin),
    (Methods::Read, "/api/v1/replicas", Access::Admin),
    // The notification outbox: what could not be delivered, and why.
    (Methods::Read, "/api/v1/notifications", Access::Admin),
    // Self-service: templates and requests (who sees which request is decided by
    // `may_view_request` and friends below), the admins' decisions and local merges, and
    // the forge webhook, whose signature is its credential.
    (Methods::Read, "/api/v1/templates", Access::SignedIn),
    (Methods::Read, "/api/v1/templates/{id}", Access::SignedIn),
    // Which resources a template's current version would change: admins.
    (
        Methods::Read,
        "/api/v1/templates/{id}/updates",
        Access::Admin,
    ),
    (Methods::Post, "/api/v1/requests/preview", Access::SignedIn),
    (Methods::Read, "/api/v1/requests", Access::SignedIn),
    (Methods::Post, "/api/v1/requests", Access::SignedIn),
    (Methods::Read, "/api/v1/requests/{id}", Access::SignedIn),
    (
        Methods::Read,
        "/api/v1/requests/{id}/change",
        Access::SignedIn,
    ),
    (
        Methods::Post,
        "/api/v1/requests/{id}/approve",
        Access::Admin,
    ),
    (Methods::Post, "/api/v1/requests/{id}/reject", Access::Admin),
    (Methods::Post, "/api/v1/requests/{id}/merge", Access::Admin),
    // The author (or an admin: `may_withdraw_request`) takes a request back.
    (
        Methods::Post,
        "/api/v1/requests/{id}/withdraw",
        Access::SignedIn,
    ),
    // …and makes an ended one again (`may_withdraw_request` too).
    (
        Methods::Post,
        "/api/v1/requests/{id}/resubmit",
        Access::SignedIn,
    ),
    // GPU capacity: what every researcher sees next to the GPU form.
    (Methods::Read, "/api/v1/capacity", Access::SignedIn),
    // What the requests made; who sees which resource is `may_view_request` on its owner.
    (Methods::Read, "/api/v1/resources", Access::SignedIn),
    (Methods::Read, "/api/v1/resources/{id}", Access::SignedIn),
    // Day two: the owner (or an admin: `may_act_on_resource`) updates, extends or removes it.
    (
        Methods::Post,
        "/api/v1/resources/{id}/requests",
        Access::SignedIn,
    ),
    (
        Methods::Post,
        "/api/v1/resources/{id}/requests/preview",
        Access::SignedIn,
    ),
    (Methods::Post, "/api/v1/forge/webhook", Access::Public),
    // The roadmap, its exports and the status badges (for READMEs and wikis) read the catalog;
    // the lint's findings are an admin dashboard.
    (Methods::Read, "/api/v1/roadmap", Access::Catalog),
    (Methods::Read, "/api/v1/roadmap/burnup", Access::Catalog),
    (Methods::Read, "/api/v1/findings", Access::Admin),
    // The live checks' results: URLs and application names the catalog already shows.
    (Methods::Read, "/api/v1/probes", Access::Catalog),
    (Methods::Read, "/roadmap", Access::Catalog),
    (Methods::Read, "/roadmap/graph", Access::Catalog),
    (Methods::Read, "/roadmap/graph.svg", Access::Catalog),
    (Methods::Read, "/roadmap.md", Access::Catalog),
    (Methods::Read, "/roadmap.csv", Access::Catalog),
    (Methods::Read, "/badge/items/{file}", Access::Catalog),
    (Methods::Read, "/findings", Access::Admin),
    (Methods::ReadOrPost, "/_fn/roadmap", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/roadmap_graph", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/burnup", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/findings", Access::Admin),
    // The home page's dashboard (admins; others see the overview alone, and the server
    // function answers them nothing when rendering in-process).
    (Methods::ReadOrPost, "/_fn/dashboard", Access::Admin),
    // The web UI's pages.
    (Methods::Read, "/", Access::Catalog),
    (Methods::Read, "/catalog", Access::Catalog),
    (Methods::Read, "/layers/{id}", Access::Catalog),
    (Methods::Read, "/items/{id}", Access::Catalog),
    (Methods::Read, "/decisions", Access::Catalog),
    (Methods::Read, "/sites", Access::Catalog),
    (Methods::Read, "/sites/{id}", Access::Catalog),
    (Methods::Read, "/search", Access::Catalog),
    // The web UI's server functions.
    (Methods::ReadOrPost, "/_fn/viewer", Access::Public),
    (Methods::ReadOrPost, "/_fn/overview", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/items", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/layer", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/item", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/item_history", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/decisions", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/sites", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/site", Access::Catalog),
    (Methods::ReadOrPost, "/_fn/search", Access::Catalog),
    // Self-service in the web UI: pages and server functions. Who may see which template or
    // request, and who may decide or merge, is decided per object by the self-service layer.
    (Methods::Read, "/self-service", Access::SignedIn),
    (Methods::Read, "/self-service/{template}", Access::SignedIn),
    (
        Methods::Read,
        "/self-service/{template}/preview",
        Access::SignedIn,
    ),
    (Methods::Read, "/requests", Access::SignedIn),
    (Methods::Read, "/requests/{id}", Access::SignedIn),
    (Methods::Read, "/requests/{id}/change", Access::SignedIn),
    (Methods::Read, "/admin/templates", Access::Admin),
    (Methods::ReadOrPost, "/_fn/templates", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/template", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/gpu_capacity", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/preview", Access::SignedIn),
    (Methods::Post, "/_fn/submit", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/requests", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/request", Access::SignedIn),
    (
        Methods::ReadOrPost,
        "/_fn/proposed_change",
        Access::SignedIn,
    ),
    (Methods::Read, "/resources", Access::SignedIn),
    (Methods::Read, "/resources/{id}", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/resources", Access::SignedIn),
    (Methods::ReadOrPost, "/_fn/resource", Access::SignedIn),
    (Methods::Post, "/_fn/resource-request", Access::SignedIn),
    (Methods::Read, "/resources/{id}/preview", Access::SignedIn),
    (
        Methods::ReadOrPost,
        "/_fn/resource-preview",
        Access::SignedIn,
    ),
    (Methods::Post, "/_fn/withdraw", Access::SignedIn),
    (Methods::Post, "/_fn/approve", Access::Admin),
    (Methods::Post, "/_fn/reject", Access::Admin),
    (Methods::Post, "/_fn/merge", Access::Admin),
    (Methods::ReadOrPost, "/_fn/template-problems", Access::Admin),
    (Methods::ReadOrPost, "/_fn/template-updates", Access::Admin),
    // An admin's change of a catalog item: the preview page and its server functions.
    (Methods::Read, "/items/{id}/change", Access::Admin),
    (
        Methods::ReadOrPost,
        "/_fn/catalog-change-preview",
        Access::Admin,
    ),
    (Methods::Post, "/_fn/catalog-change", Access::Admin),
];

/// Public routes whose sender proves itself by signing the body (forge webhooks): they carry
/// no cookie and no `Origin`, so the CSRF Origin check does not apply to them.
pub const SIGNED_BY_SENDER: &[&str] = &["/api/v1/forge/webhook"];

/// Whether a `POST` to `path` is authenticated by its signature rather than a session.
pub fn signed_by_sender(path: &str) -> bool {
    SIGNED_BY_SENDER.contains(&path)
}

/// What `method path` requires, or `None` when the table has no line for it.
pub fn lookup(method: &Method, path: &str) -> Option<Access> {
    lines_for(path)
        .find(|(methods, _, _)| methods.covers(method))
        .map(|(_, _, access)| *access)
}

/// The table's lines for `path`, as the router picks them: where several patterns match, the
/// one with a literal segment where others have a parameter wins (`/api/v1/requests/preview`
/// is that route, never `/api/v1/requests/{id}` with the id `preview`).
fn lines_for(path: &str) -> impl Iterator<Item = &'static (Methods, &'static str, Access)> {
    TREE.at(path)
        .ok()
        // A parameter is one non-empty segment: `/items//change` names no item.
        .filter(|found| found.params.iter().all(|(_, value)| !value.is_empty()))
        .into_iter()
        .flat_map(|found| found.value.iter().map(|&line| &ROUTES[line]))
}

/// [`ROUTES`] as the router's own matcher (`matchit`, which axum routes with) holds it: each
/// pattern once, with the indices of its lines in table order. A lookup walks the path's
/// segments through a radix tree instead of trying every pattern, and prefers a literal
/// segment to a parameter and a parameter to a catch-all, as the router does.
static TREE: LazyLock<matchit::Router<Vec<usize>>> = LazyLock::new(|| {
    let mut lines: Vec<(&str, Vec<usize>)> = Vec::new();
    for (line, (_, pattern, _)) in ROUTES.iter().enumerate() {
        match lines.iter_mut().find(|(p, _)| p == pattern) {
            Some((_, of_pattern)) => of_pattern.push(line),
            None => lines.push((pattern, vec![line])),
        }
    }
    let mut tree = matchit::Router::new();
    for (pattern, of_pattern) in lines {
        if let Err(e) = tree.insert(pattern, of_pattern) {
            // A unit test builds the tree from the table: this cannot reach a running server.
            panic!("access table pattern {pattern}: {e}");
        }
    }
    tree
});

/// What `method path` requires; a path the table does not know needs a session (server
/// functions ask with their own path, which is always in the table).
pub fn access(method: &Method, path: &str) -> Access {
    lookup(method, path).unwrap_or(Access::SignedIn)
}

/// How the server treats a request's path before anyone is asked who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A route of the table, asked for by its one spelling: it requires this.
    Known(Access),
    /// Another spelling of a page or API path (a trailing slash, `//`, `.` or `..`): read it
    /// at its one spelling, this path.
    Canonical(String),
    /// A path of the table, but not with this method: these are the ones it answers.
    WrongMethod(Vec<Method>),
    /// No route: answered 404 at once, before any page is rendered or any handler runs.
    Unknown,
}

/// Sorts a request into [`Route`]. Only paths of the table, spelled as the table spells them,
/// reach a handler or the UI's renderer: a variant such as `/findings/` or `/./findings` can
/// never fall through to a page rendered under a weaker rule.
pub fn route(method: &Method, path: &str) -> Route {
    if let Some(canonical) = canonical(path) {
        let readable = method == Method::GET || method == Method::HEAD;
        return match lookup(method, &canonical) {
            Some(_) if readable => Route::Canonical(canonical),
            _ => Route::Unknown,
        };
    }
    if let Some(access) = lookup(method, path) {
        return Route::Known(access);
    }
    let mut allowed: Vec<Method> = Vec::new();
    for (methods, _, _) in lines_for(path) {
        for m in methods.list() {
            if !allowed.contains(m) {
                allowed.push(m.clone());
            }
        }
    }
    if allowed.is_empty() {
        Route::Unknown
    } else {
        Route::WrongMethod(allowed)
    }
}

/// `None` when `path` is already in its one spelling; otherwise that spelling: empty
/// segments dropped, `.` and `..` resolved (never above the root), no trailing slash.
fn canonical(path: &str) -> Option<String> {
    let has_variant = path != "/"
        && (path.ends_with('/')
            || path
                .split('/')
                .skip(1)
                .any(|s| s.is_empty() || s == "." || s == ".."));
    if !has_variant {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    for s in path.split('/') {
        match s {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    Some(format!("/{}", segments.join("/")))
}

/// Whether `caller` may use a route that requires `access`.
pub fn decide(access: Access, caller: Caller, public_catalog: bool) -> Decision {
    match (access, caller) {
        (Access::Public, _) => Decision::Allow,
        (Access::Catalog, Caller::Anonymous) if public_catalog => Decision::Allow,
        (_, Caller::Anonymous) => Decision::SignIn,
        (Access::Admin, Caller::User(Role::Researcher)) => Decision::Forbid,
        (_, Caller::User(_)) => Decision::Allow,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's lines for `path` found the plain way: every pattern tried, segment by
    /// segment (`{x}` one non-empty segment, `{*x}` one or more), the most specific kept.
    fn lines_by_scan(path: &str) -> Vec<&'static (Methods, &'static str, Access)> {
        fn matches(pattern: &str, path: &str) -> bool {
            let mut pat = pattern.split('/');
            let mut segs = path.split('/');
            loop {
                match (pat.next(), segs.next()) {
                    (None, None) => return true,
                    (Some(p), Some(s)) if p.starts_with("{*") => {
                        return !s.is_empty() || segs.count() > 0;
                    }
                    (Some(p), Some(s)) if p.starts_with('{') => {
                        if s.is_empty() {
                            return false;
                        }
                    }
                    (Some(p), Some(s)) if p == s => {}
                    _ => return false,
                }
            }
        }
        // A literal (0) before a parameter (1) before a catch-all (2), segment by segment.
        fn specificity(pattern: &str) -> impl Iterator<Item = u8> {
            pattern.split('/').map(|s| {
                if s.starts_with("{*") {
                    2
                } else if s.starts_with('{') {
                    1
                } else {
                    0
                }
            })
        }
        let best = ROUTES
            .iter()
            .map(|(_, pattern, _)| *pattern)
            .filter(|pattern| matches(pattern, path))
            .min_by(|a, b| specificity(a).cmp(specificity(b)));
        ROUTES
            .iter()
            .filter(|(_, pattern, _)| Some(*pattern) == best)
            .collect()
    }

    fn pattern_for(path: &str) -> Option<&'static str> {
        lines_for(path).next().map(|(_, pattern, _)| *pattern)
    }

    #[test]
    fn parameters_take_one_non_empty_segment_and_a_catch_all_one_or_more() {
        assert_eq!(pattern_for("/"), Some("/"));
        assert_eq!(pattern_for("/items/vault"), Some("/items/{id}"));
        assert_eq!(pattern_for("/items/"), None);
        assert_eq!(pattern_for("/items/a/b"), None);
        assert_eq!(pattern_for("/pkg/mirante.wasm"), Some("/pkg/{*path}"));
        assert_eq!(pattern_for("/pkg/a/b.js"), Some("/pkg/{*path}"));
        assert_eq!(pattern_for("/pkg"), None);
        assert_eq!(pattern_for("/catalog/reload"), None);
        assert_eq!(
            pattern_for("/api/v1/requests/preview"),
            Some("/api/v1/requests/preview")
        );
        assert_eq!(
            pattern_for("/api/v1/requests/7"),
            Some("/api/v1/requests/{id}")
        );
    }

    /// Every pattern of the table, with its parameters filled in several ways, and the paths
    /// one segment longer or shorter than each: the tree finds the lines the plain scan finds.
    #[test]
    fn the_tree_finds_the_lines_a_scan_of_every_pattern_finds() {
        let fills = [
            "x", "preview", "change", "a.b", "%2F", "é", "{id}", "a/b", "",
        ];
        let mut paths: Vec<String> = vec!["".into(), "//".into(), "/_fn".into(), "/_fn/".into()];
        for (_, pattern, _) in ROUTES {
            for fill in fills {
                let path = pattern
                    .split('/')
                    .map(|s| if s.starts_with('{') { fill } else { s })
                    .collect::<Vec<_>>()
                    .join("/");
                let shorter = path.rsplit_once('/').map(|(p, _)| p.to_string());
                paths.extend([format!("{path}/"), format!("{path}/extra"), path]);
                paths.extend(shorter);
            }
        }
        assert!(paths.len() > 1000, "{}", paths.len());
        for path in &paths {
            let tree: Vec<_> = lines_for(path).collect();
            assert_eq!(tree, lines_by_scan(path), "{path}");
        }
    }

    #[test]
    fn catalog_reload_is_for_admins_only() {
        let access = access(&Method::POST, "/api/v1/catalog/reload");
        assert_eq!(access, Access::Admin);
        assert_eq!(decide(access, Caller::Anonymous, true), Decision::SignIn);
        assert_eq!(
            decide(access, Caller::User(Role::Researcher), true),
            Decision::Forbid
        );
        assert_eq!(
            decide(access, Caller::User(Role::Admin), false),
            Decision::Allow
        );
    }

    #[test]
    fn the_catalog_is_public_only_when_configured() {
        let access = access(&Method::GET, "/api/v1/items");
        assert_eq!(decide(access, Caller::Anonymous, false), Decision::SignIn);
        assert_eq!(decide(access, Caller::Anonymous, true), Decision::Allow);
    }

    #[test]
    fn unknown_paths_and_methods_are_refused_before_anyone_is_asked() {
        assert_eq!(route(&Method::GET, "/nowhere"), Route::Unknown);
        assert_eq!(route(&Method::GET, "/Findings"), Route::Unknown);
        assert_eq!(route(&Method::GET, "/%66indings"), Route::Unknown);
        assert_eq!(
            route(&Method::DELETE, "/api/v1/items"),
            Route::WrongMethod(vec![Method::GET, Method::HEAD])
        );
        assert_eq!(
            route(&Method::TRACE, "/_fn/findings"),
            Route::WrongMethod(vec![Method::GET, Method::HEAD, Method::POST])
        );
    }

    #[test]
    fn a_literal_segment_wins_over_a_parameter_as_in_the_router() {
        // `preview` is its own route, not the request with the id `preview`.
        assert_eq!(
            route(&Method::GET, "/api/v1/requests/preview"),
            Route::WrongMethod(vec![Method::POST])
        );
        assert_eq!(
            route(&Method::POST, "/api/v1/requests/preview"),
            Route::Known(Access::SignedIn)
        );
        assert_eq!(
            route(&Method::GET, "/api/v1/requests/7"),
            Route::Known(Access::SignedIn)
        );
    }

    #[test]
    fn other_spellings_of_a_path_are_sent_to_its_one_spelling() {
        for variant in [
            "/findings/",
            "/./findings",
            "/findings/.",
            "//findings",
            "/catalog/../findings",
            "/../findings",
            "/findings//",
        ] {
            assert_eq!(
                route(&Method::GET, variant),
                Route::Canonical("/findings".to_owned()),
                "{variant}"
            );
        }
        assert_eq!(
            route(&Method::GET, "/items/vault/change/"),
            Route::Canonical("/items/vault/change".to_owned())
        );
        // Never a redirect for a form's POST, nor to a path without a route.
        assert_eq!(route(&Method::POST, "/_fn/approve/"), Route::Unknown);
        assert_eq!(route(&Method::GET, "/nowhere/"), Route::Unknown);
        assert_eq!(route(&Method::GET, "/"), Route::Known(Access::Catalog));
        assert_eq!(
            route(&Method::GET, "/findings"),
            Route::Known(Access::Admin)
        );
    }

    #[test]
    fn deciding_and_merging_requests_is_for_admins_and_the_webhook_is_public() {
        for path in [
            "/api/v1/requests/3/approve",
            "/api/v1/requests/3/reject",
            "/api/v1/requests/3/merge",
        ] {
            assert_eq!(access(&Method::POST, path), Access::Admin, "{path}");
        }
        assert_eq!(access(&Method::POST, "/api/v1/requests"), Access::SignedIn);
        assert_eq!(access(&Method::GET, "/api/v1/requests/3"), Access::SignedIn);
        assert_eq!(
            access(&Method::POST, "/api/v1/forge/webhook"),
            Access::Public
        );
        assert!(signed_by_sender("/api/v1/forge/webhook"));
        assert!(!signed_by_sender("/api/v1/requests"));
    }

    /// Server functions also run in-process while a page renders, where the middleware does
    /// not see them: each one's body asks the policy with its own path first.
    #[test]
    fn every_server_function_asks_the_policy_before_it_answers() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../frontend/src");
        let mut sources = String::new();
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push_str(&std::fs::read_to_string(path).unwrap());
                }
            }
        }
        let mut functions = 0;
        let mut silent = Vec::new();
        for (path, _) in leptos::server_fn::axum::server_fn_paths() {
            let endpoint = path
                .strip_prefix("/_fn/")
                .expect("server functions live under /_fn");
            functions += 1;
            if !sources.contains(&format!("crate::ssr::authorize(\"{endpoint}\")?")) {
                silent.push(path);
            }
        }
        assert!(functions > 20, "{functions}");
        assert!(
            silent.is_empty(),
            "server functions that do not ask: {silent:?}"
        );
    }

    /// Every route the server serves has a line in the table: the OpenAPI paths, the web UI's
    /// pages and server functions, and the routes of this module's parent.
    #[tokio::test]
    async fn every_route_of_the_server_has_a_decision() {
        let mut missing = Vec::new();
        for (method, path) in crate::http::routes::all_routes() {
            if lookup(&method, &path).is_none() {
                missing.push(format!("{method} {path}"));
            }
        }
        assert!(missing.is_empty(), "routes without a decision: {missing:?}");
    }
}
