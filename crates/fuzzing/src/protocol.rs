//! The GradBench protocol's messages (`adrev-gradbench`, docs/gradbench.md):
//! each line as the tool reads it, without compiling or running a program.

use gradbench::protocol::{self, Message};
use serde_json::Value as Json;

/// Lines of the eval's messages: each is parsed (`protocol::parse`); an
/// `evaluate` of a known module and function has its input read and
/// converted (`gradbench::read_input`, the session's own reader), as
/// `evaluate` does before it runs the program. Every answer is one line of
/// JSON carrying the message's id, and every error names what is wrong.
pub fn gradbench_protocol(data: &[u8]) {
    let Some(text) = crate::text(data) else {
        return;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (answer, id) = match protocol::parse(line) {
            Ok((id, message)) => (respond(&id, message), id),
            Err(bad) => {
                assert!(!bad.error.is_empty(), "a bad message's error is empty");
                (protocol::bad_message_response(&bad), bad.id.clone())
            }
        };
        let printed = answer.to_string();
        assert!(!printed.contains('\n'), "an answer spans lines: {printed}");
        let again: Json = serde_json::from_str(&printed)
            .unwrap_or_else(|e| panic!("an answer is not JSON ({e}): {printed}"));
        assert_eq!(again["id"], id, "the answer's id is not the message's");
    }
}

/// The answer the session would give before running anything: `define` of
/// a known module succeeds, `evaluate` fails (nothing was compiled) once
/// its input has been read.
fn respond(id: &Json, message: Message) -> Json {
    match message {
        Message::Start { .. } => protocol::start_response(id, Json::Null),
        Message::Define { module } => {
            let known = gradbench::evals::eval(&module)
                .map(|_| 0)
                .ok_or_else(|| format!("unknown module `{module}`"));
            protocol::define_response(id, known)
        }
        Message::Evaluate {
            module,
            function,
            input,
        } => {
            let outcome = match gradbench::evals::eval(&module) {
                None => Err(format!("unknown module `{module}`")),
                Some(eval) => match eval.function(&function) {
                    None => Err(format!("no function `{function}`")),
                    Some(f) => match gradbench::read_input(f, &input) {
                        Ok(_) => Err("read; not run by the fuzz target".to_string()),
                        Err(e) => {
                            assert!(!e.is_empty(), "an input error is empty");
                            Err(e)
                        }
                    },
                },
            };
            protocol::evaluate_response(id, outcome)
        }
        Message::Analysis { .. } => protocol::analysis_response(id),
    }
}
