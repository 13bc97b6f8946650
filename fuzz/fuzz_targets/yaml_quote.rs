//! Any text a form may carry, written into a template's YAML: it stays one scalar, the value
//! of its key, and reads back as exactly the text written. Nothing can end the scalar early,
//! add a key, a list item or a document.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mirante_domain::selfservice::yaml_quote;
use serde::Deserialize;

/// The document a value is written into; any other key is an escape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    value: String,
    after: u32,
}

fuzz_target!(|text: &str| {
    let mut doc = String::from("value: ");
    yaml_quote(&mut doc, text);
    doc.push_str("\nafter: 1\n");

    let read: Doc =
        serde_saphyr::from_str(&doc).unwrap_or_else(|e| panic!("{doc:?} does not read: {e}"));
    assert_eq!(read.value, text, "{doc:?}");
    assert_eq!(read.after, 1, "{doc:?}");
});
