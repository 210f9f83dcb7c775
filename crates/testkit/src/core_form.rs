//! A builder of core-form Source modules for the tests of `unf` and
//! `reverse` (which build modules node by node, bypassing the front end),
//! the let chain of their scale tests, and running modules with the
//! reference evaluator.

pub use crate::values::{reals as reals_of, with_reals};
pub use semantics::Value;
use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty};

/// `[n]R`, the array type of the built modules' array parameters.
pub fn arr() -> Ty {
    Ty::array(Size::Var(Name::new("n"), 0), Ty::Real)
}

/// Builds a core-form module bottom-up.
pub struct B {
    /// The module built so far (its nodes; a definition once [`B::def`]).
    pub m: Module,
}

impl Default for B {
    fn default() -> B {
        B::new()
    }
}

impl B {
    /// An empty module, named `test.ad`.
    pub fn new() -> B {
        B {
            m: Module::new(SourceFile {
                name: "test.ad".into(),
                text: String::new(),
            }),
        }
    }
    fn add(&mut self, e: Expr, ty: Ty) -> ExprId {
        let id = self.m.add(e, Span::new(0, 0));
        self.m.types.push(ty);
        id
    }
    /// A variable of type `ty`.
    pub fn var(&mut self, x: &str, ty: Ty) -> ExprId {
        self.add(Expr::Var(Name::new(x)), ty)
    }
    /// A real literal.
    pub fn real(&mut self, c: f64) -> ExprId {
        self.add(Expr::Real(c), Ty::Real)
    }
    /// A real-valued primitive applied to `args`.
    pub fn op(&mut self, op: Prim, args: Vec<ExprId>) -> ExprId {
        self.add(Expr::Prim { op, args }, Ty::Real)
    }
    /// A primitive applied to `args`, of result type `ty`.
    pub fn prim(&mut self, op: Prim, args: Vec<ExprId>, ty: Ty) -> ExprId {
        self.add(Expr::Prim { op, args }, ty)
    }
    /// `let x = value in body`.
    pub fn let_(&mut self, x: &str, value: ExprId, body: ExprId) -> ExprId {
        let ty = self.m.types[body.index()].clone();
        self.add(
            Expr::Let {
                pat: Pat::Var(Name::new(x)),
                ty: None,
                value,
                body,
            },
            ty,
        )
    }
    /// `let (x1, ..., xk) = value in body`.
    pub fn let_tuple(&mut self, xs: &[&str], value: ExprId, body: ExprId) -> ExprId {
        let ty = self.m.types[body.index()].clone();
        let pat = Pat::Tuple(xs.iter().map(|x| Name::new(*x)).collect());
        self.add(
            Expr::Let {
                pat,
                ty: None,
                value,
                body,
            },
            ty,
        )
    }
    /// A tuple of `items`.
    pub fn tuple(&mut self, items: Vec<ExprId>) -> ExprId {
        let ty = Ty::Tuple(
            items
                .iter()
                .map(|i| self.m.types[i.index()].clone())
                .collect(),
        );
        self.add(Expr::Tuple(items), ty)
    }
    /// The `index`-th component (from 1) of the tuple `t`.
    pub fn proj(&mut self, t: ExprId, index: u32) -> ExprId {
        let Ty::Tuple(items) = self.m.types[t.index()].clone() else {
            panic!()
        };
        self.add(
            Expr::Proj { tuple: t, index },
            items[index as usize - 1].clone(),
        )
    }
    /// A lambda of real parameters.
    pub fn lam(&mut self, params: &[&str], body: ExprId) -> ExprId {
        let ps: Vec<Param> = params
            .iter()
            .map(|p| Param {
                name: Name::new(*p),
                ty: Some(Ty::Real),
                span: Span::new(0, 0),
            })
            .collect();
        let ty = Ty::Func(
            vec![Ty::Real; params.len()],
            Box::new(self.m.types[body.index()].clone()),
        );
        self.add(Expr::Lambda { params: ps, body }, ty)
    }
    /// The module with one definition `name params = body`.
    pub fn def(mut self, name: &str, params: &[(&str, Ty)], body: ExprId) -> Module {
        let ret = self.m.types[body.index()].clone();
        self.m.defs.push(Def {
            name: Name::new(name),
            name_span: Span::new(0, 0),
            params: params
                .iter()
                .map(|(n, t)| Param {
                    name: Name::new(*n),
                    ty: Some(t.clone()),
                    span: Span::new(0, 0),
                })
                .collect(),
            ret: Some(ret),
            body,
        });
        self.m
    }
}

/// Runs the last definition of a module with the reference evaluator.
pub fn run(m: &Module, args: &[Value]) -> Value {
    let def = m.defs.last().expect("a definition");
    match semantics::eval_def(m, def, args) {
        Ok(v) => v,
        Err(e) => panic!("evaluation failed: {e}\n{}", syntax::print::module(m)),
    }
}

/// The real a value is.
pub fn r(v: &Value) -> f64 {
    v.as_real().unwrap_or_else(|| panic!("not a real: {v}"))
}

/// The components of a tuple.
pub fn items(v: &Value) -> Vec<Value> {
    v.as_tuple()
        .unwrap_or_else(|| panic!("not a tuple: {v}"))
        .to_vec()
}

/// `def chain (a : R) (x : R) : R = let x1 = x * a + sin x in ... in x_n`.
pub fn chain(n: usize) -> syntax::Module {
    let mut b = B::new();
    let mut values = Vec::new();
    for i in 1..=n {
        let prev = if i == 1 {
            "x".to_string()
        } else {
            format!("x{}", i - 1)
        };
        let p1 = b.var(&prev, Ty::Real);
        let a = b.var("a", Ty::Real);
        let m = b.op(Prim::Mul, vec![p1, a]);
        let p2 = b.var(&prev, Ty::Real);
        let s = b.op(Prim::Sin, vec![p2]);
        values.push(b.op(Prim::Add, vec![m, s]));
    }
    let mut body = b.var(&format!("x{n}"), Ty::Real);
    for i in (1..=n).rev() {
        body = b.let_(&format!("x{i}"), values[i - 1], body);
    }
    b.def("chain", &[("a", Ty::Real), ("x", Ty::Real)], body)
}
