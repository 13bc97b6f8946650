//! Errors found in a catalog, each with the place it was found.
//!
//! Not behind the `load` feature: the server reports reload errors through the API and the
//! UI (wasm, without `load`) shows them, so both sides need the same type.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One problem in the catalog, at a file, line and column.
///
/// `line` and `column` are 1-based and count characters, not bytes. Both are 0 when the problem
/// has no position inside the file (an unreadable file, a missing directory).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Path of the file relative to the catalog root, with `/` separators (or the catalog
    /// directory itself for problems with the directory).
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub line: u64,
    /// 1-based column in characters, 0 when unknown.
    pub column: u64,
    /// What is wrong, in one line.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic whose file name and message are made safe to print.
    ///
    /// Both can carry text from the catalog (file names, ids, unknown keys); control characters
    /// are escaped so a crafted catalog cannot inject terminal escapes or fake extra lines, and
    /// very long messages are cut so one bad value cannot flood a log.
    pub fn new(file: impl AsRef<str>, line: u64, column: u64, message: impl AsRef<str>) -> Self {
        Diagnostic {
            file: sanitize(file.as_ref(), 512),
            line,
            column,
            message: sanitize(message.as_ref(), 2048),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// Every problem found in a catalog; a catalog with any of them is refused whole.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, thiserror::Error)]
#[error("{}", display_lines(.0))]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Number of problems.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The problems, sorted by file, line and column.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

fn display_lines(d: &[Diagnostic]) -> String {
    let mut s = String::new();
    for (i, x) in d.iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&x.to_string());
    }
    s
}

/// Escapes control characters and cuts `s` to at most `max` characters.
fn sanitize(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_displays_as_file_line_column_message() {
        let d = Diagnostic::new("items/a.yaml", 3, 7, "unknown layer `l9`");

        let shown = d.to_string();

        assert_eq!(shown, "items/a.yaml:3:7: unknown layer `l9`");
    }

    #[test]
    fn a_diagnostic_without_position_displays_file_and_message_only() {
        let d = Diagnostic::new("catalog", 0, 0, "cannot read directory");

        assert_eq!(d.to_string(), "catalog: cannot read directory");
    }

    #[test]
    fn control_characters_in_messages_are_escaped() {
        let d = Diagnostic::new("a\nb.yaml", 1, 1, "unknown field `x\u{1b}[31m`");

        assert_eq!(d.file, "a\\nb.yaml");
        assert_eq!(d.message, "unknown field `x\\u{1b}[31m`");
    }

    #[test]
    fn diagnostics_display_one_per_line() {
        let ds = Diagnostics(vec![
            Diagnostic::new("a.yaml", 1, 2, "first"),
            Diagnostic::new("b.yaml", 3, 4, "second"),
        ]);

        assert_eq!(ds.to_string(), "a.yaml:1:2: first\nb.yaml:3:4: second");
    }
}
