fn main() {
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = syntax::SourceFile {
            name: path.clone(),
            text,
        };
        match syntax::compile(file) {
            Ok(m) => {
                println!("== {path}\n{}", syntax::print::module(&m));
                for d in &m.defs {
                    let ps: Vec<String> = d
                        .params
                        .iter()
                        .map(|p| {
                            format!("{}: {}", p.name, syntax::print::ty(p.ty.as_ref().unwrap()))
                        })
                        .collect();
                    println!(
                        "  {} ({}) : {}",
                        d.name,
                        ps.join(", "),
                        syntax::print::ty(d.ret.as_ref().unwrap())
                    );
                }
                if let Err(es) = syntax::verify(&m) {
                    for e in es {
                        println!("VERIFY: {e}");
                    }
                }
                for d in &m.defs {
                    if let Err(e) = syntax::check_first_order(&m, d) {
                        println!("  not first order: {e}");
                    }
                }
                match syntax::specialize(&m) {
                    Ok(s) => {
                        println!("-- specialized\n{}", syntax::print::module(&s));
                        if let Err(es) = syntax::verify(&s) {
                            for e in es {
                                println!("VERIFY spec: {e}");
                            }
                        }
                    }
                    Err(e) => println!("  specialize: {e}"),
                }
            }
            Err(e) => println!("== {path}: ERROR {e:?}"),
        }
    }
}
