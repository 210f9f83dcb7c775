//! The rewrite rules, as data: one [`RuleName`] per rule of seeds/000
//! Fig. 12 (and the few this crate adds), each with the one-line statement
//! that `cargo xtask rules` prints, and [`RuleSet`], the set of
//! rules a run may fire.
//!
//! The engine (`simplify.rs`, `local.rs`) looks a rule up in the set before
//! firing it, so every rule can be switched off, and a run with a single
//! rule enabled applies exactly that rule (to a fixpoint): this is how the
//! per-rule property tests check that each rule preserves the meaning of
//! programs.
//!
//! Invariant: `RuleName::ALL` lists every variant once, in the order of the
//! paper's figure, and `RuleName::index` is the position in that list.

use std::fmt;

/// A rewrite rule. `e[a/x]` is substitution, `FV(e)` the free variables,
/// `c` a literal, `K(A)` a constant array `map (fun _ -> c) A` (the
/// paper's `OnesLike(A)` when `c = 1`, `ZerosLike(A)` when `c = 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleName {
    // Inlining and forward substitution (Section 5.1).
    /// `(fun (x1,...,xn) -> e)(e1,...,en) ~> let x1 = e1 in ... let xn = en in e`.
    Beta,
    /// `let f = fun .. in e ~> e[fun ../f]` when `f` is used once (Lemma 5.1).
    InlineLambda,
    /// `let x = e1 in e2 ~> e2` when `x` is not in `FV(e2)`.
    DeadLet,
    /// `let x1 = x2 in e ~> e[x2/x1]`.
    ForwardVar,
    /// `let x = c in e ~> e[c/x]` for a literal `c`.
    ForwardConst,
    /// `(fun x -> e2) e1 ~> e2[e1/x]` for a parameter used once.
    InlineArg,
    /// `let x = e1 in e2 ~> e2[e1/x]` for `x` used once, not under a lambda.
    InlineOnce,
    /// `let x = e in ... e ... ~> let x = e in ... x ...` for `e` a builtin of variables and literals.
    Cse,
    /// `let x = e in ... let y = e' in ... ~> ... y := x ...` for loops `e`, `e'` equal up to the names of their binders.
    CseAlpha,
    /// An expensive function of an array's elements computed by loops in two `let`s of a chain ~> computed once into an array they read (`fuse/share.rs`).
    ShareElementwise,
    /// An inner loop computed for each element by two loops over the same arrays ~> computed once into an array they read (`fuse/inner.rs`).
    ShareInnerLoop,
    /// `.. reduce f z A .. scanl f z A ..` in one chain of `let`s ~> `let S = scanl f z A in .. S[length A] .. S ..` (`fuse/scan.rs`).
    ReduceFromScan,
    // Tuple partial evaluation.
    /// `(e1, ..., en).i ~> ei`.
    ProjTuple,
    /// `let (x1, ..., xn) = (e1, ..., en) in e ~> let x1 = e1 in ... let xn = en in e`.
    TupleLet,
    /// `let x = (e1, ..., en) in e ~> let x1 = e1 in ... let xn = en in e[(x1, ..., xn)/x]`.
    SplitTuple,
    // Let normalisation.
    /// `let x = (let y = e1 in e2) in e3 ~> let y = e1 in let x = e2 in e3`.
    LetLet,
    /// `f(let x = e1 in e2) ~> let x = e1 in f(e2)`.
    LetFloat,
    /// `let x = e in x ~> e`.
    LetVar,
    // Algebraic simplifications.
    /// `0 * e ~> 0`, `e * 0 ~> 0`.
    ZeroMul,
    /// `0 + e ~> e`, `e + 0 ~> e`, `e - 0 ~> e`, `0 - e ~> -e`.
    ZeroAdd,
    /// `1 * e ~> e`, `e * 1 ~> e`, `e / 1 ~> e`.
    OneMul,
    /// `-(-e) ~> e`.
    NegNeg,
    /// `c1 op c2 ~> c` and `op c1 ~> c`: builtins of literals computed at compile time.
    ConstFold,
    // Array algebraic simplifications.
    /// `map2 (x,y. e) A K(B) ~> map (x. let y = c in e) A`, and on the left.
    Map2Const,
    /// `map2 (x,y. e) A B ~> map (x. e) A` when `y` is not in `FV(e)`, and on the left.
    Map2Unused,
    /// `map (x. x) A ~> A`, and `map (x. (x.1, ..., x.n)) A ~> A`.
    MapIdentity,
    /// `map2 (x,y. e) A A ~> map (x. let y = x in e) A`.
    Map2Same,
    /// `K(A) ~> K(B)` when `B` has the length of `A` and is cheaper (`A = map f B`, `shift1R (scanl f z B)`, ...).
    ConstShape,
    /// `reduce (+) z ZerosLike(A) ~> z`, `reduce (*) z OnesLike(A) ~> z`, and the same for `foldl`.
    ReduceConst,
    /// `shift1L K(A) ~> K(shift1L A)`, `shift1R K(A) ~> K(shift1R A)`.
    ShiftConst,
    /// `shift1L (scanr (*) z OnesLike(A)) ~> map (fun _ -> z) A`, and `scanl`, `shift1R`, `(+)` with `ZerosLike`.
    ScanConst,
    /// `length (map f A) ~> length A`, `length (map2 f A B) ~> length A`, `length (build n f) ~> n`.
    LengthOf,
    // Classic array simplifications.
    /// `map (x. e1) (map (y. e2) A) ~> map (y. let x = e2 in e1) A`, with `map2` on either side.
    MapFusion,
    /// `let X = map f A in .. map (fun c -> .. X[e] ..) C ..` ~> `.. map (fun c -> .. (map f A)[e] ..) C ..`, one element computed per read (also X's one read `X[i]` in an `ifold` at its counter `i`).
    GatherFusion,
    /// `let X = map2 f A B in .. map (fun t -> t.1) X .. map (fun t -> t.2) X ..` ~> each projection of its own `map2 f A B`.
    UnzipFusion,
    /// `let X = map2 f A B in .. X .. X ..` ~> the sources bound once, `map2 f A B` at every use (f cheap arithmetic).
    RecomputeCheap,
    /// `let X = map f A in .. reduce g1 z1 (map p1 X) .. reduce g2 z2 (map p2 X) ..` ~> one reduction of pairs (`fuse.rs`).
    ReduceFusion,
    /// `let X = map f A` whose uses are all maps reading components of the elements keeps only the components they read (`fuse.rs`).
    PruneComponents,
    /// `(ifold f z n).i ~> ..` with the accumulator components that neither the result's uses nor `f` read dropped (`local/accumulator.rs`; also `foldl`, `reduce`, a `let`-bound fold only projected).
    PruneAccumulator,
    /// `build N (fun c -> .. hist_add Z I (map (fun t -> F) G) ..)` ~> one `hist_add_rows` of rows of N read back by column (`local/hist.rs`).
    HistInterchange,
    // Conditionals.
    /// `if e1 then e2 else e2 ~> e2` (the branches equal up to bound names).
    IfSame,
    /// `if true then e2 else e3 ~> e2`, `if false then e2 else e3 ~> e3`.
    IfConst,
    /// `f(if e1 then e2 else e3) ~> if e1 then f(e2) else f(e3)` for a call, projection or builtin `f` whose other arguments are atoms, when a branch simplifies.
    IfFloat,
    /// `if x then (a1, ..., an) else (b1, ..., bn) ~> (if x then a1 else b1, ...)` when a component is a function.
    IfTuple,
}

impl RuleName {
    /// Every rule, in the order of Fig. 12.
    pub const ALL: &'static [RuleName] = &[
        RuleName::Beta,
        RuleName::InlineLambda,
        RuleName::DeadLet,
        RuleName::ForwardVar,
        RuleName::ForwardConst,
        RuleName::InlineArg,
        RuleName::InlineOnce,
        RuleName::Cse,
        RuleName::CseAlpha,
        RuleName::ShareElementwise,
        RuleName::ShareInnerLoop,
        RuleName::ReduceFromScan,
        RuleName::ProjTuple,
        RuleName::TupleLet,
        RuleName::SplitTuple,
        RuleName::LetLet,
        RuleName::LetFloat,
        RuleName::LetVar,
        RuleName::ZeroMul,
        RuleName::ZeroAdd,
        RuleName::OneMul,
        RuleName::NegNeg,
        RuleName::ConstFold,
        RuleName::Map2Const,
        RuleName::Map2Unused,
        RuleName::MapIdentity,
        RuleName::Map2Same,
        RuleName::ConstShape,
        RuleName::ReduceConst,
        RuleName::ShiftConst,
        RuleName::ScanConst,
        RuleName::LengthOf,
        RuleName::MapFusion,
        RuleName::GatherFusion,
        RuleName::UnzipFusion,
        RuleName::RecomputeCheap,
        RuleName::ReduceFusion,
        RuleName::PruneComponents,
        RuleName::PruneAccumulator,
        RuleName::HistInterchange,
        RuleName::IfSame,
        RuleName::IfConst,
        RuleName::IfFloat,
        RuleName::IfTuple,
    ];

    /// The position in [`RuleName::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kebab-case name used on the command line (`--rule beta`).
    pub fn name(self) -> &'static str {
        match self {
            RuleName::Beta => "beta",
            RuleName::InlineLambda => "inline-lambda",
            RuleName::DeadLet => "dead-let",
            RuleName::ForwardVar => "forward-var",
            RuleName::ForwardConst => "forward-const",
            RuleName::InlineArg => "inline-arg",
            RuleName::InlineOnce => "inline-once",
            RuleName::Cse => "cse",
            RuleName::CseAlpha => "cse-alpha",
            RuleName::ShareElementwise => "share-elementwise",
            RuleName::ShareInnerLoop => "share-inner-loop",
            RuleName::ReduceFromScan => "reduce-from-scan",
            RuleName::ProjTuple => "proj-tuple",
            RuleName::TupleLet => "tuple-let",
            RuleName::SplitTuple => "split-tuple",
            RuleName::LetLet => "let-let",
            RuleName::LetFloat => "let-float",
            RuleName::LetVar => "let-var",
            RuleName::ZeroMul => "zero-mul",
            RuleName::ZeroAdd => "zero-add",
            RuleName::OneMul => "one-mul",
            RuleName::NegNeg => "neg-neg",
            RuleName::ConstFold => "const-fold",
            RuleName::Map2Const => "map2-const",
            RuleName::Map2Unused => "map2-unused",
            RuleName::MapIdentity => "map-identity",
            RuleName::Map2Same => "map2-same",
            RuleName::ConstShape => "const-shape",
            RuleName::ReduceConst => "reduce-const",
            RuleName::ShiftConst => "shift-const",
            RuleName::ScanConst => "scan-const",
            RuleName::LengthOf => "length-of",
            RuleName::MapFusion => "map-fusion",
            RuleName::GatherFusion => "gather-fusion",
            RuleName::UnzipFusion => "unzip-fusion",
            RuleName::RecomputeCheap => "recompute-cheap",
            RuleName::ReduceFusion => "reduce-fusion",
            RuleName::PruneComponents => "prune-components",
            RuleName::PruneAccumulator => "prune-accumulator",
            RuleName::HistInterchange => "hist-interchange",
            RuleName::IfSame => "if-same",
            RuleName::IfConst => "if-const",
            RuleName::IfFloat => "if-float",
            RuleName::IfTuple => "if-tuple",
        }
    }

    /// The group of Fig. 12 the rule belongs to.
    pub fn group(self) -> &'static str {
        match self {
            RuleName::Beta
            | RuleName::InlineLambda
            | RuleName::DeadLet
            | RuleName::ForwardVar
            | RuleName::ForwardConst
            | RuleName::InlineArg
            | RuleName::InlineOnce => "inlining and forward substitution",
            RuleName::Cse
            | RuleName::CseAlpha
            | RuleName::ShareElementwise
            | RuleName::ShareInnerLoop
            | RuleName::ReduceFromScan => "common subexpressions",
            RuleName::ProjTuple | RuleName::TupleLet | RuleName::SplitTuple => {
                "tuple partial evaluation"
            }
            RuleName::LetLet | RuleName::LetFloat | RuleName::LetVar => "let normalisation",
            RuleName::ZeroMul
            | RuleName::ZeroAdd
            | RuleName::OneMul
            | RuleName::NegNeg
            | RuleName::ConstFold => "algebraic simplifications",
            RuleName::Map2Const
            | RuleName::Map2Unused
            | RuleName::MapIdentity
            | RuleName::Map2Same
            | RuleName::ConstShape
            | RuleName::ReduceConst
            | RuleName::ShiftConst
            | RuleName::ScanConst
            | RuleName::LengthOf => "array algebraic simplifications",
            RuleName::MapFusion
            | RuleName::GatherFusion
            | RuleName::UnzipFusion
            | RuleName::RecomputeCheap
            | RuleName::ReduceFusion
            | RuleName::PruneComponents
            | RuleName::PruneAccumulator
            | RuleName::HistInterchange => "classic array simplifications",
            RuleName::IfSame | RuleName::IfConst | RuleName::IfFloat | RuleName::IfTuple => {
                "conditionals"
            }
        }
    }

    /// The rule as a one-line rewrite, `lhs ~> rhs (side condition)`.
    pub fn description(self) -> &'static str {
        match self {
            RuleName::Beta => {
                "(fun (x1,...,xn) -> e)(e1,...,en) ~> let x1 = e1 in ... let xn = en in e"
            }
            RuleName::InlineLambda => {
                "let f = fun .. in e ~> e[fun ../f]  (f used once; or every use a call and the copies small)"
            }
            RuleName::DeadLet => "let x = e1 in e2 ~> e2  (x not in FV(e2))",
            RuleName::ForwardVar => "let x1 = x2 in e ~> e[x2/x1]",
            RuleName::ForwardConst => "let x = c in e ~> e[c/x]  (c a literal: 0, 1, ...)",
            RuleName::InlineArg => {
                "(fun (.., x, ..) -> e2)(.., e1, ..) ~> e2[e1/x]  (in beta: x used once, not under a lambda)"
            }
            RuleName::InlineOnce => {
                "let x = e1 in e2 ~> e2[e1/x]  (x used once in e2, not under a lambda)"
            }
            RuleName::Cse => {
                "let x = e in ... e ... ~> let x = e in ... x ...  (e a builtin of variables and literals, or an index A[i] of them; x in scope)"
            }
            RuleName::CseAlpha => {
                "let x = e in ... let y = e' in b ~> let x = e in ... b[x/y]  (e' equal to e up to the names of its binders, e a loop: map, map2, reduce, foldl, a scan, build, ifold; or a conditional not of a tuple, or an array literal; x in scope)"
            }
            RuleName::ShareElementwise => {
                "let y1 = .. map (fun x -> .. e(x) ..) A .. in .. let y2 = .. map (fun z -> .. e(z) ..) A .. ~> let E = map (fun a -> e(a)) A in let y1 = .. map2 (fun (x, q) -> .. q ..) A E .. in ..  (e real, with exp, log, sin, cos, tan, tanh, sqrt or pow, of the element, literals and names bound before; no indexing, call or loop in e; loops in two lets of one chain; also map2)"
            }
            RuleName::ShareInnerLoop => {
                "let y1 = map2 (fun (c, m) -> .. e(c, m) ..) C M in .. let y2 = .. map2 (fun (p, z) -> .. e(p.1, p.2) ..) (zip C M) Z .. ~> let S = map2 (fun (c, m) -> e(c, m)) C M in .. loops reading S alongside  (e an inner loop, not only arithmetic, equal up to binders and the names of the elements; also map2 (fun r -> let a = e' in G(a)) in the first loop, which becomes map G s)"
            }
            RuleName::ReduceFromScan => {
                ".. reduce f z A .. scanl f' z' A .. ~> let S = scanl f z A in .. S[length A] .. S ..  (f' and z' equal to f and z up to the names of their binders, A a variable; both in one chain of lets, outside lambdas and branches, f, z, A bound before the first; also foldl; not scanr; only once the other rules have settled)"
            }
            RuleName::ProjTuple => "(e1, ..., en).i ~> ei",
            RuleName::TupleLet => {
                "let (x1, ..., xn) = (e1, ..., en) in e ~> let x1 = e1 in ... let xn = en in e"
            }
            RuleName::SplitTuple => {
                "let x = (e1, ..., en) in e ~> let x1 = e1 in ... let xn = en in e[(x1, ..., xn)/x]  (x only projected); and let x = if c then (a1, a2) else (b1, b2) in e ~> let x2 = if c then a2 else b2 in e[(_, x2)/x] (branches, through their lets, ending in tuples; x only projected, component 1 never)"
            }
            RuleName::LetLet => {
                "let x = (let y = e1 in e2) in e3 ~> let y = e1 in let x = e2 in e3"
            }
            RuleName::LetFloat => "f(let x = e1 in e2) ~> let x = e1 in f(e2)",
            RuleName::LetVar => "let x = e in x ~> e",
            RuleName::ZeroMul => "0 * e ~> 0, e * 0 ~> 0",
            RuleName::ZeroAdd => "0 + e ~> e, e + 0 ~> e, e - 0 ~> e, 0 - e ~> -e",
            RuleName::OneMul => "1 * e ~> e, e * 1 ~> e, e / 1 ~> e",
            RuleName::NegNeg => "-(-e) ~> e",
            RuleName::ConstFold => "op c1 ... ck ~> c  (a builtin of literals, computed now)",
            RuleName::Map2Const => {
                "map2 (x,y. e) A (map (fun _ -> c) B) ~> map (x. let y = c in e) A, and on the left"
            }
            RuleName::Map2Unused => {
                "map2 (x,y. e) A B ~> map (x. e) A  (y not in FV(e)), and on the left"
            }
            RuleName::MapIdentity => "map (x. x) A ~> A, map (x. (x.1, ..., x.n)) A ~> A",
            RuleName::Map2Same => "map2 (x,y. e) A A ~> map (x. let y = x in e) A  (A a variable)",
            RuleName::ConstShape => {
                "map (fun _ -> c) A ~> map (fun _ -> c) B  (B as long as A and cheaper: A = map f B, map2 f B C, shift1R (scanl f z B), ...)"
            }
            RuleName::ReduceConst => {
                "reduce (+) z ZerosLike(A) ~> z, reduce (*) z OnesLike(A) ~> z, and foldl"
            }
            RuleName::ShiftConst => {
                "shift1L (map (fun _ -> c) A) ~> map (fun _ -> c) (shift1L A), and shift1R"
            }
            RuleName::ScanConst => {
                "shift1L (scanr f z (map (fun _ -> c) A)) ~> map (fun _ -> z) A  (f = (+), c = 0 or f = (*), c = 1; z a literal), and scanl, shift1R"
            }
            RuleName::MapFusion => {
                "map (x. e1) (map (y. e2) A) ~> map (y. let x = e2 in e1) A, and with map2 inside or outside; (map (x. e) A)[i] ~> let x = A[i] in e"
            }
            RuleName::LengthOf => {
                "length (map f A) ~> length A, length (map2 f A B) ~> length A, length (build n f) ~> n  (n integer arithmetic of literals and names; also through a let-bound X)"
            }
            RuleName::GatherFusion => {
                "let X = map f A in .. map (fun c -> .. X[e] ..) C .. ~> let A' = A in .. map (fun c -> .. (let x = A'[e] in f x) ..) C ..  (every use of X an index directly in the function of a map or map2 one lambda below X, at most 3 of them; f not structural; also map2; and X's only use X[i] directly in the function of an ifold, i its counter, once the other rules have settled)"
            }
            RuleName::UnzipFusion => {
                "let X = map2 f A B in ... map (fun t -> t.i) X ... ~> ... map (fun t -> t.i) (map2 f A B) ...  (every use of X a projection map, each component once, not under a lambda; also map)"
            }
            RuleName::RecomputeCheap => {
                "let X = map2 f A B in .. X .. X .. ~> let A' = A in let B' = B in .. map2 f A' B' .. map2 f A' B' ..  (X used more than once, never under a lambda; f only arithmetic without division or transcendental functions, projections, tuples, lets, conditionals and maps of such; the copies within the inline budget; also map; and, under lambdas and used any number of times, `let X = map f A` with f structural: only taking its element apart and rebuilding it with literals, as forward mode's zero tangents `map (fun v -> (v, 0)) A`)"
            }
            RuleName::ReduceFusion => {
                "let X = map f A in .. reduce g1 z1 (map p1 X) .. reduce g2 z2 (map p2 X) .. ~> let (r1, r2) = reduce (fun (u, v) -> (g1 u.1 v.1, g2 u.2 v.2)) (z1, z2) (map (fun a -> (p1 a, p2 a)) (map f A)) in .. r1 .. r2 ..  (every use of X such a reduction (or foldl, all alike; `map p` optional), outside lambdas and branches; the g, z, p of every use bound before the first; also map2, build)"
            }
            RuleName::PruneComponents => {
                "let X = map f A in .. map (fun t -> t.i) X .. ~> let X = map (fun a -> let t = f a in (t.i, ..)) A in ..  (every use of X a projection map, or a map whose function uses its element only as projections t.i (t.i.j, ..), some component never read; also map2, build)"
            }
            RuleName::PruneAccumulator => {
                "(ifold (fun (s, i) -> e) z n).j ~> let r = ifold (fun (s', i) -> let s = (.., s', ..) in e') z' n in r  (the components of s that neither the result's uses nor e need, all real, integer or boolean, dropped: e' and z' build the rest, the dropped ones are literals in s; a 1-tuple is its component; also foldl, reduce (its array mapped to the kept components), and `let x = fold ..` whose every use is a projection)"
            }
            RuleName::HistInterchange => {
                "build N (fun c -> hist_add Z I (map (fun t -> F) G)) ~> let D = N in let H = hist_add_rows (map (fun z -> build D (fun _ -> z)) Z) I (map (fun t -> build D (fun c' -> F[c'/c])) G) in build D (fun c -> map (fun r -> r[c]) H)  (Z, I, G free of c and of the body's lets, F not; bins of scalars; every such histogram evaluated once per column, not under a lambda or in a branch, moved out; the sums bit for bit the original's)"
            }
            RuleName::IfSame => "if e1 then e2 else e2 ~> e2",
            RuleName::IfConst => "if true then e2 else e3 ~> e2, if false then e2 else e3 ~> e3",
            RuleName::IfFloat => {
                "f(if e1 then e2 else e3) ~> if e1 then f(e2) else f(e3)  (f a call, projection or builtin, other arguments atoms, a branch simplifies)"
            }
            RuleName::IfTuple => {
                "if x then (a1, ..., an) else (b1, ..., bn) ~> (if x then a1 else b1, ..., if x then an else bn)  (a component is a function; branches may start with lets, which then stay with the ground components)"
            }
        }
    }

    /// The rule with this command-line name.
    pub fn from_name(name: &str) -> Option<RuleName> {
        RuleName::ALL.iter().copied().find(|r| r.name() == name)
    }
}

impl fmt::Display for RuleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One line of the rule listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// The rule.
    pub rule: RuleName,
    /// Its command-line name.
    pub name: &'static str,
    /// Its group in Fig. 12.
    pub group: &'static str,
    /// The rewrite, `lhs ~> rhs (side condition)`.
    pub description: &'static str,
}

/// Every rule with its name, group and statement, in the order of Fig. 12.
pub fn rules() -> Vec<RuleInfo> {
    RuleName::ALL
        .iter()
        .map(|&rule| RuleInfo {
            rule,
            name: rule.name(),
            group: rule.group(),
            description: rule.description(),
        })
        .collect()
}

/// A set of rules, the ones a run may fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuleSet(u64);

impl RuleSet {
    /// Every rule.
    pub fn all() -> RuleSet {
        RuleSet(RuleName::ALL.iter().fold(0, |acc, r| acc | 1 << r.index()))
    }

    /// No rule: the optimizer then only rebuilds the program.
    pub fn none() -> RuleSet {
        RuleSet(0)
    }

    /// Only `rule`.
    pub fn only(rule: RuleName) -> RuleSet {
        RuleSet(1 << rule.index())
    }

    /// This set with `rule` added.
    pub fn with(self, rule: RuleName) -> RuleSet {
        RuleSet(self.0 | 1 << rule.index())
    }

    /// This set with `rule` removed.
    pub fn without(self, rule: RuleName) -> RuleSet {
        RuleSet(self.0 & !(1 << rule.index()))
    }

    /// Whether `rule` may fire.
    pub fn contains(self, rule: RuleName) -> bool {
        self.0 & (1 << rule.index()) != 0
    }
}

impl Default for RuleSet {
    fn default() -> RuleSet {
        RuleSet::all()
    }
}
