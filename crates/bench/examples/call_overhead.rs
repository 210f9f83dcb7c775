//! The per-call overhead of the two ways to run generated code, side by
//! side, for a scalar function (`f x = x * x + 1`): the driver process
//! (`codegen::run`: an input file, a process, an output file) and the
//! in-process library (`codegen::Library::call`), each on values and, for
//! the library, on a dense scalar. Run with
//! `cargo run --release -p bench --example call_overhead [CALLS]`;
//! docs/codegen.md quotes a run.

use std::time::Instant;

use data::{Data, Dense};
use semantics::Value;

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let m = syntax::compile(syntax::SourceFile {
        name: "overhead.ad".into(),
        text: "def f (x : R) : R = x * x + 1\n".into(),
    })
    .expect("compile");
    let cfg = codegen::Config {
        shared_library: true,
        ..codegen::Config::default()
    };
    let c = codegen::emit(&m, &cfg).expect("emit");
    let dir = std::env::temp_dir().join(format!("call_overhead_{}", std::process::id()));
    let built = codegen::build(&c, &dir, &cfg).expect("build");
    let lib = codegen::Library::open(&built).expect("open");

    let process_calls = (calls / 100).max(10);
    let t = Instant::now();
    let mut sum = 0.0;
    for k in 0..process_calls {
        let v = codegen::run(&built, "f", &[Value::Real(k as f64)]).expect("run");
        sum += v.as_real().unwrap_or(0.0);
    }
    let process = t.elapsed().as_secs_f64() / process_calls as f64;

    let t = Instant::now();
    for k in 0..calls {
        let v = lib
            .call_values("f", &[Value::Real(k as f64)])
            .expect("call");
        sum += v.as_real().unwrap_or(0.0);
    }
    let values = t.elapsed().as_secs_f64() / calls as f64;

    let t = Instant::now();
    for k in 0..calls {
        let x = Dense::scalar(&Value::Real(k as f64)).expect("scalar");
        let v = lib.call("f", &[Data::Dense(x)]).expect("call");
        sum += v.to_value().as_real().unwrap_or(0.0);
    }
    let dense = t.elapsed().as_secs_f64() / calls as f64;
    let _ = std::fs::remove_dir_all(&dir);

    println!("per call of f (x : R) : R  (checksum {sum})");
    println!(
        "  driver process, codegen::run       {:>10.1} us  ({process_calls} calls)",
        process * 1e6
    );
    println!(
        "  library, Library::call_values      {:>10.3} us  ({calls} calls)",
        values * 1e6
    );
    println!(
        "  library, Library::call on Dense    {:>10.3} us  ({calls} calls)",
        dense * 1e6
    );
    println!(
        "  process / library                  {:>10.0}x",
        process / dense
    );
}
