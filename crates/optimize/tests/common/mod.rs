//! Helpers shared by the optimizer's tests: compiling program text to a
//! typed core-form module, evaluating it, comparing values, and a printer
//! "sugar" that shows `fun (a, b) -> a * b` as `(*)` and
//! `map (fun x -> 1) A` as `ones_like A`, for the paper's forms.

#![allow(dead_code)]

pub mod chain;
pub mod source;

#[allow(unused_imports)]
pub use chain::let_chain_grad;

use semantics::{Expectations, Value};
use syntax::{Expr, Module, Name, Prim, SourceFile};

/// Compiles program text (parse, elaborate, infer); panics with the error.
pub fn compile(text: &str) -> Module {
    match syntax::compile(SourceFile {
        name: "test.ad".to_string(),
        text: text.to_string(),
    }) {
        Ok(m) => m,
        Err(e) => panic!("the test program does not compile: {e}\n{text}"),
    }
}

/// The unoptimized gradient of `text`'s last definition: reverse mode
/// through UNF (`unf::lower`, D_rho, `unf::raise`).
pub fn gradient(text: &str) -> Module {
    let source = compile(text);
    let def = source.defs.last().expect("a definition").clone();
    let lowered = unf::lower(&source, &def).expect("UNF");
    let target = reverse::reverse(&lowered, &reverse::Config::default()).expect("reverse mode");
    unf::raise(&target).expect("UNF^-1")
}

/// The text of `tests/programs/NAME.ad`.
pub fn program_text(name: &str) -> String {
    let path = format!("{}/tests/programs/{name}.ad", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// Optimizes the program `text` with `rules`: its value before and after
/// must agree (and match its `-- value`); returns the counted cost after
/// and how often each rule fired.
pub fn optimized_cost(
    text: &str,
    rules: optimize::RuleSet,
) -> (
    semantics::cost::Cost,
    std::collections::BTreeMap<optimize::RuleName, usize>,
) {
    let m = compile(text);
    let (inputs, expected) = expectations(text, &m);
    let cfg = optimize::Config {
        rules,
        ..optimize::Config::default()
    };
    let (out, report) = optimize::optimize_report(&m, &cfg).expect("optimizes");
    verified(&out, "the optimized program");
    let before = eval(&m, &inputs).expect("the program runs");
    let after = eval(&out, &inputs).expect("the optimized program runs");
    assert!(same(&before, &after), "{before:?} against {after:?}");
    if let Some(v) = expected {
        assert!(same(&after, &v), "{after:?} against the expected {v:?}");
    }
    let def = out.entry(None).expect("a definition");
    let c = semantics::cost::dynamic_cost(&out, def, &args_of(&out, &inputs))
        .expect("counted")
        .1;
    (c, report.fired)
}

/// The number of reachable `op` nodes in the entry's body.
pub fn count_prims(m: &Module, op: Prim) -> usize {
    let def = m.entry(None).expect("a definition");
    let mut todo = vec![def.body];
    let mut n = 0;
    while let Some(i) = todo.pop() {
        if matches!(m.expr(i), Expr::Prim { op: o, .. } if *o == op) {
            n += 1;
        }
        m.expr(i).for_each_child(|c| todo.push(c));
    }
    n
}

/// The `-- at` inputs and the `-- value` of a program's text.
pub fn expectations(text: &str, m: &Module) -> (Vec<(String, Value)>, Option<Value>) {
    let ex = Expectations::parse(text);
    let def = m.entry(None).expect("a definition");
    let inputs = ex.inputs(def).expect("the `at` comments read");
    let value = ex
        .value(m, def)
        .map(|v| v.expect("the `value` comment reads"));
    (inputs, value)
}

/// Evaluates the entry of `m` at `inputs`.
pub fn eval(m: &Module, inputs: &[(String, Value)]) -> Result<Value, semantics::Error> {
    semantics::eval_entry(m, None, inputs)
}

/// Whether two results agree (reals with the expectation tolerance).
pub fn same(a: &Value, b: &Value) -> bool {
    a.approx_eq_default(b)
}

/// Panics unless `m` passes the verifier.
pub fn verified(m: &Module, what: &str) {
    if let Err(errs) = syntax::verify(m) {
        let msgs: Vec<String> = errs.iter().map(|e| format!("{e:?}")).collect();
        panic!(
            "{what} fails the verifier:\n{}\n{}",
            msgs.join("\n"),
            syntax::print::module(m)
        );
    }
}

/// The module printed with the paper's notation (see [`sugared`]).
pub fn sugar(m: &Module) -> String {
    syntax::print::module(&sugared(m))
}

/// The module with the paper's notation: binary-operator lambdas as
/// sections, constant-one maps as `ones_like`, constant-zero maps as
/// `zeros_like`. Only for comparing with the paper's forms.
pub fn sugared(m: &Module) -> Module {
    let mut s = m.clone();
    for i in 0..s.exprs.len() {
        if let Expr::Lambda { params, body } = &s.exprs[i]
            && params.len() == 2
            && let Expr::Prim { op, args } = &m.exprs[body.index()]
            && matches!(op, Prim::Add | Prim::Sub | Prim::Mul | Prim::Div)
            && let [a, b] = args.as_slice()
            && matches!(&m.exprs[a.index()], Expr::Var(x) if *x == params[0].name)
            && matches!(&m.exprs[b.index()], Expr::Var(y) if *y == params[1].name)
        {
            s.exprs[i] = Expr::Section(*op);
        }
    }
    for i in 0..s.exprs.len() {
        if let Expr::Prim {
            op: Prim::Map,
            args,
        } = &m.exprs[i]
            && let Expr::Lambda { params, body } = &m.exprs[args[0].index()]
            && params.len() == 1
        {
            let name = match &m.exprs[body.index()] {
                Expr::Real(x) if *x == 1.0 => "ones_like",
                Expr::Real(x) if *x == 0.0 => "zeros_like",
                _ => continue,
            };
            let (f, a) = (args[0], args[1]);
            s.exprs[f.index()] = Expr::Var(Name::new(name));
            s.exprs[i] = Expr::App {
                func: f,
                args: vec![a],
            };
        }
    }
    s
}

/// The components of the tuple the entry's body ends in (or the one
/// result), each printed with the paper's sugar and with every name bound
/// by the body's `let`s replaced by its value: forms that are equal up to
/// the names and the placement of `let`s print equal.
pub fn expanded_results(m: &Module) -> Vec<String> {
    let s = sugared(m);
    let def = s.entry(None).expect("a definition");
    let mut lets = std::collections::HashMap::new();
    let mut cur = def.body;
    while let Expr::Let {
        pat: syntax::Pat::Var(x),
        value,
        body,
        ..
    } = s.expr(cur)
    {
        lets.insert(x.clone(), *value);
        cur = *body;
    }
    let results = match s.expr(cur) {
        Expr::Tuple(items) => items.clone(),
        _ => vec![cur],
    };
    results
        .into_iter()
        .map(|r| {
            let mut out = Module::new(s.file.clone());
            let id = copy_expanded(&s, r, &lets, &mut out);
            syntax::print::expr(&out, id).trim().to_string()
        })
        .collect()
}

fn copy_expanded(
    src: &Module,
    id: syntax::ExprId,
    lets: &std::collections::HashMap<Name, syntax::ExprId>,
    out: &mut Module,
) -> syntax::ExprId {
    if let Expr::Var(x) = src.expr(id)
        && let Some(&v) = lets.get(x)
    {
        return copy_expanded(src, v, lets, out);
    }
    let e = src.expr(id);
    let kids: Vec<syntax::ExprId> = e
        .children()
        .into_iter()
        .map(|c| copy_expanded(src, c, lets, out))
        .collect();
    let mut kids = kids.into_iter();
    let e = e.map_children(|_| kids.next().expect("one new child per child"));
    out.add(e, src.span(id))
}

/// The lengths of each array level of a value (`[[1, 2], [3, 4], [5, 6]]`
/// gives `[3, 2]`; a scalar gives `[]`).
pub fn lengths(v: &Value) -> Vec<u64> {
    let mut out = Vec::new();
    let mut cur = v;
    while let Some(items) = cur.as_array() {
        out.push(items.len() as u64);
        match items.first() {
            Some(first) => cur = first,
            None => break,
        }
    }
    out
}

/// The inputs in the order of the entry's parameters.
pub fn args_of(m: &Module, inputs: &[(String, Value)]) -> Vec<Value> {
    let def = m.entry(None).expect("a definition");
    def.params
        .iter()
        .map(|p| {
            inputs
                .iter()
                .find(|(n, _)| n == p.name.as_str())
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no input for `{}`", p.name))
        })
        .collect()
}

/// The text of the repository's `fixtures/NAME/program.ad`.
pub fn fixture_program(name: &str) -> String {
    let path = format!(
        "{}/../../fixtures/{name}/program.ad",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}
