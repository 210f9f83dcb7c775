//! Helpers shared by the syntax tests: parsing and compiling a text, a
//! structural comparison of modules that ignores spans, and an S-expression
//! dump that is an oracle independent of the printer.

#![allow(dead_code)]

use syntax::{Expr, ExprId, Module, Pat, SourceFile, Span};

/// `text` as a file named `test.ad`.
pub fn file(text: &str) -> SourceFile {
    SourceFile {
        name: "test.ad".into(),
        text: text.into(),
    }
}

/// The text `span` covers in `text`.
pub fn at(text: &str, span: Span) -> String {
    text.get(span.lo as usize..span.hi as usize)
        .unwrap_or("<no text>")
        .to_string()
}

/// Parses `text` as a file named `test.ad`.
pub fn parse(text: &str) -> Result<Module, syntax::Error> {
    syntax::parse(file(text))
}

/// Parses `text`, failing the test with the error if it does not parse.
pub fn parse_ok(text: &str) -> Module {
    match parse(text) {
        Ok(m) => m,
        Err(e) => panic!("{text:?} does not parse: {e:?}"),
    }
}

pub use testkit::same_module;

/// Compiles `text` as a file named `test.ad`.
pub fn compile(text: &str) -> Result<Module, syntax::Error> {
    syntax::compile(file(text))
}

/// Compiles `text` (a file named `test.ad`) to core form, failing the test
/// unless it compiles and verifies.
pub fn ok(text: &str) -> Module {
    let m = compile(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    if let Err(es) = syntax::verify(&m) {
        panic!("{text:?}: the output does not verify: {es:?}");
    }
    m
}

/// The core form of `text`, printed, against `want`.
pub fn check(text: &str, want: expect_test::Expect) {
    want.assert_eq(&syntax::print::module(&ok(text)));
}

/// The text a compile error of `text` points at, and its message.
pub fn compile_err(text: &str) -> (String, String) {
    match compile(text) {
        Ok(m) => panic!("{text:?} compiles, to\n{}", syntax::print::module(&m)),
        Err(e) => (at(text, e.span()), e.to_string()),
    }
}

/// An S-expression of the tree at `id`: `(+ a (* b c))`, `(app f x y)`,
/// `(let x 1 x)`, `(fun (x:R y) body)`.
pub fn sexp(m: &Module, id: ExprId) -> String {
    let kids = |ids: &[ExprId]| {
        ids.iter()
            .map(|&c| sexp(m, c))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match m.expr(id) {
        Expr::Var(n) => n.to_string(),
        Expr::Real(x) => format!("{x:?}r"),
        Expr::Reals(lit) => format!("(reals {:?} {:?})", lit.shape, lit.data),
        Expr::Int(n) => format!("{n}i"),
        Expr::Bool(b) => b.to_string(),
        Expr::Let {
            pat,
            ty,
            value,
            body,
        } => {
            let pat = match pat {
                Pat::Var(n) => n.to_string(),
                Pat::Tuple(ns) => format!(
                    "<{}>",
                    ns.iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            };
            let ty = ty.as_ref().map(|t| format!(":{t}")).unwrap_or_default();
            format!("(let {pat}{ty} {} {})", sexp(m, *value), sexp(m, *body))
        }
        Expr::Tuple(items) => format!("(tuple {})", kids(items)).replace(" )", ")"),
        Expr::Array(items) => format!("(array {})", kids(items)).replace(" )", ")"),
        Expr::Proj { tuple, index } => format!("(proj {} {index})", sexp(m, *tuple)),
        Expr::If {
            cond,
            then_branch,
            else_branch,
        } => format!(
            "(if {} {} {})",
            sexp(m, *cond),
            sexp(m, *then_branch),
            sexp(m, *else_branch)
        ),
        Expr::Lambda { params, body } => {
            let ps = params
                .iter()
                .map(|p| match &p.ty {
                    Some(t) => format!("{}:{t}", p.name),
                    None => p.name.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ");
            format!("(fun ({ps}) {})", sexp(m, *body))
        }
        Expr::App { func, args } => format!("(app {} {})", sexp(m, *func), kids(args)),
        Expr::Prim { op, args } => {
            let op = if *op == syntax::Prim::Neg {
                "neg"
            } else {
                op.symbol()
            };
            format!("({op} {})", kids(args))
        }
        Expr::Section(op) => format!("(section {})", op.symbol()),
        Expr::Index { array, index } => format!("(index {} {})", sexp(m, *array), sexp(m, *index)),
    }
}

/// The S-expression of the body of the last definition of `text`.
pub fn body(text: &str) -> String {
    let m = parse_ok(text);
    let def = m.defs.last().expect("a parsed module has a definition");
    sexp(&m, def.body)
}

/// The S-expression of the expression `e` (parsed as `def t = e`).
pub fn e(text: &str) -> String {
    body(&format!("def t = {text}"))
}

/// The syntax error of `text`: its message and the text its span covers.
pub fn err(text: &str) -> (String, String) {
    match parse(text) {
        Ok(m) => panic!("{text:?} parsed: {:?}", m.defs),
        Err(syntax::Error::Syntax { span, message }) => (
            message,
            text[span.lo as usize..span.hi as usize].to_string(),
        ),
        Err(other) => panic!("{text:?}: expected a syntax error, got {other:?}"),
    }
}
