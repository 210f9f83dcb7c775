//! Prints a program's transforms (a debugging aid): `cargo run -p forward
//! --example show -- FILE [expand|jvp|grad|gradv|jacobian|jacobianv|hessian]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(what)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: show FILE [expand|jvp|grad|gradv|jacobian|jacobianv|hessian]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let m = match syntax::compile(syntax::SourceFile {
        name: path.clone(),
        text,
    }) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let Some(entry) = m.defs.last().cloned() else {
        eprintln!("no definition");
        std::process::exit(1);
    };
    let vec = forward::Config {
        mode: forward::Mode::Vectorised,
        ..forward::Config::default()
    };
    let res = match what.as_str() {
        "expand" => forward::expand(&m),
        "jvp" => forward::jvp(&m, &entry),
        "grad" => forward::grad_program(&m, &entry, None),
        "gradv" => forward::grad_program_with(&m, &entry, None, &vec),
        "jacobian" => forward::jacobian_program(&m, &entry, None, &forward::Config::default()),
        "jacobianv" => forward::jacobian_program(&m, &entry, None, &vec),
        "hessian" => forward::hessian_program(&m, &entry, None, &forward::Config::default()),
        other => {
            eprintln!("unknown transform {other}");
            std::process::exit(2);
        }
    };
    match res {
        Ok(out) => {
            print!("{}", syntax::print::module(&out));
            if let Err(errors) = syntax::verify(&out) {
                for e in errors {
                    eprintln!("verify: {e}");
                }
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
