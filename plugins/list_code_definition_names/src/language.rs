//! The languages the tool parses: which file extensions, which grammar, which query.

use std::sync::OnceLock;

use tree_sitter::{Query, QueryError};

/// A language with a grammar and a definition query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.js`, `.jsx` (the JavaScript grammar parses JSX too).
    JavaScript,
    /// `.ts`
    TypeScript,
    /// `.tsx`: the TSX grammar with the TypeScript query.
    Tsx,
    /// `.py`
    Python,
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.c`, `.h`
    C,
    /// `.cpp`, `.hpp`
    Cpp,
}

impl Language {
    /// Every language, in a fixed order.
    pub const ALL: [Language; 9] = [
        Language::Rust,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Python,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
    ];

    /// The language of a file extension (without the dot). Matching is case-sensitive, as in
    /// Cline: `MAIN.C` is not picked up.
    pub fn from_extension(extension: &str) -> Option<Self> {
        Some(match extension {
            "rs" => Self::Rust,
            "js" | "jsx" => Self::JavaScript,
            "ts" => Self::TypeScript,
            "tsx" => Self::Tsx,
            "py" => Self::Python,
            "go" => Self::Go,
            "java" => Self::Java,
            "c" | "h" => Self::C,
            "cpp" | "hpp" => Self::Cpp,
            _ => return None,
        })
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        let function = match self {
            Self::Rust => tree_sitter_rust::LANGUAGE,
            Self::JavaScript => tree_sitter_javascript::LANGUAGE,
            Self::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
            Self::Tsx => tree_sitter_typescript::LANGUAGE_TSX,
            Self::Python => tree_sitter_python::LANGUAGE,
            Self::Go => tree_sitter_go::LANGUAGE,
            Self::Java => tree_sitter_java::LANGUAGE,
            Self::C => tree_sitter_c::LANGUAGE,
            Self::Cpp => tree_sitter_cpp::LANGUAGE,
        };
        function.into()
    }

    /// The source of the definition query (see `queries/README.md` for its capture names).
    pub fn query_source(self) -> &'static str {
        match self {
            Self::Rust => include_str!("queries/rust.scm"),
            Self::JavaScript => include_str!("queries/javascript.scm"),
            Self::TypeScript | Self::Tsx => include_str!("queries/typescript.scm"),
            Self::Python => include_str!("queries/python.scm"),
            Self::Go => include_str!("queries/go.scm"),
            Self::Java => include_str!("queries/java.scm"),
            Self::C => include_str!("queries/c.scm"),
            Self::Cpp => include_str!("queries/cpp.scm"),
        }
    }

    /// The compiled definition query, built once per language and process.
    pub fn query(self) -> Result<&'static Query, &'static QueryError> {
        static QUERIES: [OnceLock<Result<Query, QueryError>>; 9] = [const { OnceLock::new() }; 9];
        QUERIES[self.index()]
            .get_or_init(|| Query::new(&self.grammar(), self.query_source()))
            .as_ref()
    }

    /// The position in [`Language::ALL`].
    fn index(self) -> usize {
        match self {
            Self::Rust => 0,
            Self::JavaScript => 1,
            Self::TypeScript => 2,
            Self::Tsx => 3,
            Self::Python => 4,
            Self::Go => 5,
            Self::Java => 6,
            Self::C => 7,
            Self::Cpp => 8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for language in Language::ALL {
            if let Err(e) = language.query() {
                panic!("{language:?}: {e}");
            }
        }
    }

    #[test]
    fn index_matches_the_order_of_all() {
        for (i, language) in Language::ALL.iter().enumerate() {
            assert_eq!(language.index(), i);
        }
    }

    #[test]
    fn extensions_are_matched_exactly() {
        assert_eq!(Language::from_extension("tsx"), Some(Language::Tsx));
        assert_eq!(Language::from_extension("h"), Some(Language::C));
        assert_eq!(Language::from_extension("hpp"), Some(Language::Cpp));
        assert_eq!(Language::from_extension("JS"), None);
        assert_eq!(Language::from_extension("cs"), None);
        assert_eq!(Language::from_extension("md"), None);
    }
}
