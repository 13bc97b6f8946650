//! Changing one item's `state`, `qualifier` and `evidence` in the text of a catalog file while
//! leaving every other byte as it was: comments, key order, quoting, blank lines and the other
//! items.
//!
//! Nothing here parses YAML by hand. serde-saphyr reads the file three times — its top-level
//! keys, each item's keys with the positions of each key and value, and each item's id,
//! state, qualifier and evidence as values — and the edit works on those byte positions:
//!
//! - a scalar that changes (`state`, `qualifier`) has its value's bytes replaced;
//! - a key that appears (`qualifier` after `state`, `evidence` after the item's last key) is
//!   one line or one block of lines inserted at the key indentation; a key that goes away is
//!   removed from its line to the line of the next key of the item (comment and blank lines
//!   just before that next key stay);
//! - `evidence` entries that stay are kept as they were written; removed ones lose their
//!   lines, new ones are written as a block mapping at the indentation of the others.
//!
//! New values are written by the same quoting as self-service templates
//! ([`yaml_quote`](crate::selfservice::yaml_quote)): strings always double-quoted with
//! every line break, quote and invisible character escaped, so a value can never become a
//! key, a list item or a document. The result is then read back and must be the original
//! file with exactly this item's three fields changed; anything else is refused (a check
//! against a mistake in this module, which hostile values cannot reach anyway).

use std::fmt;

use crate::{CatalogFile, Evidence, Item, Qualifier, State};
use serde::{
    Deserialize, Deserializer,
    de::{IgnoredAny, MapAccess, Visitor},
};
use serde_saphyr::Spanned;

use crate::selfservice::yaml_quote;

/// The fields of an item a catalog change sets, each to its whole new value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemEdit {
    /// The new state.
    pub state: State,
    /// The new qualifier; `None` removes it.
    pub qualifier: Option<Qualifier>,
    /// The whole new evidence list; empty removes the key.
    pub evidence: Vec<Evidence>,
}

/// Why a file could not be edited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The file does not parse (it is the base branch's, so this means it changed under us).
    #[error("the catalog file does not parse: {0}")]
    Parse(String),
    /// No item with that id in the file.
    #[error("no item `{0}` in the file")]
    NoItem(String),
    /// The item is written in a way this edit does not rewrite (a flow mapping).
    #[error("{0}")]
    Unsupported(String),
    /// The edited text does not read back as the intended change.
    #[error("the edited file does not read back as the intended change: {0}")]
    Mismatch(String),
}

/// A key and its value, with positions.
struct Entry {
    key: Spanned<String>,
    value: Spanned<IgnoredAny>,
}

/// A mapping's keys and values in document order, with their positions.
struct Pairs(Vec<Entry>);

impl<'de> Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = Pairs;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pairs, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<Spanned<IgnoredAny>>()?;
                    entries.push(Entry { key, value });
                }
                Ok(Pairs(entries))
            }
        }
        d.deserialize_map(PairsVisitor)
    }
}

/// Each item's keys with positions.
#[derive(Deserialize)]
struct ItemPositions {
    #[serde(default)]
    items: Vec<Spanned<Pairs>>,
}

/// Each item's edited fields as values (unknown keys ignored: the strict model is checked
/// when the result is read back).
#[derive(Deserialize)]
struct ItemValues {
    #[serde(default)]
    items: Vec<ItemValue>,
}

#[derive(Deserialize)]
struct ItemValue {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    state: Option<State>,
    #[serde(default)]
    qualifier: Option<Qualifier>,
    #[serde(default)]
    evidence: Vec<Spanned<Evidence>>,
}

/// One replacement of `text[start..end]`.
struct Splice {
    start: usize,
    end: usize,
    with: String,
    /// Goes after the other insertions at the same point (new keys after the last one).
    late: bool,
}

/// The byte offset of a position serde-saphyr reports for a string source.
fn offset(l: &serde_saphyr::Location) -> Result<usize, EditError> {
    l.span()
        .byte_offset()
        .and_then(|o| usize::try_from(o).ok())
        .ok_or_else(|| EditError::Parse("no byte position for a node".into()))
}

/// The byte range of a scalar value.
fn scalar_range(v: &Spanned<IgnoredAny>) -> Result<(usize, usize), EditError> {
    let start = offset(&v.referenced)?;
    let len = v
        .referenced
        .span()
        .byte_len()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0);
    Ok((start, start + len))
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |i| at + i + 1)
}

/// Moves `end` (a line start or the end of the text) back over blank and comment-only lines,
/// never before `floor`: those lines belong to what follows.
fn trim_back(text: &str, mut end: usize, floor: usize) -> usize {
    while end > floor {
        let prev = line_start(text, end - 1);
        if prev < floor {
            break;
        }
        let line = text[prev..end].trim();
        if line.is_empty() || line.starts_with('#') {
            end = prev;
        } else {
            break;
        }
    }
    end
}

/// The indentation of the line holding `at`, as spaces (a `- ` before a first key counts).
fn indent_of(text: &str, at: usize) -> String {
    " ".repeat(text[line_start(text, at)..at].chars().count())
}

/// Edits the item `id` of `text` (one catalog file) to `edit`; see the module documentation.
/// An edit that changes nothing returns the text unchanged.
pub fn edit_item(text: &str, id: &str, edit: &ItemEdit) -> Result<String, EditError> {
    let parse_error = |e: serde_saphyr::Error| EditError::Parse(e.to_string());
    let top: Pairs = serde_saphyr::from_str(text).map_err(parse_error)?;
    let positions: ItemPositions = serde_saphyr::from_str(text).map_err(parse_error)?;
    let values: ItemValues = serde_saphyr::from_str(text).map_err(parse_error)?;
    let index = values
        .items
        .iter()
        .position(|i| i.id.as_deref() == Some(id))
        .ok_or_else(|| EditError::NoItem(id.to_owned()))?;
    let (current, item) = match (values.items.get(index), positions.items.get(index)) {
        (Some(c), Some(p)) => (c, p),
        _ => return Err(EditError::NoItem(id.to_owned())),
    };
    let item_at = offset(&item.referenced)?;
    if text[item_at..].starts_with('{') {
        return Err(EditError::Unsupported(format!(
            "item `{id}` is written as a flow mapping ({{…}}); change it by hand"
        )));
    }

    // Where the item ends: the next item's line, else the next top-level key's, else the end.
    let item_limit = match positions.items.get(index + 1) {
        Some(next) => line_start(text, offset(&next.referenced)?),
        None => {
            let items_key = top
                .0
                .iter()
                .position(|e| e.key.value == "items")
                .ok_or_else(|| EditError::NoItem(id.to_owned()))?;
            match top.0.get(items_key + 1) {
                Some(next) => line_start(text, offset(&next.key.referenced)?),
                None => text.len(),
            }
        }
    };
    let keys = &item.value.0;
    let key_index = |name: &str| keys.iter().position(|e| e.key.value == name);
    // A key's lines: from its line to the next key's line (or the item's end), without the
    // comment and blank lines just before that.
    let region = |k: usize| -> Result<(usize, usize), EditError> {
        let key_at = offset(&keys[k].key.referenced)?;
        let start = line_start(text, key_at);
        let limit = match keys.get(k + 1) {
            Some(next) => line_start(text, offset(&next.key.referenced)?),
            None => item_limit,
        };
        Ok((start, trim_back(text, limit, line_end(text, key_at))))
    };
    let last_key = keys
        .len()
        .checked_sub(1)
        .ok_or_else(|| EditError::NoItem(id.to_owned()))?;
    let item_end = region(last_key)?.1;
    let key_indent = indent_of(text, offset(&keys[0].key.referenced)?);
    // New keys: lines inserted at `at` (the end of a key's lines); a file without a final
    // newline gets one first.
    let insert = |at: usize, lines: String| -> Splice {
        let with = if at == text.len() && !text.ends_with('\n') {
            format!("\n{lines}")
        } else {
            lines
        };
        Splice {
            start: at,
            end: at,
            with,
            late: true,
        }
    };

    let mut splices = Vec::new();
    // state: always present in a valid item.
    let state_key =
        key_index("state").ok_or_else(|| EditError::Parse(format!("item `{id}` has no state")))?;
    if current.state != Some(edit.state) {
        let k = state_key;
        let (start, end) = scalar_range(&keys[k].value)?;
        splices.push(Splice {
            start,
            end,
            with: edit.state.as_str().to_owned(),
            late: false,
        });
    }
    // qualifier
    if current.qualifier != edit.qualifier {
        match (key_index("qualifier"), edit.qualifier) {
            (Some(k), Some(q)) => {
                let (start, end) = scalar_range(&keys[k].value)?;
                splices.push(Splice {
                    start,
                    end,
                    with: q.as_str().to_owned(),
                    late: false,
                });
            }
            (Some(k), None) => {
                let (start, end) = region(k)?;
                splices.push(Splice {
                    start,
                    end,
                    with: String::new(),
                    late: false,
                });
            }
            // Right after the state it refines.
            (None, Some(q)) => splices.push(insert(
                region(state_key)?.1,
                format!("{key_indent}qualifier: {}\n", q.as_str()),
            )),
            (None, None) => {}
        }
    }
    // evidence
    let old: Vec<&Evidence> = current.evidence.iter().map(|e| &e.value).collect();
    if old.iter().copied().ne(edit.evidence.iter()) {
        match key_index("evidence") {
            None => splices.push(insert(
                item_end,
                evidence_block(&key_indent, &edit.evidence),
            )),
            Some(k) => {
                let (start, end) = region(k)?;
                let value_at = offset(&keys[k].value.referenced)?;
                let block = !current.evidence.is_empty()
                    && !text[value_at..].starts_with('[')
                    && line_start(text, value_at) > start;
                if edit.evidence.is_empty() || !block {
                    let with = if edit.evidence.is_empty() {
                        String::new()
                    } else {
                        evidence_block(&key_indent, &edit.evidence)
                    };
                    splices.push(Splice {
                        start,
                        end,
                        with,
                        late: false,
                    });
                } else {
                    evidence_entries(text, &current.evidence, end, &edit.evidence, &mut splices)?;
                }
            }
        }
    }

    let out = apply(text, &splices);
    check_result(text, &out, id, edit)?;
    Ok(out)
}

/// Keeps the entries of a block sequence that stay, as written, and drops or adds the rest.
fn evidence_entries(
    text: &str,
    old: &[Spanned<Evidence>],
    end: usize,
    new: &[Evidence],
    splices: &mut Vec<Splice>,
) -> Result<(), EditError> {
    let mut ranges = Vec::with_capacity(old.len());
    for (i, e) in old.iter().enumerate() {
        let at = offset(&e.referenced)?;
        let start = line_start(text, at);
        let limit = match old.get(i + 1) {
            Some(next) => line_start(text, offset(&next.referenced)?),
            None => end,
        };
        ranges.push((start, trim_back(text, limit, line_end(text, at))));
    }
    let first = ranges[0].0;
    let dash = text[first..].find(|c: char| c != ' ').unwrap_or(0);
    if !text[first + dash..].starts_with('-') {
        return Err(EditError::Unsupported(
            "the evidence list is not written one `- ` entry per line; change it by hand".into(),
        ));
    }
    let dash_indent = " ".repeat(dash);
    let mut cursor = 0;
    let mut at = first;
    for e in new {
        match (cursor..old.len()).find(|&j| old[j].value == *e) {
            Some(j) => {
                for dropped in &ranges[cursor..j] {
                    splices.push(Splice {
                        start: dropped.0,
                        end: dropped.1,
                        with: String::new(),
                        late: false,
                    });
                }
                at = ranges[j].1;
                cursor = j + 1;
            }
            None => splices.push(Splice {
                start: at,
                end: at,
                with: evidence_entry(&dash_indent, e),
                late: false,
            }),
        }
    }
    for dropped in &ranges[cursor..] {
        splices.push(Splice {
            start: dropped.0,
            end: dropped.1,
            with: String::new(),
            late: false,
        });
    }
    Ok(())
}

/// `evidence:` and its entries, as lines at `indent`.
fn evidence_block(indent: &str, evidence: &[Evidence]) -> String {
    let mut out = format!("{indent}evidence:\n");
    let entry_indent = format!("{indent}  ");
    for e in evidence {
        out.push_str(&evidence_entry(&entry_indent, e));
    }
    out
}

/// One evidence entry as a block mapping whose dash is at `indent`.
fn evidence_entry(indent: &str, e: &Evidence) -> String {
    let mut fields: Vec<(&str, String)> = Vec::new();
    let quoted = |s: &str| {
        let mut q = String::new();
        yaml_quote(&mut q, s);
        q
    };
    match e {
        Evidence::Attestation { by, date, what } => {
            fields.push(("kind", "attestation".into()));
            fields.push(("by", quoted(by)));
            fields.push(("date", quoted(date)));
            fields.push(("what", quoted(what)));
        }
        Evidence::Probe { url, expect_status } => {
            fields.push(("kind", "probe".into()));
            fields.push(("url", quoted(url)));
            fields.push(("expect_status", expect_status.to_string()));
        }
        Evidence::Argocd { app, instance } => {
            fields.push(("kind", "argocd".into()));
            fields.push(("app", quoted(app)));
            if let Some(i) = instance {
                fields.push(("instance", quoted(i)));
            }
        }
        Evidence::Reference { text, url } => {
            fields.push(("kind", "reference".into()));
            fields.push(("text", quoted(text)));
            if let Some(u) = url {
                fields.push(("url", quoted(u)));
            }
        }
    }
    let mut out = String::new();
    for (i, (key, value)) in fields.iter().enumerate() {
        let lead = if i == 0 { "- " } else { "  " };
        out.push_str(&format!("{indent}{lead}{key}: {value}\n"));
    }
    out
}

/// Applies non-overlapping splices; insertions at a point go before a removal starting there,
/// and in the order they were made (the sort is stable).
fn apply(text: &str, splices: &[Splice]) -> String {
    let mut order: Vec<&Splice> = splices.iter().collect();
    order.sort_by_key(|s| (s.start, s.end, s.late));
    let mut out = String::with_capacity(text.len() + 256);
    let mut cursor = 0;
    for s in order {
        let start = s.start.max(cursor);
        out.push_str(&text[cursor..start]);
        out.push_str(&s.with);
        cursor = s.end.max(cursor);
    }
    out.push_str(&text[cursor..]);
    out
}

/// The edited text must read as the original file with only this item's three fields set.
fn check_result(before: &str, after: &str, id: &str, edit: &ItemEdit) -> Result<(), EditError> {
    let read = |t: &str| serde_saphyr::from_str::<CatalogFile>(t);
    let mut expected = read(before).map_err(|e| EditError::Parse(e.to_string()))?;
    let got = read(after).map_err(|e| EditError::Mismatch(e.to_string()))?;
    let item: &mut Item = expected
        .items
        .iter_mut()
        .find(|i| i.id == id)
        .ok_or_else(|| EditError::NoItem(id.to_owned()))?;
    item.state = edit.state;
    item.qualifier = edit.qualifier;
    item.evidence = edit.evidence.as_slice().into();
    if got == expected {
        Ok(())
    } else {
        Err(EditError::Mismatch(format!(
            "item `{id}` or its neighbours differ from what was asked"
        )))
    }
}

#[cfg(test)]
mod tests;
