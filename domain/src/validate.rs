//! Semantic validation of a parsed catalog: ids, references, cycles, the single platform.
//!
//! The model types carry no positions (they are shared with the API and the UI), so when there
//! is a problem to report each file is also read into a lenient "shadow" that keeps only ids
//! and references, each wrapped in [`Spanned`]. The shadow comes from the same document as the model value, so its lists line
//! up index by index with the model's, and a position is found by kind, index, field and
//! element index.

use foldhash::HashMap;
use std::fmt::Write as _;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_saphyr::Spanned;

use crate::diagnostic::Diagnostic;
use crate::model::CatalogFile;

/// An optional id or reference with its position.
type One = Option<Spanned<String>>;
/// A list of references with their positions.
type Many = Vec<Spanned<String>>;

/// Positions of the ids and references of one file.
///
/// No `deny_unknown_fields` and everything defaulted: the strict model already rejects what is
/// wrong, the shadow only has to follow what is right.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Shadow {
    platform: Option<Spanned<IgnoredAny>>,
    sites: Vec<SiteShadow>,
    hosts: Vec<HostShadow>,
    layers: Vec<LayerShadow>,
    items: Vec<ItemShadow>,
    decisions: Vec<DecisionShadow>,
    tasks: Vec<TaskShadow>,
    phases: Vec<IdShadow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct IdShadow {
    id: One,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct SiteShadow {
    id: One,
    host_groups: Vec<IdShadow>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HostShadow {
    id: One,
    site: One,
    group: One,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct LayerShadow {
    id: One,
    parent: One,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ItemShadow {
    id: One,
    layer: One,
    sites: Many,
    hosts: Many,
    depends_on: Many,
    decisions: Many,
    phase: One,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct DecisionShadow {
    id: One,
    layers: Many,
    items: Many,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TaskShadow {
    id: One,
    layer: One,
    items: Many,
    sites: Many,
    after: Many,
}

/// One file: the strict model value and, once there is a problem to place, the shadow with
/// positions.
pub(crate) struct ParsedFile<'a> {
    /// Relative path, for diagnostics.
    pub path: String,
    /// The file's contents, to read the shadow from when it is needed.
    pub source: &'a [u8],
    /// The strict value (shared with a [`crate::load::RevisionLoader`] that keeps it).
    pub file: std::sync::Arc<CatalogFile>,
    /// Positions; empty (every position 0:0) until the file is read for them.
    pub shadow: Shadow,
}

/// Kinds of things that have ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Site,
    HostGroup,
    Host,
    Layer,
    Item,
    Decision,
    Task,
    Phase,
}

const KINDS: usize = 8;

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Site => "site",
            Kind::HostGroup => "host group",
            Kind::Host => "host",
            Kind::Layer => "layer",
            Kind::Item => "item",
            Kind::Decision => "decision",
            Kind::Task => "task",
            Kind::Phase => "phase",
        }
    }
}

/// A place in the catalog.
#[derive(Debug, Clone, Copy)]
struct Pos {
    file: usize,
    line: u64,
    column: u64,
}

/// Something with an id.
struct Entry<'a> {
    id: &'a str,
    at: Pos,
}

/// A reference from one entry to another by id.
struct Ref<'a> {
    owner_kind: Kind,
    /// Index of the owner in its kind's entry list.
    owner: usize,
    field: &'static str,
    /// Kinds the id may name, tried in order.
    targets: &'static [Kind],
    value: &'a str,
    at: Pos,
}

/// Everything with an id and every reference, in catalog order.
struct Index<'a> {
    files: &'a [ParsedFile<'a>],
    entries: [Vec<Entry<'a>>; KINDS],
    refs: Vec<Ref<'a>>,
    /// id -> index of its first entry, per kind.
    by_id: [HashMap<&'a str, usize>; KINDS],
    /// Whether some id of the kind is given more than once.
    repeated: [bool; KINDS],
}

fn pos(file: usize, sp: Option<&Spanned<String>>) -> Pos {
    // A missing shadow value only happens if the two readings disagree; the diagnostic then
    // names the file without a position rather than a wrong one.
    let (line, column) = sp.map_or((0, 0), |s| (s.referenced.line(), s.referenced.column()));
    Pos { file, line, column }
}

impl<'a> Index<'a> {
    fn build(files: &'a [ParsedFile<'a>]) -> Self {
        let mut ix = Index {
            files,
            entries: Default::default(),
            refs: Vec::new(),
            by_id: Default::default(),
            repeated: [false; KINDS],
        };
        ix.reserve(files);
        for (f, pf) in files.iter().enumerate() {
            let (c, sh) = (&pf.file, &pf.shadow);
            for (i, s) in c.sites.iter().enumerate() {
                let ss = sh.sites.get(i);
                ix.entry(Kind::Site, &s.id, pos(f, ss.and_then(|x| x.id.as_ref())));
                for (j, g) in s.host_groups.iter().enumerate() {
                    let gs = ss.and_then(|x| x.host_groups.get(j));
                    ix.entry(
                        Kind::HostGroup,
                        &g.id,
                        pos(f, gs.and_then(|x| x.id.as_ref())),
                    );
                }
            }
            for (i, h) in c.hosts.iter().enumerate() {
                let hs = sh.hosts.get(i);
                let o = ix.entry(Kind::Host, &h.id, pos(f, hs.and_then(|x| x.id.as_ref())));
                let r = RefSink {
                    f,
                    owner_kind: Kind::Host,
                    owner: o,
                };
                r.one(
                    &mut ix,
                    "site",
                    &[Kind::Site],
                    Some(&h.site),
                    hs.map(|x| &x.site),
                );
                r.one(
                    &mut ix,
                    "group",
                    &[Kind::HostGroup],
                    h.group.as_deref(),
                    hs.map(|x| &x.group),
                );
            }
            for (i, l) in c.layers.iter().enumerate() {
                let ls = sh.layers.get(i);
                let o = ix.entry(Kind::Layer, &l.id, pos(f, ls.and_then(|x| x.id.as_ref())));
                let r = RefSink {
                    f,
                    owner_kind: Kind::Layer,
                    owner: o,
                };
                r.one(
                    &mut ix,
                    "parent",
                    &[Kind::Layer],
                    l.parent.as_deref(),
                    ls.map(|x| &x.parent),
                );
            }
            for (i, it) in c.items.iter().enumerate() {
                let is = sh.items.get(i);
                let o = ix.entry(Kind::Item, &it.id, pos(f, is.and_then(|x| x.id.as_ref())));
                let r = RefSink {
                    f,
                    owner_kind: Kind::Item,
                    owner: o,
                };
                r.one(
                    &mut ix,
                    "layer",
                    &[Kind::Layer],
                    Some(it.layer.as_str()),
                    is.map(|x| &x.layer),
                );
                r.many(
                    &mut ix,
                    "sites",
                    &[Kind::Site],
                    &it.sites,
                    is.map(|x| &x.sites),
                );
                r.many(
                    &mut ix,
                    "hosts",
                    &[Kind::Host],
                    &it.hosts,
                    is.map(|x| &x.hosts),
                );
                let deps = is.map(|x| &x.depends_on);
                r.many(&mut ix, "depends_on", &[Kind::Item], &it.depends_on, deps);
                let decs = is.map(|x| &x.decisions);
                r.many(&mut ix, "decisions", &[Kind::Decision], &it.decisions, decs);
                r.one(
                    &mut ix,
                    "phase",
                    &[Kind::Phase],
                    it.phase.as_deref(),
                    is.map(|x| &x.phase),
                );
            }
            for (i, d) in c.decisions.iter().enumerate() {
                let ds = sh.decisions.get(i);
                let o = ix.entry(
                    Kind::Decision,
                    &d.id,
                    pos(f, ds.and_then(|x| x.id.as_ref())),
                );
                let r = RefSink {
                    f,
                    owner_kind: Kind::Decision,
                    owner: o,
                };
                r.many(
                    &mut ix,
                    "layers",
                    &[Kind::Layer],
                    &d.layers,
                    ds.map(|x| &x.layers),
                );
                r.many(
                    &mut ix,
                    "items",
                    &[Kind::Item],
                    &d.items,
                    ds.map(|x| &x.items),
                );
            }
            for (i, t) in c.tasks.iter().enumerate() {
                let ts = sh.tasks.get(i);
                let o = ix.entry(Kind::Task, &t.id, pos(f, ts.and_then(|x| x.id.as_ref())));
                let r = RefSink {
                    f,
                    owner_kind: Kind::Task,
                    owner: o,
                };
                r.one(
                    &mut ix,
                    "layer",
                    &[Kind::Layer],
                    Some(&t.layer),
                    ts.map(|x| &x.layer),
                );
                r.many(
                    &mut ix,
                    "items",
                    &[Kind::Item],
                    &t.items,
                    ts.map(|x| &x.items),
                );
                r.many(
                    &mut ix,
                    "sites",
                    &[Kind::Site],
                    &t.sites,
                    ts.map(|x| &x.sites),
                );
                // A task waits for another task or for an item; tasks are tried first so a
                // task and an item sharing an id resolve the same way everywhere.
                let after = ts.map(|x| &x.after);
                r.many(&mut ix, "after", &[Kind::Task, Kind::Item], &t.after, after);
            }
            for (i, p) in c.phases.iter().enumerate() {
                let ps = sh.phases.get(i);
                ix.entry(Kind::Phase, &p.id, pos(f, ps.and_then(|x| x.id.as_ref())));
            }
        }
        ix
    }

    /// Sizes the lists and maps for the entries of `files`, so that building the index of a
    /// large catalog does not grow them step by step.
    fn reserve(&mut self, files: &[ParsedFile<'_>]) {
        let mut counts = [0usize; KINDS];
        for pf in files {
            let c = &pf.file;
            counts[Kind::Site as usize] += c.sites.len();
            counts[Kind::HostGroup as usize] +=
                c.sites.iter().map(|s| s.host_groups.len()).sum::<usize>();
            counts[Kind::Host as usize] += c.hosts.len();
            counts[Kind::Layer as usize] += c.layers.len();
            counts[Kind::Item as usize] += c.items.len();
            counts[Kind::Decision as usize] += c.decisions.len();
            counts[Kind::Task as usize] += c.tasks.len();
            counts[Kind::Phase as usize] += c.phases.len();
        }
        for (k, &n) in counts.iter().enumerate() {
            self.entries[k].reserve_exact(n);
            self.by_id[k].reserve(n);
        }
    }

    /// Records an entry and returns its index in its kind's list.
    fn entry(&mut self, kind: Kind, id: &'a str, at: Pos) -> usize {
        let list = &mut self.entries[kind as usize];
        let n = list.len();
        list.push(Entry { id, at });
        if *self.by_id[kind as usize].entry(id).or_insert(n) != n {
            self.repeated[kind as usize] = true;
        }
        n
    }

    /// The kind and index an id resolves to, trying `targets` in order.
    fn resolve(&self, targets: &[Kind], id: &str) -> Option<(Kind, usize)> {
        targets
            .iter()
            .find_map(|&k| self.by_id[k as usize].get(id).map(|&i| (k, i)))
    }

    fn path(&self, at: Pos) -> &str {
        &self.files[at.file].path
    }

    fn place(&self, at: Pos) -> String {
        format!("{}:{}:{}", self.path(at), at.line, at.column)
    }

    fn diag(&self, at: Pos, message: impl AsRef<str>) -> Diagnostic {
        Diagnostic::new(self.path(at), at.line, at.column, message)
    }
}

/// Adds the references of one owner.
struct RefSink {
    f: usize,
    owner_kind: Kind,
    owner: usize,
}

impl RefSink {
    fn one<'a>(
        &self,
        ix: &mut Index<'a>,
        field: &'static str,
        targets: &'static [Kind],
        value: Option<&'a str>,
        shadow: Option<&One>,
    ) {
        if let Some(v) = value {
            let at = pos(self.f, shadow.and_then(Option::as_ref));
            self.push(ix, field, targets, v, at);
        }
    }

    fn many<'a>(
        &self,
        ix: &mut Index<'a>,
        field: &'static str,
        targets: &'static [Kind],
        values: &'a [impl AsRef<str>],
        shadow: Option<&Many>,
    ) {
        for (k, v) in values.iter().enumerate() {
            let at = pos(self.f, shadow.and_then(|s| s.get(k)));
            self.push(ix, field, targets, v.as_ref(), at);
        }
    }

    fn push<'a>(
        &self,
        ix: &mut Index<'a>,
        field: &'static str,
        targets: &'static [Kind],
        value: &'a str,
        at: Pos,
    ) {
        ix.refs.push(Ref {
            owner_kind: self.owner_kind,
            owner: self.owner,
            field,
            targets,
            value,
            at,
        });
    }
}

/// Whether `id` matches `^[a-z0-9][a-z0-9._-]*$`.
pub fn is_valid_id(id: &str) -> bool {
    let mut bytes = id.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    first_ok
        && bytes.all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// Checks a set of parsed files and appends every problem to `out`.
///
/// `cross_refs` is false when some file of the catalog could not be read: its ids are then
/// missing, and reporting every reference to them as dangling would bury the real error.
pub(crate) fn validate(files: &[ParsedFile<'_>], cross_refs: bool, out: &mut Vec<Diagnostic>) {
    let ix = Index::build(files);
    check_platforms(files, out);
    check_ids(&ix, out);
    if cross_refs {
        // Each reference is looked up once; the checks below read what it names.
        let resolved: Vec<Option<(Kind, usize)>> = ix
            .refs
            .iter()
            .map(|r| ix.resolve(r.targets, r.value))
            .collect();
        check_refs(&ix, &resolved, out);
        check_cycle(&ix, &resolved, Kind::Item, "depends_on", out);
        check_cycle(&ix, &resolved, Kind::Task, "after", out);
        check_cycle(&ix, &resolved, Kind::Layer, "parent", out);
    }
}

fn check_platforms(files: &[ParsedFile<'_>], out: &mut Vec<Diagnostic>) {
    let mut first: Option<String> = None;
    for pf in files {
        if pf.file.platform.is_none() {
            continue;
        }
        let (line, column) = pf
            .shadow
            .platform
            .as_ref()
            .map_or((0, 0), |s| (s.referenced.line(), s.referenced.column()));
        let here = format!("{}:{line}:{column}", pf.path);
        match &first {
            None => first = Some(here),
            Some(f) => out.push(Diagnostic::new(
                &pf.path,
                line,
                column,
                format!("a second `platform`; the catalog holds at most one (first at {f})"),
            )),
        }
    }
}

fn check_ids(ix: &Index<'_>, out: &mut Vec<Diagnostic>) {
    for kind in [
        Kind::Site,
        Kind::HostGroup,
        Kind::Host,
        Kind::Layer,
        Kind::Item,
        Kind::Decision,
        Kind::Task,
        Kind::Phase,
    ] {
        let entries = &ix.entries[kind as usize];
        for e in entries {
            if !is_valid_id(e.id) {
                out.push(ix.diag(
                    e.at,
                    format!(
                        "malformed {} id `{}`: use lowercase letters, digits, `.`, `_` and `-`, \
                         starting with a letter or digit",
                        kind.name(),
                        e.id
                    ),
                ));
            }
        }
        if ix.repeated[kind as usize] {
            check_repeated(ix, kind, out);
        }
    }
}

/// Reports each entry of `kind` whose id another entry of the kind also has.
fn check_repeated(ix: &Index<'_>, kind: Kind, out: &mut Vec<Diagnostic>) {
    let entries = &ix.entries[kind as usize];
    let mut groups: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, e) in entries.iter().enumerate() {
        groups.entry(e.id).or_default().push(i);
    }
    for (i, e) in entries.iter().enumerate() {
        let group = &groups[e.id];
        if group.len() < 2 {
            continue;
        }
        // Bounded: a file repeating one id thousands of times must not cost quadratic time.
        const LISTED: usize = 3;
        let mut others: Vec<String> = group
            .iter()
            .filter(|&&j| j != i)
            .take(LISTED)
            .map(|&j| ix.place(entries[j].at))
            .collect();
        if group.len() - 1 > LISTED {
            others.push(format!("{} more", group.len() - 1 - LISTED));
        }
        out.push(ix.diag(
            e.at,
            format!(
                "duplicate {} id `{}` (also at {})",
                kind.name(),
                e.id,
                others.join(", ")
            ),
        ));
    }
}

fn check_refs(ix: &Index<'_>, resolved: &[Option<(Kind, usize)>], out: &mut Vec<Diagnostic>) {
    for (r, to) in ix.refs.iter().zip(resolved) {
        if to.is_some() {
            continue;
        }
        let wanted: Vec<&str> = r.targets.iter().map(|k| k.name()).collect();
        let owner = ix.entries[r.owner_kind as usize][r.owner].id;
        out.push(ix.diag(
            r.at,
            format!(
                "{} `{}`: `{}` names unknown {} `{}`",
                r.owner_kind.name(),
                owner,
                r.field,
                wanted.join(" or "),
                r.value
            ),
        ));
    }
}

/// Reports every cycle of `field` references between entries of `kind`, once per back edge,
/// at the reference that closes it.
fn check_cycle(
    ix: &Index<'_>,
    resolved: &[Option<(Kind, usize)>],
    kind: Kind,
    field: &str,
    out: &mut Vec<Diagnostic>,
) {
    let n = ix.entries[kind as usize].len();
    // node -> [(target node, reference index)], in catalog order.
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (ri, (r, to)) in ix.refs.iter().zip(resolved).enumerate() {
        if r.owner_kind != kind || r.field != field {
            continue;
        }
        if let Some((k, t)) = *to
            && k == kind
        {
            adj[r.owner].push((t, ri));
        }
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; n];
    // Position on the DFS stack of each node currently on it, so closing a cycle is O(1).
    let mut depth_of = vec![0usize; n];
    // Iterative DFS: a 10,000-item dependency chain would overflow the stack if recursive.
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for start in 0..n {
        if mark[start] != Mark::New {
            continue;
        }
        mark[start] = Mark::OnPath;
        depth_of[start] = 0;
        stack.push((start, 0));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            top.1 += 1;
            let Some(&(target, ri)) = adj[node].get(next) else {
                mark[node] = Mark::Done;
                stack.pop();
                continue;
            };
            match mark[target] {
                Mark::New => {
                    mark[target] = Mark::OnPath;
                    depth_of[target] = stack.len();
                    stack.push((target, 0));
                }
                Mark::OnPath => {
                    let from = depth_of[target];
                    let names = &ix.entries[kind as usize];
                    // The cycle is the path from `target` to `node`, then back to `target`.
                    let len = stack.len() - from + 1;
                    let id_at = |k: usize| names[stack.get(from + k).map_or(target, |e| e.0)].id;
                    out.push(ix.diag(
                        ix.refs[ri].at,
                        format!(
                            "cycle in {} `{field}`: {}",
                            kind.name(),
                            cycle_path(len, id_at)
                        ),
                    ));
                }
                Mark::Done => {}
            }
        }
    }
}

/// `a -> b -> a` for a path of `len` ids given by `id_at`, shortened in the middle when long
/// (only the ids shown are looked up).
fn cycle_path<'a>(len: usize, id_at: impl Fn(usize) -> &'a str) -> String {
    const SHOWN: usize = 12;
    let join = |r: std::ops::Range<usize>| r.map(&id_at).collect::<Vec<_>>().join(" -> ");
    if len <= SHOWN {
        join(0..len)
    } else {
        let mut s = join(0..SHOWN / 2);
        let _ = write!(s, " -> … ({} more) -> ", len - SHOWN);
        s.push_str(&join(len - SHOWN / 2..len));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_lowercase_letters_digits_dots_underscores_and_dashes_are_valid() {
        for id in ["l0", "linstor-sp-ssd", "a.b_c-d", "8b", "0"] {
            assert!(is_valid_id(id), "{id}");
        }
    }

    #[test]
    fn ids_with_uppercase_spaces_or_a_leading_symbol_are_malformed() {
        for id in ["", "L0", "-a", ".a", "_a", "a b", "ção", "a/b", "a:b"] {
            assert!(!is_valid_id(id), "{id:?}");
        }
    }

    #[test]
    fn a_long_cycle_is_shortened_in_the_middle() {
        let ids: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();

        let shown = cycle_path(ids.len(), |k| ids[k].as_str());

        assert_eq!(
            shown,
            "n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> … (8 more) -> n14 -> n15 -> n16 -> n17 -> n18 -> n19"
        );
    }
}
