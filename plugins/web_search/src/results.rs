//! Search results and the list the model reads.

use serde_json::Value;

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The page's title.
    pub title: String,
    /// The page's URL.
    pub url: String,
}

impl Hit {
    /// A result from a JSON object with `title` and `url` (missing fields are empty).
    pub fn from_json(value: &Value) -> Self {
        let field = |name: &str| match value.get(name) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        Self {
            title: field("title"),
            url: field("url"),
        }
    }
}

/// Cline's result text: `Search completed (N results found)`, then, when there are any, `:` and
/// one numbered entry per result with its URL indented by three spaces and a blank line after.
pub fn format_results(hits: &[Hit]) -> String {
    let mut out = format!("Search completed ({} results found)", hits.len());
    if !hits.is_empty() {
        out.push_str(":\n\n");
        for (i, hit) in hits.iter().enumerate() {
            out.push_str(&format!("{}. {}\n   {}\n\n", i + 1, hit.title, hit.url));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_list_matches_clines_example() {
        let hits = [
            Hit {
                title: "Tokio tutorial".to_string(),
                url: "https://tokio.rs/tokio/tutorial".to_string(),
            },
            Hit {
                title: "Async book".to_string(),
                url: "https://rust-lang.github.io/async-book/".to_string(),
            },
        ];
        assert_eq!(
            format_results(&hits),
            "Search completed (2 results found):\n\n1. Tokio tutorial\n   https://tokio.rs/tokio/tutorial\n\n2. Async book\n   https://rust-lang.github.io/async-book/\n\n"
        );
    }

    #[test]
    fn no_results_is_one_line() {
        assert_eq!(format_results(&[]), "Search completed (0 results found)");
    }

    #[test]
    fn hits_tolerate_missing_fields() {
        assert_eq!(
            Hit::from_json(&json!({"url": "https://a.com", "title": null, "score": 1})),
            Hit {
                title: String::new(),
                url: "https://a.com".to_string(),
            }
        );
    }
}
