//! The reverse-mode output of a long `let` chain, as text: the input of
//! the scale test and the benchmark.

/// The reverse-mode output of the chain `w0 = x, w_i = w_{i-1} * x`,
/// `n` multiplications long, in continuation-passing form (one
/// continuation per `let`, each used once, as Fig. 5 writes them, with the
/// context kept to the two cotangents that matter so that the program is
/// linear in `n`). Its value at x is `(x^(n+1), (n+1) x^n)`.
pub fn let_chain_grad(n: usize) -> String {
    let mut s = String::from(
        "def chain_grad (x : R) : (R, R) =\n  let Y0 = fun (g0 : R, z0 : R) -> g0 + z0 in\n",
    );
    for i in 1..=n {
        let prev = if i == 1 {
            "x".to_string()
        } else {
            format!("w{}", i - 1)
        };
        s.push_str(&format!("  let w{i} = {prev} * x in\n"));
        s.push_str(&format!(
            "  let Y{i} = fun (g{i} : R, z{i} : R) -> Y{} (g{i} + {prev} * z{i}) (x * z{i}) in\n",
            i - 1
        ));
    }
    s.push_str(&format!("  (w{n}, Y{n} 0 1)\n"));
    s
}
