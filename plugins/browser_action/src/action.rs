//! The action a call asks for, checked from its parameters.

use serde_json::{json, Value};
use tool_api::sdk::missing;
use tool_api::sdk::prelude::*;

/// The actions the tool knows, in the order the model is told about them.
pub const ACTION_NAMES: [&str; 6] = [
    "launch",
    "click",
    "type",
    "scroll_down",
    "scroll_up",
    "close",
];

/// One browser action with its checked parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Start a fresh browser and open `url`.
    Launch {
        /// The URL, as given.
        url: String,
    },
    /// Click at a point of the viewport.
    Click {
        /// The point, in CSS pixels.
        x: f64,
        /// The point, in CSS pixels.
        y: f64,
        /// The coordinate as the model wrote it (reported back as the mouse position).
        coordinate: String,
    },
    /// Type text into whatever has the focus.
    Type {
        /// The text.
        text: String,
    },
    /// Scroll one step down.
    ScrollDown,
    /// Scroll one step up.
    ScrollUp,
    /// Close the browser.
    Close,
}

/// Why the parameters do not make an action. Every such call closes the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadInput {
    /// A required parameter is missing (an unknown action counts as a missing `action`, as in
    /// Cline).
    Missing(&'static str),
    /// The coordinate is not two numbers.
    Coordinate(String),
}

impl BadInput {
    /// The error the model reads.
    pub fn to_error(&self) -> ToolError {
        match self {
            Self::Missing(param) => missing(param),
            Self::Coordinate(raw) => ToolError::new(
                ToolErrorKind::INVALID_PARAMS,
                crate::texts::execution_error(&format!(
                    "Invalid coordinate '{raw}': expected two numbers as \"x,y\", for example 450,300."
                )),
            ),
        }
    }
}

impl Action {
    /// Reads the action from the call's parameters.
    pub fn parse(params: &Params) -> Result<Self, BadInput> {
        let action = params.string("action").unwrap_or_default();
        // JavaScript falsiness: absent, null and "" are missing; whitespace is a value.
        let required = |name: &'static str| {
            params
                .string(name)
                .filter(|v| !v.is_empty())
                .ok_or(BadInput::Missing(name))
        };
        match action.as_str() {
            "launch" => Ok(Self::Launch {
                url: required("url")?,
            }),
            "click" => {
                let coordinate = required("coordinate")?;
                let (x, y) = parse_coordinate(&coordinate)
                    .ok_or(BadInput::Coordinate(coordinate.clone()))?;
                Ok(Self::Click { x, y, coordinate })
            }
            "type" => Ok(Self::Type {
                text: required("text")?,
            }),
            "scroll_down" => Ok(Self::ScrollDown),
            "scroll_up" => Ok(Self::ScrollUp),
            "close" => Ok(Self::Close),
            _ => Err(BadInput::Missing("action")),
        }
    }

    /// The action's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Launch { .. } => "launch",
            Self::Click { .. } => "click",
            Self::Type { .. } => "type",
            Self::ScrollDown => "scroll_down",
            Self::ScrollUp => "scroll_up",
            Self::Close => "close",
        }
    }

    /// The `browser_action` UI payload: `{action, coordinate, text}` with absent fields left
    /// out, as `JSON.stringify` does with `undefined`.
    pub fn ui_payload(&self) -> String {
        let mut payload = json!({"action": self.name()});
        match self {
            Self::Click { coordinate, .. } => {
                payload["coordinate"] = Value::String(coordinate.clone());
            }
            Self::Type { text } => payload["text"] = Value::String(text.clone()),
            _ => {}
        }
        payload.to_string()
    }
}

/// `"x,y"`: two finite numbers around a comma, spaces allowed (`450,300`, `12.5, 80`).
///
/// Cline passes `Number()` of each half to the mouse without a check, so `"a,b"` clicks at
/// NaN; here anything that is not two numbers is refused before the browser is touched.
pub fn parse_coordinate(text: &str) -> Option<(f64, f64)> {
    let (x, y) = text.split_once(',')?;
    let number = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    Some((number(x)?, number(y)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Action, BadInput> {
        Action::parse(&Params::from_json(json).unwrap_or_default())
    }

    #[test]
    fn every_action_is_read_with_its_parameter() {
        assert_eq!(
            parse(r#"{"action":"launch","url":"http://localhost:3000"}"#),
            Ok(Action::Launch {
                url: "http://localhost:3000".to_string()
            })
        );
        assert_eq!(
            parse(r#"{"action":"click","coordinate":"450, 300.5"}"#),
            Ok(Action::Click {
                x: 450.0,
                y: 300.5,
                coordinate: "450, 300.5".to_string()
            })
        );
        assert_eq!(
            parse(r#"{"action":"type","text":" "}"#),
            Ok(Action::Type {
                text: " ".to_string()
            })
        );
        assert_eq!(parse(r#"{"action":"scroll_down"}"#), Ok(Action::ScrollDown));
        assert_eq!(parse(r#"{"action":"scroll_up"}"#), Ok(Action::ScrollUp));
        assert_eq!(parse(r#"{"action":"close"}"#), Ok(Action::Close));
    }

    #[test]
    fn missing_and_unknown_values_are_reported_by_parameter() {
        assert_eq!(parse("{}"), Err(BadInput::Missing("action")));
        assert_eq!(
            parse(r#"{"action":"hover"}"#),
            Err(BadInput::Missing("action"))
        );
        assert_eq!(
            parse(r#"{"action":"Launch","url":"x"}"#),
            Err(BadInput::Missing("action"))
        );
        assert_eq!(
            parse(r#"{"action":"launch","url":""}"#),
            Err(BadInput::Missing("url"))
        );
        assert_eq!(
            parse(r#"{"action":"click"}"#),
            Err(BadInput::Missing("coordinate"))
        );
        assert_eq!(
            parse(r#"{"action":"type","text":null}"#),
            Err(BadInput::Missing("text"))
        );
    }

    #[test]
    fn coordinates_must_be_two_finite_numbers() {
        assert_eq!(parse_coordinate("0,0"), Some((0.0, 0.0)));
        assert_eq!(parse_coordinate(" 10 ,20 "), Some((10.0, 20.0)));
        for bad in [
            "450", "450,", ",300", "a,b", "1,2,3", "NaN,1", "inf,2", "450;300",
        ] {
            assert_eq!(parse_coordinate(bad), None, "{bad}");
        }
        assert_eq!(
            parse(r#"{"action":"click","coordinate":"left,top"}"#),
            Err(BadInput::Coordinate("left,top".to_string()))
        );
    }

    #[test]
    fn the_ui_payload_leaves_out_absent_fields() {
        assert_eq!(
            Action::Click {
                x: 1.0,
                y: 2.0,
                coordinate: "1,2".to_string()
            }
            .ui_payload(),
            r#"{"action":"click","coordinate":"1,2"}"#
        );
        assert_eq!(
            Action::Type {
                text: "hi".to_string()
            }
            .ui_payload(),
            r#"{"action":"type","text":"hi"}"#
        );
        assert_eq!(Action::Close.ui_payload(), r#"{"action":"close"}"#);
    }
}
