//! `hist-interchange` on the shape reverse mode writes for kmeans'
//! gradient (docs/optimize.md, kmeans, items 3 and 4): a `build` over the
//! columns, each a `map2` pairing two histograms over the points, becomes
//! two histograms of rows, one pass over the points each, with the same
//! values bit for bit.

use crate::common;

use optimize::{Config, RuleName, optimize_report};

use common::{compile, eval, expectations, verified};

const KMEANS: &str = "-- at G = [(0, [(1, 2), (3, 4)]), (1, [(5, 1), (2, 2)]), (0, [(1, 1), (1, 1)]), (-1, [(9, 9), (9, 9)])]\n\
-- at C = [[0, 0], [0, 0]]\n\
-- value = [[0.6666666666666666, 0.8], [5, 1]]\n\
def f (G : [n](Int, [d](R, R))) (C : [k][d]R) : [k][d]R =\n\
\x20 let h = build (length C[0]) (fun c -> map2 (fun (a, b) -> (a, b))\n\
\x20   (hist_add (map (fun x -> 0) C) (map (fun t -> t.1) G) (map (fun t -> let r = t.2 in if c < length r then r[c].1 else 0) G))\n\
\x20   (hist_add (map (fun x -> 0) C) (map (fun t -> t.1) G) (map (fun t -> let r = t.2 in if c < length r then r[c].2 else 0) G))) in\n\
\x20 map (fun q -> map (fun p -> p.1 / p.2) q) (build (length C) (fun r -> build (length C[r]) (fun c -> h[c][r])))\n";

#[test]
fn the_columns_histograms_become_histograms_of_rows() {
    let m = compile(KMEANS);
    let (inputs, expected) = expectations(KMEANS, &m);
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    assert!(
        report
            .fired
            .get(&RuleName::HistInterchange)
            .copied()
            .unwrap_or(0)
            > 0,
        "hist-interchange did not fire"
    );
    let live = syntax::print::module(&out);
    assert!(
        !live.contains("hist_add "),
        "a column histogram is left:\n{live}"
    );
    assert_eq!(live.matches("hist_add_rows").count(), 2, "{live}");
    let before = eval(&m, &inputs).expect("the program runs");
    let after = eval(&out, &inputs).expect("the optimized program runs");
    // Bit for bit: each bin sums its points in the same order.
    assert_eq!(before, after);
    assert_eq!(Some(after), expected);
}

#[test]
fn a_histogram_whose_indices_depend_on_the_column_stays() {
    let text = "-- at I = [0, 1, 0]\n\
                -- at A = [1, 2, 3]\n\
                def f (I : [n]Int) (A : [n]R) : [2][2]R =\n\
                \x20 build 2 (fun c -> hist_add [0, 0] (map (fun i -> i + c) I) (map (fun a -> a * real c) A))\n";
    let m = compile(text);
    let (out, report) = optimize_report(&m, &Config::default()).expect("optimizes");
    verified(&out, "the optimized program");
    assert_eq!(report.fired.get(&RuleName::HistInterchange), None);
}
