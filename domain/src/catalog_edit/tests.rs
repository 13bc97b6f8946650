use proptest::prelude::*;

use super::*;

const FILE: &str = "\
# Layer 3: network. Keep the items in the order of the architecture document.
layers:
  - id: l3
    kind: layer
    name: Rede

items:
  - id: vyos-franca   # the edge router
    name: VyOS Franca
    kind: component
    layer: l3
    state: validated # checked in October
    notes: \"VyOS Franca em produção.\"
    evidence:
      - kind: reference
        text: VyOS Franca em produção
      # the probe runs from the SP site
      - kind: probe
        url: https://vyos.example.org/healthz

  - id: vyos-sp
    name: VyOS SP
    kind: component
    layer: l3
    state: desired
    qualifier: in_progress
    tags: [network]
";

fn reference(text: &str) -> Evidence {
    Evidence::Reference {
        text: text.into(),
        url: None,
    }
}

fn probe() -> Evidence {
    Evidence::Probe {
        url: "https://vyos.example.org/healthz".into(),
        expect_status: 200,
    }
}

fn attestation(by: &str, date: &str, what: &str) -> Evidence {
    Evidence::Attestation {
        by: by.into(),
        date: date.into(),
        what: what.into(),
    }
}

fn franca(state: State, qualifier: Option<Qualifier>, evidence: Vec<Evidence>) -> ItemEdit {
    ItemEdit {
        state,
        qualifier,
        evidence,
    }
}

/// The lines of `after` that are not in `before` and those of `before` not in `after`, by
/// a line diff.
fn changed_lines(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    let diff = similar::TextDiff::from_lines(before, after);
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let line = change.value().trim_end_matches('\n').to_owned();
        match change.tag() {
            similar::ChangeTag::Delete => removed.push(line),
            similar::ChangeTag::Insert => added.push(line),
            similar::ChangeTag::Equal => {}
        }
    }
    (removed, added)
}

#[test]
fn changing_the_state_replaces_only_its_value_and_keeps_the_comment_on_its_line() {
    let edit = franca(
        State::Declared,
        None,
        vec![reference("VyOS Franca em produção"), probe()],
    );

    let out = edit_item(FILE, "vyos-franca", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert_eq!(removed, ["    state: validated # checked in October"]);
    assert_eq!(added, ["    state: declared # checked in October"]);
}

#[test]
fn an_edit_that_changes_nothing_leaves_the_file_as_it_was() {
    let edit = franca(
        State::Validated,
        None,
        vec![reference("VyOS Franca em produção"), probe()],
    );

    assert_eq!(edit_item(FILE, "vyos-franca", &edit).unwrap(), FILE);
}

#[test]
fn a_new_qualifier_is_one_line_at_the_indentation_of_the_item_keys() {
    let edit = franca(
        State::Validated,
        Some(Qualifier::Partial),
        vec![reference("VyOS Franca em produção"), probe()],
    );

    let out = edit_item(FILE, "vyos-franca", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(added, ["    qualifier: partial"]);
}

#[test]
fn removing_a_qualifier_removes_its_line_only() {
    let edit = ItemEdit {
        state: State::Desired,
        qualifier: None,
        evidence: vec![],
    };

    let out = edit_item(FILE, "vyos-sp", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert_eq!(removed, ["    qualifier: in_progress"]);
    assert!(added.is_empty(), "{added:?}");
}

#[test]
fn an_added_attestation_is_new_lines_after_the_entries_that_stay_untouched() {
    let edit = franca(
        State::Validated,
        None,
        vec![
            reference("VyOS Franca em produção"),
            probe(),
            attestation("ana", "2026-11-30", "failover tested"),
        ],
    );

    let out = edit_item(FILE, "vyos-franca", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert!(removed.is_empty(), "{removed:?}");
    assert_eq!(
        added,
        [
            "      - kind: attestation",
            "        by: \"ana\"",
            "        date: \"2026-11-30\"",
            "        what: \"failover tested\"",
        ]
    );
    assert!(out.contains("      # the probe runs from the SP site\n      - kind: probe"));
}

#[test]
fn removing_an_entry_removes_its_lines_and_keeps_the_comment_before_the_next_one() {
    let edit = franca(State::Validated, None, vec![probe()]);

    let out = edit_item(FILE, "vyos-franca", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert_eq!(
        removed,
        [
            "      - kind: reference",
            "        text: VyOS Franca em produção"
        ]
    );
    assert!(added.is_empty(), "{added:?}");
    assert!(out.contains("    evidence:\n      # the probe runs from the SP site\n"));
}

#[test]
fn an_item_without_evidence_gets_an_evidence_block_after_its_last_key() {
    let edit = ItemEdit {
        state: State::Validated,
        qualifier: None,
        evidence: vec![attestation("rui", "2026-11-29", "routes announced")],
    };

    let out = edit_item(FILE, "vyos-sp", &edit).unwrap();

    let (removed, added) = changed_lines(FILE, &out);
    assert_eq!(
        removed,
        ["    state: desired", "    qualifier: in_progress"]
    );
    assert_eq!(
        added,
        [
            "    state: validated",
            "    evidence:",
            "      - kind: attestation",
            "        by: \"rui\"",
            "        date: \"2026-11-29\"",
            "        what: \"routes announced\"",
        ]
    );
}

#[test]
fn the_last_item_of_a_file_without_a_final_newline_is_edited_too() {
    let text = FILE.trim_end();
    let edit = ItemEdit {
        state: State::Desired,
        qualifier: Some(Qualifier::Future),
        evidence: vec![reference("roadmap")],
    };

    let out = edit_item(text, "vyos-sp", &edit).unwrap();

    let expected = format!(
        "{}\n    evidence:\n      - kind: reference\n        text: \"roadmap\"\n",
        text.replace("qualifier: in_progress", "qualifier: future")
    );
    assert_eq!(out, expected);
}

#[test]
fn an_item_written_as_a_flow_mapping_is_refused_rather_than_rewritten() {
    let text = "items:\n  - {id: a, name: A, kind: component, layer: l3, state: desired}\n";
    let edit = ItemEdit {
        state: State::Declared,
        qualifier: None,
        evidence: vec![],
    };

    let err = edit_item(text, "a", &edit).unwrap_err();

    assert!(matches!(err, EditError::Unsupported(_)), "{err}");
}

#[test]
fn an_unknown_item_is_reported() {
    let edit = franca(State::Declared, None, vec![]);

    assert_eq!(
        edit_item(FILE, "nope", &edit).unwrap_err(),
        EditError::NoItem("nope".into())
    );
}

#[test]
fn hostile_values_stay_inside_their_quoted_scalars() {
    let hostile = [
        "x\n    qualifier: rejected",
        "a: b # not a comment",
        "\"]\n- kind: probe\n  url: http://evil",
        "line\u{2028}separator and \u{202E}override and \u{FEFF}bom",
        "---\n...",
        "back\\slash \\\" quote",
        "&anchor *alias !tag {flow} [seq] |block >folded %directive @ `",
    ];
    for value in hostile {
        let edit = franca(
            State::Validated,
            None,
            vec![
                reference("VyOS Franca em produção"),
                probe(),
                attestation(value, "2026-11-30", value),
            ],
        );

        let out = edit_item(FILE, "vyos-franca", &edit).unwrap();

        let (removed, added) = changed_lines(FILE, &out);
        assert!(removed.is_empty(), "{value:?}: {removed:?}");
        assert_eq!(added.len(), 4, "{value:?} added {added:?}");
        let file: CatalogFile = serde_saphyr::from_str(&out).unwrap();
        let item = file.items.iter().find(|i| i.id == "vyos-franca").unwrap();
        assert_eq!(item.evidence[2], attestation(value, "2026-11-30", value));
        assert_eq!(item.qualifier, None);
    }
}

fn any_evidence() -> impl Strategy<Value = Evidence> {
    // Any character, with YAML's indicators, line breaks and invisible characters favoured.
    let text = r#"(?s)(.|[\n\r\t:#"'\\{}\[\],&*!|>%@`\x{2028}\x{202E}\x{FEFF}-]){0,30}"#;
    // The catalog takes http(s) addresses only; what follows the host is as hostile as the rest.
    let url = text.prop_map(|rest| format!("https://example.org/{rest}"));
    prop_oneof![
        (text, text, text).prop_map(|(by, date, what)| Evidence::Attestation { by, date, what }),
        (text, proptest::option::of(url.clone()))
            .prop_map(|(text, url)| Evidence::Reference { text, url }),
        (url, 100u16..600).prop_map(|(url, expect_status)| Evidence::Probe { url, expect_status }),
        (text, proptest::option::of(text))
            .prop_map(|(app, instance)| Evidence::Argocd { app, instance }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the values, the file reads back as the intended change (the edit checks it)
    /// and every line outside the edited item is untouched.
    #[test]
    fn any_values_give_exactly_the_intended_change(
        state in prop::sample::select(State::ALL.to_vec()),
        qualifier in proptest::option::of(prop::sample::select(Qualifier::ALL.to_vec())),
        keep_reference in any::<bool>(),
        keep_probe in any::<bool>(),
        added in proptest::collection::vec(any_evidence(), 0..3),
        item in prop::sample::select(vec!["vyos-franca", "vyos-sp"]),
    ) {
        let mut evidence = Vec::new();
        if keep_reference && item == "vyos-franca" {
            evidence.push(reference("VyOS Franca em produção"));
        }
        if keep_probe && item == "vyos-franca" {
            evidence.push(probe());
        }
        evidence.extend(added);
        let edit = ItemEdit { state, qualifier, evidence };

        let out = edit_item(FILE, item, &edit).unwrap();

        let file: CatalogFile = serde_saphyr::from_str(&out).unwrap();
        let got = file.items.iter().find(|i| i.id == item).unwrap();
        prop_assert_eq!(got.state, edit.state);
        prop_assert_eq!(got.qualifier, edit.qualifier);
        prop_assert_eq!(&*got.evidence, edit.evidence.as_slice());
        // The head of the file and the other item keep their lines.
        prop_assert!(out.starts_with(&FILE[..FILE.find("items:").unwrap()]));
        let other = if item == "vyos-franca" { "  - id: vyos-sp\n    name: VyOS SP\n" } else { "  - id: vyos-franca   # the edge router\n" };
        prop_assert!(out.contains(other));
    }
}
