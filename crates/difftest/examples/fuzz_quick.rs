//! Runs a short fuzzing session and prints the report (development aid;
//! `cargo xtask fuzz-diff` is the command).

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let report = difftest::fuzz(cases, seed, |done, _| {
        if done % 1000 == 0 {
            eprintln!("{done} cases");
        }
    });
    print!("{}", report.render());
}
