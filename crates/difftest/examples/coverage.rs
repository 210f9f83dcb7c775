//! Prints the coverage of the programs of a fuzzing run without running
//! them (`cargo run -p difftest --example coverage -- CASES SEED`): for
//! tuning the generator's weights.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cases = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let (coverage, nao) = difftest::sample_coverage(cases, seed);
    for c in difftest::CONSTRUCTS {
        println!("{c:<30} {}", coverage.get(*c).copied().unwrap_or(0));
    }
    println!("NAO {nao:?}");
}
