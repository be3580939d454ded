//! The team tools as Cline's SDK shows them to the model: names, descriptions and input
//! schemas, recorded from its v4.1.12 sources (`specs.json`, in Cline's order).

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// One tool as the model sees it.
#[derive(Debug, Clone, Deserialize)]
pub struct Spec {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its input's JSON Schema.
    pub input_schema: Value,
}

/// The name of the tool only the lead is given (a teammate starts no teammate).
pub const SPAWN: &str = "team_spawn_teammate";

/// Every team tool, in Cline's order.
pub fn all() -> &'static [Spec] {
    static SPECS: OnceLock<Vec<Spec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        serde_json::from_str(include_str!("specs.json")).unwrap_or_else(|e| {
            // The file is part of the build; a test reads it too.
            panic!("specs.json: {e}")
        })
    })
}

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static Spec> {
    all().iter().find(|spec| spec.name == name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn there_are_cline_s_eighteen() {
        assert_eq!(all().len(), 18);
        assert_eq!(all()[0].name, SPAWN);
        assert_eq!(
            find("team_mission_log").unwrap().input_schema["required"],
            serde_json::json!(["kind", "summary"])
        );
    }
}
