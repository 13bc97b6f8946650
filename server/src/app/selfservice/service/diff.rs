//! The unified diffs a preview shows.

use similar::TextDiff;

/// A unified diff of `old` (absent: a new file) to `new` for `path`.
pub fn unified_diff(path: &str, old: Option<&str>, new: &str) -> String {
    let before = old.unwrap_or("");
    let diff = TextDiff::from_lines(before, new);
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    diff.unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{path}"))
        .to_string()
}

/// A unified diff of deleting `path`, whose content on the base branch is `old`.
pub(super) fn deletion_diff(path: &str, old: &str) -> String {
    TextDiff::from_lines(old, "")
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), "/dev/null")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_diffs_against_dev_null() {
        let diff = unified_diff("ws/a.yaml", None, "kind: Namespace\n");
        assert!(
            diff.starts_with("--- /dev/null\n+++ b/ws/a.yaml\n"),
            "{diff}"
        );
        assert!(diff.contains("+kind: Namespace"), "{diff}");
    }

    #[test]
    fn a_changed_file_shows_removed_and_added_lines() {
        let diff = unified_diff("a.yaml", Some("x: 1\ny: 2\n"), "x: 1\ny: 3\n");
        assert!(diff.contains("--- a/a.yaml"), "{diff}");
        assert!(diff.contains("-y: 2\n+y: 3"), "{diff}");
    }

    #[test]
    fn a_deleted_file_diffs_to_dev_null_with_every_line_removed() {
        let diff = deletion_diff("ws/a.yaml", "kind: Namespace\nmetadata: {}\n");
        assert!(
            diff.starts_with("--- a/ws/a.yaml\n+++ /dev/null\n"),
            "{diff}"
        );
        assert!(diff.contains("-kind: Namespace\n-metadata: {}\n"), "{diff}");
    }
}
