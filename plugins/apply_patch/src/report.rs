//! The result text of an applied patch, in Cline's format.

use patch_support::js;
use patch_support::plan::Entry;

/// `Successfully applied patch to the following files:`, then per file (in the order a
/// JavaScript object lists them) either `<path>: [deleted]` or its saved content in a
/// `<final_file_content>` block, then the fuzz note when some hunk did not match exactly.
pub fn success_text(results: &[(String, Entry)], fuzz: u64) -> String {
    let keys: Vec<&str> = results.iter().map(|(path, _)| path.as_str()).collect();
    let mut parts = vec!["Successfully applied patch to the following files:".to_string()];
    for i in js::object_order(&keys) {
        let (path, entry) = &results[i];
        match entry {
            Entry::Deleted => parts.push(format!("\n{path}: [deleted]")),
            Entry::Saved(content) => {
                let shown = final_content(&for_model(path, content));
                // Cline shows nothing for a file saved empty.
                if !shown.is_empty() {
                    parts.push(format!("\n<final_file_content path=\"{path}\">"));
                    parts.push(shown);
                    parts.push("\n</final_file_content>".to_string());
                }
            }
        }
    }
    if fuzz > 0 {
        parts.push(format!("\nNote: Patch applied with fuzz factor {fuzz}"));
    }
    parts.join("\n")
}

/// The saved file as Cline's headless file writer reports it: the content with trailing
/// whitespace (final newlines included) trimmed; a file saved empty shows nothing.
pub fn final_content(content: &str) -> String {
    js::trim_end(content).to_string()
}

/// The text shown for a file: Jupyter notebooks without their cell outputs (noise for editing,
/// and possibly huge), everything else as it is.
fn for_model(path: &str, text: &str) -> String {
    if !path.to_lowercase().ends_with(".ipynb") {
        return text.to_string();
    }
    tool_api::sdk::files::strip_notebook_outputs(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_files_deletions_and_fuzz_are_reported() {
        let results = vec![
            ("b.txt".to_string(), Entry::Saved("x\n\n".to_string())),
            ("a.txt".to_string(), Entry::Deleted),
            ("7".to_string(), Entry::Saved("seven".to_string())),
        ];
        assert_eq!(
            success_text(&results, 101),
            "Successfully applied patch to the following files:\n\n\
             <final_file_content path=\"7\">\nseven\n\n</final_file_content>\n\n\
             <final_file_content path=\"b.txt\">\nx\n\n</final_file_content>\n\n\
             a.txt: [deleted]\n\n\
             Note: Patch applied with fuzz factor 101"
        );
    }

    #[test]
    fn final_content_is_trimmed_at_the_end() {
        assert_eq!(final_content("a\nb"), "a\nb");
        assert_eq!(final_content("a\nb\n\n  \n"), "a\nb");
        assert_eq!(final_content("\n"), "");
        assert_eq!(final_content("  x"), "  x");
    }

    #[test]
    fn notebook_outputs_are_left_out() {
        let notebook = r#"{"cells":[{"cell_type":"code","outputs":[{"text":"big"}]}]}"#;
        assert_eq!(
            for_model("nb/A.IPYNB", notebook),
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": []\n  }\n ]\n}"
        );
        assert_eq!(for_model("a.ipynb", "not json"), "not json");
        assert_eq!(for_model("a.json", notebook), notebook);
    }
}
