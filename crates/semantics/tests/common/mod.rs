//! Building core-form modules by hand for the evaluator's tests.
//!
//! Every node gets the span `n..n+1` where `n` is its id, so a test can
//! check that an error points at the node it is about.

#![allow(dead_code)]

use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty};

/// A module under construction.
pub struct B {
    pub m: Module,
}

impl B {
    pub fn new() -> B {
        B {
            m: Module::new(SourceFile {
                name: "test.ad".into(),
                text: String::new(),
            }),
        }
    }

    pub fn add(&mut self, e: Expr) -> ExprId {
        let n = self.m.exprs.len();
        self.m.add(e, Span::new(n, n + 1))
    }

    pub fn var(&mut self, n: &str) -> ExprId {
        self.add(Expr::Var(Name::new(n)))
    }

    pub fn real(&mut self, x: f64) -> ExprId {
        self.add(Expr::Real(x))
    }

    pub fn int(&mut self, i: i64) -> ExprId {
        self.add(Expr::Int(i))
    }

    pub fn boolean(&mut self, b: bool) -> ExprId {
        self.add(Expr::Bool(b))
    }

    pub fn reals(&mut self, xs: &[f64]) -> ExprId {
        let items = xs.iter().map(|&x| self.real(x)).collect();
        self.add(Expr::Array(items))
    }

    pub fn prim(&mut self, op: Prim, args: &[ExprId]) -> ExprId {
        self.add(Expr::Prim {
            op,
            args: args.to_vec(),
        })
    }

    /// `fun (p1, ..., pk) -> body`, untyped parameters.
    pub fn lam(&mut self, params: &[&str], body: ExprId) -> ExprId {
        let params = params
            .iter()
            .map(|p| Param {
                name: Name::new(*p),
                ty: None,
                span: Span::GENERATED,
            })
            .collect();
        self.add(Expr::Lambda { params, body })
    }

    /// `fun (x, y) -> x op y`, made of fresh nodes.
    pub fn op_lam(&mut self, op: Prim) -> ExprId {
        let x = self.var("sec_x");
        let y = self.var("sec_y");
        let body = self.prim(op, &[x, y]);
        self.lam(&["sec_x", "sec_y"], body)
    }

    pub fn app(&mut self, func: ExprId, args: &[ExprId]) -> ExprId {
        self.add(Expr::App {
            func,
            args: args.to_vec(),
        })
    }

    pub fn let_(&mut self, name: &str, value: ExprId, body: ExprId) -> ExprId {
        self.add(Expr::Let {
            pat: Pat::Var(Name::new(name)),
            ty: None,
            value,
            body,
        })
    }

    pub fn let_tuple(&mut self, names: &[&str], value: ExprId, body: ExprId) -> ExprId {
        self.add(Expr::Let {
            pat: Pat::Tuple(names.iter().map(|n| Name::new(*n)).collect()),
            ty: None,
            value,
            body,
        })
    }

    pub fn tuple(&mut self, items: &[ExprId]) -> ExprId {
        self.add(Expr::Tuple(items.to_vec()))
    }

    pub fn proj(&mut self, tuple: ExprId, index: u32) -> ExprId {
        self.add(Expr::Proj { tuple, index })
    }

    pub fn if_(&mut self, cond: ExprId, then_branch: ExprId, else_branch: ExprId) -> ExprId {
        self.add(Expr::If {
            cond,
            then_branch,
            else_branch,
        })
    }

    pub fn array(&mut self, items: &[ExprId]) -> ExprId {
        self.add(Expr::Array(items.to_vec()))
    }

    pub fn index(&mut self, array: ExprId, index: ExprId) -> ExprId {
        self.add(Expr::Index { array, index })
    }

    /// Adds `def name (params) : ret = body` and returns its position.
    pub fn def(
        &mut self,
        name: &str,
        params: &[(&str, Ty)],
        ret: Option<Ty>,
        body: ExprId,
    ) -> usize {
        let params = params
            .iter()
            .enumerate()
            .map(|(i, (n, ty))| Param {
                name: Name::new(*n),
                ty: Some(ty.clone()),
                span: Span::new(1000 + i, 1001 + i),
            })
            .collect();
        self.m.defs.push(Def {
            name: Name::new(name),
            name_span: Span::new(900, 901),
            params,
            ret,
            body,
        });
        self.m.defs.len() - 1
    }

    /// Evaluates `body` as the body of a definition without parameters.
    pub fn run(&mut self, body: ExprId) -> Result<semantics::Value, semantics::Error> {
        let i = self.def("main", &[], None, body);
        let def = self.m.defs[i].clone();
        semantics::eval_def(&self.m, &def, &[])
    }
}

pub fn arr(size: Size, elem: Ty) -> Ty {
    Ty::array(size, elem)
}

pub fn n() -> Size {
    Size::Var(Name::new("n"), 0)
}

/// `[n]R`.
pub fn reals_n() -> Ty {
    arr(n(), Ty::Real)
}
