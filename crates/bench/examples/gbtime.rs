//! Development aid: one GradBench eval's workloads through the tool's
//! session, the fastest primal and derivative runs and their ratio, without
//! touching docs/performance.md (`cargo xtask bench gradbench` writes that).
//!
//! `cargo run --release -p bench --example gbtime -- EVAL [MIN_SECONDS]`;
//! `GBTIME_ONLY=text` keeps the workloads whose description contains it;
//! `GBTIME_DUMP=dir` also writes, for every function variant of the eval,
//! the program that runs (`<entry>.ad`, printed) and its C (`<entry>.c`,
//! `<entry>.h`; `<entry>.<function>.*` when functions share an entry),
//! built with the tool's configuration, and times nothing (`GBTIME_OPT=1`:
//! optimized first; `GBTIME_PROGRAM=file`: that program text instead of
//! the eval's, to time a hand-written rewrite of one of its functions).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let eval = args.first().cloned().unwrap_or_else(|| "ht".into());
    let min_seconds: f64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0.5);
    if let Ok(dir) = std::env::var("GBTIME_DUMP") {
        dump(&eval, std::path::Path::new(&dir));
        return;
    }
    let only = std::env::var("GBTIME_ONLY").unwrap_or_default();
    let (rows, compiles) =
        bench::gradbench::run_filtered(&[eval], &only, 5, min_seconds, &mut |l| eprintln!("{l}"));
    for (e, t) in compiles {
        println!("define {e}: {t:?} s");
    }
    for r in rows {
        let ms = |x: &Result<f64, String>| x.as_ref().map(|ns| ns / 1e6).map_err(Clone::clone);
        let ratio = match (&r.primal, &r.derivative) {
            (Ok(p), Ok(d)) => format!("{:.2}", d / p),
            _ => "-".into(),
        };
        println!(
            "{} {}: primal {:?} ms, derivative {:?} ms, ratio {ratio}, runs {:?}",
            r.eval,
            r.description,
            ms(&r.primal),
            ms(&r.derivative),
            r.runs
        );
    }
}

fn dump(eval: &str, dir: &std::path::Path) {
    std::fs::create_dir_all(dir).expect("the dump directory");
    let e = gradbench::evals::eval(eval).expect("an eval name");
    let text = match std::env::var("GBTIME_PROGRAM") {
        Ok(f) => std::fs::read_to_string(f).expect("GBTIME_PROGRAM reads"),
        Err(_) => e.program.to_string(),
    };
    let program = adrev::Program::from_text(e.file, text).expect("the eval's program");
    let cfg = gradbench::engine::default_config();
    // A variant's files are named by its entry, or by entry and function
    // when the eval's functions share an entry (gmm's objective and
    // jacobian are both `gmm`: the jacobian's C would overwrite the
    // objective's).
    let entries: Vec<&str> = e
        .functions
        .iter()
        .flat_map(|f| f.variants.iter().flatten().map(|(entry, _)| *entry))
        .collect();
    for f in &e.functions {
        let Ok(variants) = &f.variants else { continue };
        for (entry, ask) in variants {
            let stem = if entries.iter().filter(|x| *x == entry).count() > 1 {
                format!("{entry}.{}", f.name)
            } else {
                entry.to_string()
            };
            let compiled =
                gradbench::engine::compile(&program, entry, *ask, &cfg).expect("compiles");
            let m = compiled.module().expect("a program");
            // GBTIME_OPT=1: the optimizer over it first.
            let opt;
            let m = if std::env::var("GBTIME_OPT").is_ok_and(|v| v == "1") {
                opt = optimize::optimize(m, &optimize::Config::default()).expect("optimizes");
                &opt
            } else {
                m
            };
            std::fs::write(dir.join(format!("{stem}.ad")), syntax::print::module(m))
                .expect("write");
            let c = codegen::emit(m, &cfg).expect("emit");
            std::fs::write(dir.join(format!("{stem}.c")), &c.source).expect("write");
            // The header the C includes as `<name>.h` (the same name for
            // every entry): copy it there to compile `<stem>.c` by hand.
            std::fs::write(dir.join(format!("{stem}.h")), &c.header).expect("write");
            eprintln!(
                "wrote {stem}.ad, {stem}.c, {stem}.h (included as {}.h)",
                c.name
            );
            // GBTIME_PROFILE=stem: that variant built with -g into dir/stem
            // and run on the eval's first workload in a driver process
            // (GBTIME_REPS times), for `perf record`. The definition run
            // is the entry, or the program's last (a gradient's is
            // `<entry>_grad`).
            if std::env::var("GBTIME_PROFILE").is_ok_and(|p| p == stem) {
                let def = match m.def(entry) {
                    Some(d) => d.name.to_string(),
                    None => m.defs.last().expect("a definition").name.to_string(),
                };
                profile(eval, f, &def, m, &cfg, &dir.join(&stem));
            }
        }
    }
}

fn profile(
    eval: &str,
    f: &gradbench::evals::Function,
    entry: &str,
    m: &syntax::Module,
    cfg: &codegen::Config,
    dir: &std::path::Path,
) {
    let w = bench::gradbench::workloads()
        .into_iter()
        .find(|w| {
            w.eval == eval
                && w.description
                    .contains(&std::env::var("GBTIME_ONLY").unwrap_or_default())
        })
        .expect("a workload");
    let call = (f.input)(&gradbench::convert::Input::root(&w.input)).expect("the input");
    let def = m.def(entry).expect("the entry");
    let args: Vec<semantics::Value> = def
        .params
        .iter()
        .map(|p| {
            call.args
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .expect("an argument per parameter")
        })
        .collect();
    let mut cfg = cfg.clone();
    cfg.extra_flags.push("-g".into());
    let prog = codegen::emit(m, &cfg).expect("emit");
    let built = codegen::build(&prog, dir, &cfg).expect("build");
    let reps = std::env::var("GBTIME_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    // The input as the driver reads it, kept for running the driver by
    // hand (`valgrind --tool=callgrind dir/ht_driver ENTRY dir/in.bin
    // /tmp/out.bin 1`).
    let e = prog.entry(Some(entry)).expect("the entry");
    let (bytes, _) = codegen::encode_args(e, &args).expect("the input");
    std::fs::write(dir.join("in.bin"), bytes).expect("write");
    let (_, t) = codegen::time(&built, entry, &args, reps).expect("run");
    let mut cpu: Vec<f64> = t.cpu_ns.iter().map(|x| x / 1e6).collect();
    cpu.sort_by(f64::total_cmp);
    println!(
        "{entry}: cpu ms min {:.3} median {:.3}",
        cpu[0],
        cpu[cpu.len() / 2]
    );
}
