//! The dF~ Jacobian benchmark: the vectorised Jacobian (seed-independent
//! work done once) against n independent forward passes, timed with the
//! reference evaluator. `cargo run -p forward --example jacobian_bench --
//! [N ...]`; `cargo xtask bench` calls the same `forward::bench` functions.

use forward::bench;
use semantics::Value;
use syntax::{Module, SourceFile};

fn flatten(v: &Value, out: &mut Vec<f64>) {
    if let Some(x) = v.as_real() {
        out.push(x);
    } else if let Some(items) = v.as_array() {
        items.iter().for_each(|i| flatten(i, out));
    } else if let Some(items) = v.as_tuple() {
        items.iter().for_each(|i| flatten(i, out));
    }
}

fn eval(m: &Module, x: &str) -> Result<Vec<f64>, String> {
    let def = m.defs.last().ok_or("no definition")?;
    let ty = def.params[0].ty.as_ref().ok_or("untyped parameter")?;
    let x = semantics::parse_value(x, ty).map_err(|e| e.to_string())?;
    let v = semantics::eval_entry(m, None, &[("x".to_string(), x)]).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    flatten(&v, &mut out);
    Ok(out)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![8, 16, 32, 64, 128]
    } else {
        sizes
    };
    let m = match syntax::compile(SourceFile {
        name: "bench.ad".to_string(),
        text: bench::PROGRAM.to_string(),
    }) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let programs = match bench::programs(&m) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    println!("{}", bench::PROGRAM);
    for n in sizes {
        match bench::jacobian_vs_passes(&programs, n, 3, eval) {
            Ok(report) => println!("{report}"),
            Err(e) => {
                eprintln!("n = {n}: {e}");
                std::process::exit(1);
            }
        }
    }
}
