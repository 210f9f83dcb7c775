//! A scripted eval: drives the `adrev-gradbench` binary over its stdin and
//! stdout as GradBench's evals do, and checks the shape of every answer.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value as Json, json};

/// A running tool.
pub struct Tool {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Tool {
    /// Starts the tool (C built at -O1: the tests check values, not speed)
    /// and sends `start`.
    pub fn start(eval: &str) -> Tool {
        Tool::start_with(eval, &[])
    }

    /// Starts the tool with more command-line arguments after
    /// `--opt-level 1`, and sends `start`.
    pub fn start_with(eval: &str, args: &[&str]) -> Tool {
        let mut child = Command::new(env!("CARGO_BIN_EXE_adrev-gradbench"))
            .args(["--opt-level", "1"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the tool starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut tool = Tool {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let r = tool.send(json!({"kind": "start", "eval": eval}));
        assert_eq!(r["tool"], "adrev", "{r}");
        assert_eq!(r["config"]["backend"], "c", "{r}");
        assert!(r["config"]["flags"].is_array(), "{r}");
        tool
    }

    /// Sends one line as it is and reads the answer.
    pub fn send_line(&mut self, line: &str) -> Json {
        writeln!(self.stdin, "{line}").expect("write to the tool");
        self.stdin.flush().expect("flush");
        let mut answer = String::new();
        self.stdout
            .read_line(&mut answer)
            .expect("read from the tool");
        assert!(
            !answer.is_empty(),
            "the tool closed its output after {line}"
        );
        serde_json::from_str(&answer).expect("the answer is JSON")
    }

    /// Sends a message with the next id; checks that the answer has it.
    pub fn send(&mut self, mut message: Json) -> Json {
        let id = self.next_id;
        self.next_id += 1;
        message["id"] = json!(id);
        let r = self.send_line(&message.to_string());
        assert_eq!(r["id"], json!(id), "{r}");
        r
    }

    /// Defines `module`, which must succeed with a compile timing.
    pub fn define(&mut self, module: &str) {
        let r = self.send(json!({"kind": "define", "module": module}));
        assert_eq!(r["success"], true, "{r}");
        assert_eq!(r["timings"][0]["name"], "compile", "{r}");
    }

    /// Evaluates with `min_runs` 2: the output, after checking the answer's
    /// shape (success, one `evaluate` timing per run), and sends the
    /// `analysis` GradBench would.
    pub fn evaluate(&mut self, module: &str, function: &str, input: Json) -> Json {
        let mut input = input;
        input["min_runs"] = json!(2);
        input["min_seconds"] = json!(0);
        let r = self.evaluate_raw(module, function, input);
        assert_eq!(r["success"], true, "{function}: {r}");
        let timings = r["timings"].as_array().expect("timings");
        assert!(timings.len() >= 2, "{r}");
        for t in timings {
            assert_eq!(t["name"], "evaluate", "{r}");
            assert!(t["nanoseconds"].is_u64(), "{r}");
        }
        let of = r["id"].clone();
        let a = self.send(json!({"kind": "analysis", "of": of, "valid": true}));
        assert_eq!(a.as_object().map(|o| o.len()), Some(1), "{a}");
        r["output"].clone()
    }

    /// Sends an `evaluate` and returns the whole answer.
    pub fn evaluate_raw(&mut self, module: &str, function: &str, input: Json) -> Json {
        self.send(
            json!({"kind": "evaluate", "module": module, "function": function, "input": input}),
        )
    }
}

impl Drop for Tool {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
