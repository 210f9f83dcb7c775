//! Prints a few generated programs with their inputs and whether they
//! compile (`cargo run -p difftest --example gen_sample -- SEED COUNT`),
//! or with a third argument `stats`, only the programs that do not
//! compile and the share of programs with admissible inputs.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let count = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10);
    let stats = args.get(3).is_some_and(|s| s == "stats");
    let (mut admissible, mut broken) = (0, 0);
    for case in 0..count {
        let mut rng = difftest::Rng::for_case(seed, case);
        let feat = difftest::Features {
            open_reduce: case % 4 == 0,
            ..difftest::Features::default()
        };
        let size = 3 + rng.below(45);
        let p = if case % 3 == 2 {
            difftest::gen_vector_program(&mut rng, size, &feat)
        } else {
            difftest::gen_program(&mut rng, size, &feat)
        };
        let inputs = difftest::admissible_inputs(&mut rng, &p, 20);
        admissible += usize::from(inputs.is_some());
        let compiled = p.compile();
        if !stats || compiled.is_err() {
            println!(
                "-- case {case}: fragment {:?}, admissible {}",
                p.fragment(),
                inputs.is_some()
            );
            println!("{}", p.text(inputs.as_ref().map(|(i, _)| i.as_slice())));
        }
        if let Err(e) = compiled {
            broken += 1;
            println!("-- DOES NOT COMPILE: {e}");
        }
    }
    println!("{count} programs: {admissible} admissible, {broken} do not compile");
}
