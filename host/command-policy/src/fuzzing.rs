//! Cline's stage of the check on its own, behind the `fuzzing` feature: the fuzz target of the
//! command policy holds the whole check to never allowing what this stage denies.

use crate::{cline, Rules};

/// Whether Cline's own check (dangerous characters, then the allow/deny rules on every
/// segment) refuses `command`. A tokenizer failure counts as allowed, as in Cline.
pub fn cline_stage_denies(rules: &Rules, command: &str) -> bool {
    if cline::dangerous_char(command).is_some() {
        return true;
    }
    match cline::tokenize(command) {
        Ok(tokens) => cline::validate(&cline::segments(&tokens), rules).is_some(),
        Err(_) => false,
    }
}
