//! The first round's pre-scan: a program on which the first round (every
//! rule but `inline-once`, note [phases] in `lib.rs`) provably fires
//! nothing and hands every node on as it is, so that the round can be
//! skipped. See note [quiet first round].

use std::hash::{Hash, Hasher};

use syntax::{Expr, ExprId, Module, Name, Pat, Prim, Ty};

use crate::census::{Occ, census};
use crate::hash::{FxHashMap, FxHashSet};
use crate::simplify::write_cse_key;

/// The census of each definition of `m` (what the first round would
/// compute, and the second computes again on the same program) when the
/// first round, run on `m` with `share` on (note [unchanged nodes]),
/// would fire no rule and give back `m` itself, node for node; `None`
/// when that is not shown (the round then runs).
pub(crate) fn first_round_is_identity(m: &Module) -> Option<Vec<FxHashMap<Name, Occ>>> {
    let mut scan = Scan {
        m,
        seen: vec![false; m.exprs.len()],
        key: String::with_capacity(24),
        bound: FxHashSet::default(),
        looked_up: Vec::new(),
    };
    let mut out = Vec::with_capacity(m.defs.len());
    for def in &m.defs {
        let root = def.body;
        if root.index() >= m.exprs.len() {
            return None;
        }
        // Binders distinct (the round renames a binder met twice), the
        // parameters' names included.
        let mut binders: FxHashSet<&str> = def.params.iter().map(|p| p.name.as_str()).collect();
        if binders.len() != def.params.len() {
            return None;
        }
        // The `cse` keys of the builtins, all in one block: a key bound
        // twice, or looked up and bound, is a `cse` (a hash met twice is
        // treated as the same key).
        scan.bound.clear();
        scan.looked_up.clear();
        let mut lets: Vec<&Name> = Vec::new();
        let mut cur = root;
        while let Expr::Let {
            pat,
            ty: _,
            value,
            body,
        } = m.expr(cur)
        {
            // `wrap` hands a `let` on only with its own body's type.
            let Pat::Var(x) = pat else {
                return None;
            };
            if !scan.visit(cur)
                || m.types.get(cur.index()) != m.types.get(body.index())
                || !binders.insert(x.as_str())
                || !scan.builtin(*value, Role::Bound, 0)
            {
                return None;
            }
            lets.push(x);
            cur = *body;
        }
        // The body of the chain.
        let tail_ok = match m.expr(cur) {
            // `let x = e in x ~> e` (`let-var`) for the last binding.
            Expr::Var(y) => scan.visit(cur) && lets.last().is_none_or(|&x| x != y),
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) => scan.visit(cur),
            Expr::Tuple(items) => {
                scan.visit(cur) && items.iter().all(|&a| scan.operand(a, 0).is_some())
            }
            Expr::Prim { .. } => scan.builtin(cur, Role::Operand, 0),
            _ => false,
        };
        if !tail_ok || scan.looked_up.iter().any(|h| scan.bound.contains(h)) {
            return None;
        }
        // The same census the round computes (same capacity).
        let occ = census(m, root, m.exprs.len() / 8);
        // A binding whose name is not used is a `dead-let`.
        if lets
            .iter()
            .any(|x| occ.get(*x).is_none_or(|o| o.count == 0))
        {
            return None;
        }
        out.push(occ);
    }
    Some(out)
}

struct Scan<'m> {
    m: &'m Module,
    /// The nodes met: the round hands each input node on at most once.
    seen: Vec<bool>,
    /// The buffer `cse` keys are written into.
    key: String,
    /// The hashed `cse` keys of the `let`-bound builtins of the current
    /// definition (what the round records).
    bound: FxHashSet<u64>,
    /// The hashed keys of its other builtins (what the round only looks up).
    looked_up: Vec<u64>,
}

/// Where a builtin sits: a `let`'s value (its key is recorded) or an
/// operand (its key only looked up).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Bound,
    Operand,
}

/// How deep builtins may nest in the pre-scan (deeper: the round runs).
const MAX_DEPTH: usize = 64;

impl Scan<'_> {
    /// Whether `id` is met for the first time (it is then marked).
    fn visit(&mut self, id: ExprId) -> bool {
        match self.seen.get_mut(id.index()) {
            Some(s @ false) => {
                *s = true;
                true
            }
            _ => false,
        }
    }

    /// An operand the round hands on: `Some(true)` for a literal,
    /// `Some(false)` for a variable or a builtin (checked as one), `None`
    /// for anything else.
    fn operand(&mut self, id: ExprId, depth: usize) -> Option<bool> {
        let literal = match self.m.expr(id) {
            Expr::Var(_) => false,
            Expr::Real(_) | Expr::Int(_) | Expr::Bool(_) => true,
            Expr::Prim { .. } => {
                return self.builtin(id, Role::Operand, depth + 1).then_some(false);
            }
            _ => return None,
        };
        self.visit(id).then_some(literal)
    }

    /// Whether `id` is a builtin of operands that no rule of the first
    /// round rewrites; its `cse` key, if it has one, is recorded by `role`.
    fn builtin(&mut self, id: ExprId, role: Role, depth: usize) -> bool {
        let m = self.m;
        let Expr::Prim { op, args } = m.expr(id) else {
            return false;
        };
        // The builtins `Round::rewrite` takes apart beyond `const-fold`
        // (which needs every operand a literal) and `if-float` (which
        // needs an operand that is an `if`), and those with a function.
        let special = matches!(
            op,
            Prim::Map
                | Prim::Map2
                | Prim::Reduce
                | Prim::Foldl
                | Prim::Length
                | Prim::Build
                | Prim::Shift1L
                | Prim::Shift1R
        ) || !op.function_args().is_empty()
            || op.is_derivative_construct();
        // `split-tuple` and `prune-accumulator` look at values of tuple type.
        if special
            || depth > MAX_DEPTH
            || matches!(m.types.get(id.index()), None | Some(Ty::Tuple(_)))
            || !self.visit(id)
        {
            return false;
        }
        let mut others = 0;
        for &a in args {
            match self.operand(a, depth) {
                Some(true) => {}
                Some(false) => others += 1,
                None => return false,
            }
        }
        // `const-fold` needs every operand a literal.
        if others == 0 {
            return false;
        }
        // `neg-neg` needs a negation of a negation.
        if *op == Prim::Neg
            && args
                .iter()
                .any(|&a| matches!(m.expr(a), Expr::Prim { op: Prim::Neg, .. }))
        {
            return false;
        }
        // `zero-mul`, `zero-add`, `one-mul` need a literal 0 or 1.
        let ring = matches!(
            op,
            Prim::Add | Prim::Sub | Prim::Mul | Prim::Div | Prim::Neg
        );
        if ring
            && args.iter().any(|&a| match m.expr(a) {
                Expr::Real(x) => *x == 0.0 || *x == 1.0,
                Expr::Int(k) => *k == 0 || *k == 1,
                _ => false,
            })
        {
            return false;
        }
        // A builtin of leaves has a key (`cse`); others have none, and
        // `cse-alpha` looks only at loops, conditionals and literals.
        if !write_cse_key(m, id, &mut self.key) {
            return true;
        }
        // SipHash, not Fx: Fx's state collides on keys that differ in a
        // byte at the end of one word and at the start of the next
        // (`#5 v_1593` and `#5 v_1518`: hundreds of pairs on the chain),
        // and a collision here makes the round run for nothing.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.key.as_str().hash(&mut h);
        let h = h.finish();
        match role {
            Role::Bound => self.bound.insert(h),
            Role::Operand => {
                self.looked_up.push(h);
                true
            }
        }
    }
}

// Note [quiet first round]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// The first round runs every rule but `inline-once` (note [phases] in
// `lib.rs`). On a straight-line program that is already simplified (the
// gradient of a long chain of `let`s, as `raise` writes it) it fires
// nothing, hands every node on as it is (note [unchanged nodes] in
// `simplify.rs`), and costs as much as the round after it: on the
// 20,000-`let` chain, 45% of the optimizer's time.
//
// `first_round_is_identity` recognises such programs without running the
// round: every definition is a chain of `let x = p(a1, .., ak)` ending in
// a leaf, a tuple of operands or such a builtin, where
// - every ai is an operand: a variable, a literal, or again such a
//   builtin (nested at most `MAX_DEPTH` deep); at least one is not a
//   literal (`const-fold`), none is a 0 or a 1 in a ring operation
//   (`zero-mul`, `zero-add`, `one-mul`), a negation's operand is not a
//   negation (`neg-neg`), p is none of the builtins
//   `rewrite` takes apart otherwise (`length-of`, the map, reduction and
//   shift rules) and has no function argument, and its type is not a
//   tuple (`split-tuple`, `prune-accumulator`): the local rules find
//   nothing;
// - `cse` finds nothing: no two `let`-bound builtins have the same key,
//   and no other builtin has the key of a `let`-bound one (`write_cse_key`
//   writes the key the round uses; they are compared hashed, a hash met
//   twice counting as the same key);
// - a value is never a variable, a literal, a `let`, a lambda or a tuple
//   (`forward-var`, `forward-const`, `let-let`, `inline-lambda`,
//   `split-tuple`), every binder is used (`dead-let`, read from the same
//   census the round computes) and is distinct from every other and from
//   the parameters (no renaming), and the chain does not end in its last
//   binder (`let-var`);
// - every node is met once (the round hands a node on only once) and
//   every `let` has its body's type (`wrap` hands a `let` on only then).
// Nothing is then added to the substitution, so every variable is handed
// on, every builtin and `let` too, and the round's output is its input,
// node for node, with no fresh name made. Skipping it leaves the run in
// the state the round would have left (no rule fired, the same module,
// no name generator); the census it computed is the one the second round
// needs, on the same program, and is handed to it. In debug builds the
// round is run anyway and its output compared (`lib.rs`), so every test
// of the workspace checks this argument on the programs it optimizes.

#[cfg(test)]
mod tests {
    use super::first_round_is_identity;
    use crate::rules::{RuleName, RuleSet};
    use crate::{Config, simplify};
    use syntax::{Module, SourceFile};

    fn compile(text: &str) -> Module {
        syntax::compile(SourceFile {
            name: "quiet.ad".to_string(),
            text: text.to_string(),
        })
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// The first round as `optimize::run` runs it: what fired, and
    /// whether it gave back its input unchanged.
    fn first_round(m: &Module) -> (Vec<RuleName>, bool) {
        let cfg = Config {
            rules: RuleSet::all().without(RuleName::InlineOnce),
            ..Config::default()
        };
        let (out, names, fired, _) = simplify::round(m.clone(), None, &cfg, false, true, None);
        (fired.into_keys().collect(), out == *m && names.is_none())
    }

    #[test]
    fn the_gradient_of_a_let_chain_is_quiet_and_the_round_would_change_nothing() {
        let mut text = String::from("def chain (x : R) : R =\n");
        let mut prev = "x".to_string();
        for i in 0..30 {
            text.push_str(&format!("  let v{i} = {prev} * 1.0001 + sin {prev} in\n"));
            prev = format!("v{i}");
        }
        text.push_str(&format!("  {prev}\n"));
        let source = compile(&text);
        let def = source.defs.last().expect("a definition").clone();
        let lowered = unf::lower(&source, &def).expect("UNF");
        let target = reverse::reverse(&lowered, &reverse::Config::default()).expect("D_rho");
        let grad = unf::raise(&target).expect("UNF^-1");
        let occs = first_round_is_identity(&grad).expect("the chain's gradient is quiet");
        assert_eq!(occs.len(), grad.defs.len());
        assert_eq!(first_round(&grad), (Vec::new(), true));
    }

    #[test]
    fn a_simplified_straight_line_program_is_quiet() {
        let m = compile(
            "def f (x : R) (y : R) : (R, R) =\n  let a = sin x * y in\n  let b = a * 2.0 + cos y in\n  (b, a - x)\n",
        );
        assert!(first_round_is_identity(&m).is_some());
        assert_eq!(first_round(&m), (Vec::new(), true));
    }

    /// Each program has one thing a rule of the first round takes: the
    /// pre-scan must refuse it, and the round does fire.
    #[test]
    fn a_program_a_first_round_rule_changes_is_not_quiet() {
        let cases = [
            ("cse", "let a = sin x in let b = sin x in a * b"),
            (
                "cse of an operand",
                "let a = sin x in let b = sin x * 2.0 in b * a",
            ),
            ("forward-var", "let a = x in a * 2.0"),
            ("forward-const", "let a = 2.0 in a * x"),
            ("one-mul", "let a = sin x in let b = a * 1.0 in b + a"),
            ("zero-add", "let a = sin x in let b = a + 0.0 in b * a"),
            ("neg-neg", "let a = sin x in let b = -(-a) * x in b + a"),
            ("const-fold", "let a = 2.0 * 3.0 in let b = a * x in b + a"),
            ("dead-let", "let a = sin x in let b = cos x in a * 2.0"),
            ("let-var", "let a = sin x in let b = a * 2.0 in b"),
            ("let-let", "let a = (let c = cos x in c * x) in a * 2.0"),
            ("tuple-let", "let (a, b) = (sin x, cos x) in a * b"),
            ("beta", "let f = fun (z : R) -> z * 2.0 in f x + f (sin x)"),
            (
                "if-const",
                "let a = if true then sin x else cos x in a * 2.0",
            ),
        ];
        for (rule, body) in cases {
            let m = compile(&format!("def f (x : R) : R =\n  {body}\n"));
            assert!(
                first_round_is_identity(&m).is_none(),
                "{rule}: judged quiet: {body}"
            );
            let (fired, same) = first_round(&m);
            assert!(
                !fired.is_empty() || !same,
                "{rule}: the round changes nothing on {body}"
            );
        }
    }
}
