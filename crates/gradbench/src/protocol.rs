//! The messages of GradBench's protocol (its `crates/gradbench/src/protocol.rs`
//! and CONTRIBUTING.md, "Protocol"), read from JSON without trusting it:
//! every field is checked and a bad message becomes an error the session
//! answers with `success: false`.

use serde_json::{Map, Value as Json, json};

/// A message's id: GradBench's ids are integers; anything else is echoed
/// back as it came, so that the eval can match the answer.
pub type Id = Json;

/// A message from the eval.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// `{"kind": "start", "eval"?: string, "config"?: any}`.
    Start {
        /// The eval's name, if given.
        eval: Option<String>,
    },
    /// `{"kind": "define", "module": string}`.
    Define {
        /// The module to compile.
        module: String,
    },
    /// `{"kind": "evaluate", "module", "function", "input", "description"?}`.
    Evaluate {
        /// The module.
        module: String,
        /// The function of the module.
        function: String,
        /// The function's input (with `min_runs` and `min_seconds`).
        input: Json,
    },
    /// `{"kind": "analysis", "of": id, "valid": bool, "error"?: string}`.
    Analysis {
        /// The evaluate message analysed.
        of: Json,
        /// Whether the eval accepted the output.
        valid: bool,
    },
}

/// A message that cannot be answered as asked, with its id when it had one.
#[derive(Debug, Clone, PartialEq)]
pub struct BadMessage {
    /// The id, or `null` when the message had none (or was not JSON).
    pub id: Id,
    /// What is wrong, for the `error` field.
    pub error: String,
}

/// Reads one line of the eval's output.
pub fn parse(line: &str) -> Result<(Id, Message), BadMessage> {
    let bad = |id: &Id, error: String| BadMessage {
        id: id.clone(),
        error,
    };
    let json: Json = serde_json::from_str(line).map_err(|e| BadMessage {
        id: Json::Null,
        error: format!("the message is not JSON: {e}"),
    })?;
    let Json::Object(obj) = json else {
        return Err(bad(&Json::Null, "the message is not a JSON object".into()));
    };
    let id = obj.get("id").cloned().unwrap_or(Json::Null);
    if id.is_null() {
        return Err(bad(&id, "the message has no `id`".into()));
    }
    let kind = string(&obj, "kind").map_err(|e| bad(&id, e))?;
    let message = match kind.as_str() {
        "start" => Message::Start {
            eval: optional_string(&obj, "eval").map_err(|e| bad(&id, e))?,
        },
        "define" => Message::Define {
            module: string(&obj, "module").map_err(|e| bad(&id, e))?,
        },
        "evaluate" => Message::Evaluate {
            module: string(&obj, "module").map_err(|e| bad(&id, e))?,
            function: string(&obj, "function").map_err(|e| bad(&id, e))?,
            input: obj
                .get("input")
                .cloned()
                .ok_or_else(|| bad(&id, "the `evaluate` message has no `input`".into()))?,
        },
        "analysis" => Message::Analysis {
            of: obj
                .get("of")
                .cloned()
                .ok_or_else(|| bad(&id, "the `analysis` message has no `of`".into()))?,
            valid: match obj.get("valid") {
                Some(Json::Bool(b)) => *b,
                _ => return Err(bad(&id, "`valid` must be true or false".into())),
            },
        },
        other => {
            return Err(bad(
                &id,
                format!(
                    "unknown message kind `{other}` (the kinds: start, define, evaluate, analysis)"
                ),
            ));
        }
    };
    Ok((id, message))
}

fn string(obj: &Map<String, Json>, field: &str) -> Result<String, String> {
    match obj.get(field) {
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "`{field}` must be a string, not {}",
            describe(other)
        )),
        None => Err(format!("the message has no `{field}`")),
    }
}

fn optional_string(obj: &Map<String, Json>, field: &str) -> Result<Option<String>, String> {
    match obj.get(field) {
        None | Some(Json::Null) => Ok(None),
        Some(_) => string(obj, field).map(Some),
    }
}

/// A JSON value's kind, for messages.
pub fn describe(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// `{"id", "tool", "config"}`.
pub fn start_response(id: &Id, config: Json) -> Json {
    json!({"id": id, "tool": "adrev", "config": config})
}

/// `{"id", "success", "timings"?, "error"?}` of a `define`.
pub fn define_response(id: &Id, result: Result<u128, String>) -> Json {
    match result {
        Ok(ns) => json!({"id": id, "success": true,
                         "timings": [{"name": "compile", "nanoseconds": ns}]}),
        Err(e) => json!({"id": id, "success": false, "error": e}),
    }
}

/// `{"id", "success", "output", "timings"}` of an `evaluate`: one
/// `evaluate` timing per run.
pub fn evaluate_response(id: &Id, result: Result<(Json, Vec<u128>), String>) -> Json {
    match result {
        Ok((output, runs)) => {
            let timings: Vec<Json> = runs
                .into_iter()
                .map(|ns| json!({"name": "evaluate", "nanoseconds": ns}))
                .collect();
            json!({"id": id, "success": true, "output": output, "timings": timings})
        }
        Err(e) => json!({"id": id, "success": false, "error": e}),
    }
}

/// `{"id"}` of an `analysis`.
pub fn analysis_response(id: &Id) -> Json {
    json!({"id": id})
}

/// The answer to a message that could not be read.
pub fn bad_message_response(bad: &BadMessage) -> Json {
    json!({"id": bad.id, "success": false, "error": bad.error})
}
