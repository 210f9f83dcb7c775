//! The exported functions: their C signatures, their bodies' prologue
//! (parameters to values, size checks) and epilogue (results to output
//! parameters), the header, and the error strings for C callers.
//!
//! The calling convention (docs/codegen.md, "Calling a generated
//! function"): for a definition `f`, the symbol `adrev_f` takes the call
//! context, then for each parameter its dims (`int64_t`) and leaves (a
//! scalar by value, or a `const T *` buffer), then for the result a
//! pointer to each dim and leaf. Result buffers live in the context's
//! arena until its next call. It returns 0, or the number of the failure
//! site (and `adrev_error` says what failed).

use std::collections::BTreeMap;

use syntax::{Def, Module, Name, Size, Span, Ty};

use crate::Config;
use crate::error::Error;
use crate::imp::{self, BinOp, Expr as E, Place, Scalar, Stmt, VarId};
use crate::layout::{Kind, Layout};
use crate::lower::{Lowerer, Site, SiteKind};
use crate::val::{Arr, Env, Leaves, Manifest, Val};
use crate::writer::c_ident;

/// One exported function of a generated program.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The definition's name in the program.
    pub name: String,
    /// The C symbol (`adrev_` and the name made an identifier).
    pub symbol: String,
    /// The symbol of its wrapper with the uniform signature
    /// ([`CALL_SIGNATURE`]): `adrev_call_` and the same identifier.
    pub call_symbol: String,
    /// Where the definition's name is written.
    pub span: Span,
    /// Its parameters.
    pub params: Vec<EntryParam>,
    /// The result type.
    pub ret: Ty,
    /// The result's layout.
    pub ret_layout: Layout,
    /// The span of the definition's body (where a result of the wrong
    /// size is reported).
    pub body_span: Span,
}

/// A parameter of an exported function.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryParam {
    /// Its name in the program.
    pub name: String,
    /// Its type.
    pub ty: Ty,
    /// Its layout: the dims and leaves passed for it.
    pub layout: Layout,
    /// Where it is written.
    pub span: Span,
}

impl Entry {
    /// The C prototype (without the trailing `;`).
    pub fn prototype(&self) -> String {
        let mut args = vec!["ad_ctx *ctx".to_string()];
        for (k, p) in self.params.iter().enumerate() {
            for d in 0..p.layout.dims {
                args.push(format!("int64_t p{k}_d{d}"));
            }
            for (l, leaf) in p.layout.leaves.iter().enumerate() {
                let t = leaf.kind.c_type();
                if leaf.under.is_empty() {
                    args.push(format!("{t} p{k}_l{l}"));
                } else {
                    args.push(format!("const {t} *p{k}_l{l}"));
                }
            }
        }
        for d in 0..self.ret_layout.dims {
            args.push(format!("int64_t *out_d{d}"));
        }
        for (l, leaf) in self.ret_layout.leaves.iter().enumerate() {
            let t = leaf.kind.c_type();
            if leaf.under.is_empty() {
                args.push(format!("{t} *out_l{l}"));
            } else {
                args.push(format!("const {t} **out_l{l}"));
            }
        }
        format!("int {}({})", self.symbol, args.join(", "))
    }

    /// The prototype of the uniform wrapper (without the trailing `;`).
    pub fn call_prototype(&self) -> String {
        CALL_SIGNATURE.replacen("int (", &format!("int {}(", self.call_symbol), 1)
    }

    /// The uniform wrapper: unpacks the dims and leaf pointers and calls
    /// the entry's own function.
    pub(crate) fn call_wrapper(&self) -> String {
        let mut args = vec!["ctx".to_string()];
        let (mut d, mut l) = (0, 0);
        for p in &self.params {
            for _ in 0..p.layout.dims {
                args.push(format!("in_dims[{d}]"));
                d += 1;
            }
            for leaf in &p.layout.leaves {
                let t = leaf.kind.c_type();
                if leaf.under.is_empty() {
                    args.push(format!("*(const {t} *)in_leaves[{l}]"));
                } else {
                    args.push(format!("(const {t} *)in_leaves[{l}]"));
                }
                l += 1;
            }
        }
        for d in 0..self.ret_layout.dims {
            args.push(format!("&out_dims[{d}]"));
        }
        for (l, leaf) in self.ret_layout.leaves.iter().enumerate() {
            let t = leaf.kind.c_type();
            if leaf.under.is_empty() {
                args.push(format!("({t} *)out_leaves[{l}]"));
            } else {
                args.push(format!("(const {t} **)out_leaves[{l}]"));
            }
        }
        let unused = [
            (d == 0, "in_dims"),
            (l == 0, "in_leaves"),
            (self.ret_layout.dims == 0, "out_dims"),
            (self.ret_layout.leaves.is_empty(), "out_leaves"),
        ]
        .iter()
        .filter(|(u, _)| *u)
        .map(|(_, n)| format!("    (void){n};\n"))
        .collect::<String>();
        format!(
            "{} {{\n{unused}    return {}({});\n}}\n",
            self.call_prototype(),
            self.symbol,
            args.join(", ")
        )
    }

    /// A comment describing the arguments, for the header.
    pub fn describe(&self) -> String {
        let mut out = format!(
            "/* {}: {}",
            self.name,
            self.params
                .iter()
                .map(|p| format!("({} : {})", p.name, syntax::print::ty(&p.ty)))
                .collect::<Vec<_>>()
                .join(" ")
        );
        out.push_str(&format!(" -> {}\n", syntax::print::ty(&self.ret)));
        for (k, p) in self.params.iter().enumerate() {
            out.push_str(&format!(
                " *   `{}`: p{k}_d* are its array lengths, p{k}_l* its scalars / buffers (row-major)\n",
                p.name
            ));
        }
        out.push_str(" *   result: *out_d* its array lengths, *out_l* its scalars / buffers (valid until the next call) */");
        out
    }
}

/// The uniform signature of every entry's wrapper, `adrev_call_<name>`:
/// the context, all parameters' dims in order (`layout.rs`), a pointer to
/// each parameter leaf's scalars (one scalar, or the buffer), the result's
/// dims to fill, and for each result leaf a pointer to where its scalar,
/// or the address of its buffer, is stored. Rust calls every entry through
/// this one type (`library.rs`), so no signature is derived at run time.
pub const CALL_SIGNATURE: &str = "int (ad_ctx *ctx, const int64_t *in_dims, const void *const *in_leaves, int64_t *out_dims, void *const *out_leaves)";

/// The C symbols for the definitions and their uniform wrappers: `adrev_`
/// and `adrev_call_` plus the name as an identifier, made unique together
/// (a definition named `call_f` must not take the wrapper's name of `f`).
pub(crate) fn symbols(m: &Module) -> Vec<(String, String)> {
    const RESERVED: [&str; 4] = ["ctx_new", "ctx_free", "error", "error_info"];
    let mut seen = std::collections::HashSet::new();
    m.defs
        .iter()
        .map(|d| {
            let base = c_ident(d.name.as_str());
            let mut s = base.clone();
            let mut k = 1;
            while RESERVED.contains(&s.as_str())
                || seen.contains(&format!("adrev_{s}"))
                || seen.contains(&format!("adrev_call_{s}"))
            {
                k += 1;
                s = format!("{base}_{k}");
            }
            let (sym, call) = (format!("adrev_{s}"), format!("adrev_call_{s}"));
            seen.insert(sym.clone());
            seen.insert(call.clone());
            (sym, call)
        })
        .collect()
}

/// The parameters of an exported function as loop-IR variables: per
/// definition parameter its dims and leaves, then the result's.
struct Params {
    ins: Vec<(Vec<VarId>, Vec<VarId>)>,
    out_dims: Vec<VarId>,
    out_leaves: Vec<VarId>,
}

/// Declares the parameters of `entry` in the order of its prototype.
fn declare_params(cx: &mut Lowerer<'_>, entry: &Entry) -> Params {
    let i64 = imp::Ty::Scalar(Scalar::I64);
    let leaf_ty = |leaf: &crate::layout::Leaf| {
        if leaf.under.is_empty() {
            imp::Ty::Scalar(leaf.kind.scalar())
        } else {
            crate::lower::mem(leaf.kind, false)
        }
    };
    let mut ins = Vec::new();
    for (k, p) in entry.params.iter().enumerate() {
        let dims = (0..p.layout.dims)
            .map(|d| cx.w.param(format!("p{k}_d{d}"), i64.clone()))
            .collect();
        let leaves = p
            .layout
            .leaves
            .iter()
            .enumerate()
            .map(|(l, leaf)| cx.w.param(format!("p{k}_l{l}"), leaf_ty(leaf)))
            .collect();
        ins.push((dims, leaves));
    }
    let out = |t: imp::Ty| imp::Ty::Out(Box::new(t));
    let out_dims = (0..entry.ret_layout.dims)
        .map(|d| cx.w.param(format!("out_d{d}"), out(i64.clone())))
        .collect();
    let out_leaves = entry
        .ret_layout
        .leaves
        .iter()
        .enumerate()
        .map(|(l, leaf)| cx.w.param(format!("out_l{l}"), out(leaf_ty(leaf))))
        .collect();
    Params {
        ins,
        out_dims,
        out_leaves,
    }
}

/// Compiles one definition to an exported function in the loop IR.
pub(crate) fn emit_def(
    m: &Module,
    def: &Def,
    (symbol, call_symbol): &(String, String),
    cfg: &Config,
    prog: &mut imp::Program,
    sites: &mut Vec<Site>,
) -> Result<(Entry, imp::Func), Error> {
    let mut params = Vec::new();
    for p in &def.params {
        let ty = p
            .ty
            .clone()
            .ok_or_else(|| Error::core(p.span, format!("parameter `{}` has no type", p.name)))?;
        let layout = Layout::of(&ty, p.span, "a parameter")?;
        params.push(EntryParam {
            name: p.name.to_string(),
            ty,
            layout,
            span: p.span,
        });
    }
    let ret = match &def.ret {
        Some(t) => t.clone(),
        None => m.ty(def.body).cloned().ok_or_else(|| {
            Error::core(def.name_span, format!("`{}` has no result type", def.name))
        })?,
    };
    let ret_layout = Layout::of(&ret, def.name_span, "a result")?;
    let entry = Entry {
        name: def.name.to_string(),
        symbol: symbol.to_string(),
        call_symbol: call_symbol.to_string(),
        span: def.name_span,
        params,
        ret,
        ret_layout,
        body_span: m.span(def.body),
    };

    let mut cx = Lowerer::new(m, def, cfg, prog, sites);
    let vars = declare_params(&mut cx, &entry);
    let mut env = Env::new();
    let mut sizes: BTreeMap<Name, (E, i64)> = BTreeMap::new();
    for (k, p) in entry.params.iter().enumerate() {
        let mut at = (0, 0);
        let v = param_val(
            &mut cx,
            &p.ty,
            &vars.ins[k],
            &mut at,
            &p.name,
            p.span,
            &mut sizes,
        );
        env = env.insert(Name::new(p.name.clone()), v);
    }
    let res = cx.expr(def.body, &env)?;
    let res = cx.materialize_val(res)?;
    let res = own(&mut cx, res, &entry.ret, def.name_span)?;
    let mut at = (0, 0);
    write_outputs(&mut cx, &res, &vars, &mut at);
    let f = std::mem::take(&mut cx.w).finish(entry.symbol.clone());
    Ok((entry, f))
}

/// The dims and leaves of one parameter.
type ParamVars = (Vec<VarId>, Vec<VarId>);

/// The next dim (`at.0`) or leaf (`at.1`) of a parameter.
fn next(vars: &[VarId], at: &mut usize) -> E {
    let v = vars.get(*at).copied().unwrap_or(VarId(0));
    *at += 1;
    E::Var(v)
}

/// The value of a parameter of type `ty`, reading dims and leaves from
/// `at` on; checks the array sizes against the type.
#[allow(clippy::too_many_arguments)]
fn param_val(
    cx: &mut Lowerer<'_>,
    ty: &Ty,
    vars: &ParamVars,
    at: &mut (usize, usize),
    name: &str,
    span: Span,
    sizes: &mut BTreeMap<Name, (E, i64)>,
) -> Val {
    match ty {
        Ty::Tuple(items) => Val::Tuple(
            items
                .iter()
                .map(|t| param_val(cx, t, vars, at, name, span, sizes))
                .collect::<Vec<_>>()
                .into(),
        ),
        Ty::Array(size, elem) => {
            let len = next(&vars.0, &mut at.0);
            let len = check_size(cx, size, &len, name, span, sizes);
            let elem = param_leaves(cx, elem, vars, at, name, span, sizes);
            Val::Array(Arr::Manifest(Manifest {
                len,
                elem,
                owned: false,
            }))
        }
        _ => {
            let kind = Kind::of(ty).unwrap_or(Kind::Real);
            Val::Scalar(kind, next(&vars.1, &mut at.1))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn param_leaves(
    cx: &mut Lowerer<'_>,
    ty: &Ty,
    vars: &ParamVars,
    at: &mut (usize, usize),
    name: &str,
    span: Span,
    sizes: &mut BTreeMap<Name, (E, i64)>,
) -> Leaves {
    match ty {
        Ty::Tuple(items) => Leaves::Tuple(
            items
                .iter()
                .map(|t| param_leaves(cx, t, vars, at, name, span, sizes))
                .collect(),
        ),
        Ty::Array(size, elem) => {
            let len = next(&vars.0, &mut at.0);
            let len = check_size(cx, size, &len, name, span, sizes);
            Leaves::Array {
                len,
                elem: Box::new(param_leaves(cx, elem, vars, at, name, span, sizes)),
            }
        }
        _ => {
            let kind = Kind::of(ty).unwrap_or(Kind::Real);
            Leaves::Scalar {
                kind,
                ptr: next(&vars.1, &mut at.1),
            }
        }
    }
}

/// Checks an input length against the size in its type (for C callers;
/// `run` has checked the inputs already, with the evaluator's messages).
/// Returns the expression to use for the length from then on: lengths
/// that the type says are equal become the same variable, so that the
/// loops over them fuse and their equality is not checked again.
fn check_size(
    cx: &mut Lowerer<'_>,
    size: &Size,
    len: &E,
    name: &str,
    span: Span,
    sizes: &mut BTreeMap<Name, (E, i64)>,
) -> E {
    let kind = SiteKind::InputSize {
        param: name.to_string(),
    };
    let (b, l) = (E::bin, len.clone());
    match size {
        Size::Dyn => cx.fail_if(b(BinOp::Lt, l.clone(), E::I64(0)), span, kind, l, E::I64(0)),
        Size::Lit(n) => {
            // No length reaches a literal beyond `Int`.
            let n = E::I64(i64::try_from(*n).unwrap_or(i64::MAX));
            cx.fail_if(b(BinOp::Ne, l.clone(), n.clone()), span, kind, l, n)
        }
        Size::Var(v, off) => match sizes.get(v) {
            Some((first, off0)) => {
                let want = match off - off0 {
                    0 => first.clone(),
                    d if d > 0 => b(BinOp::Add, first.clone(), E::I64(d)),
                    d => b(BinOp::Sub, first.clone(), E::I64(-d)),
                };
                cx.fail_if(b(BinOp::Ne, l.clone(), want.clone()), span, kind, l, want);
                if off == off0 {
                    return first.clone();
                }
            }
            None => {
                let cond = if *off > 0 {
                    b(BinOp::Lt, b(BinOp::Sub, l.clone(), E::I64(*off)), E::I64(0))
                } else {
                    b(BinOp::Lt, l.clone(), E::I64(0))
                };
                cx.fail_if(cond, span, kind, l.clone(), E::I64(0));
                sizes.insert(v.clone(), (l, *off));
            }
        },
    }
    len.clone()
}

/// Copies every array of a result that is a view of an input into the
/// arena, so that results never alias the caller's buffers.
fn own(cx: &mut Lowerer<'_>, v: Val, ty: &Ty, span: Span) -> Result<Val, Error> {
    match (v, ty) {
        (Val::Tuple(items), Ty::Tuple(tys)) => Ok(Val::Tuple(
            items
                .iter()
                .zip(tys)
                .map(|(v, t)| own(cx, v.clone(), t, span))
                .collect::<Result<Vec<_>, _>>()?
                .into(),
        )),
        (Val::Array(Arr::Manifest(m)), Ty::Array(_, elem)) if !m.owned => {
            let v = Val::Array(Arr::Manifest(m.clone()));
            let mut dims = Vec::new();
            crate::arrays::dims_of(&v, &mut dims);
            let copy = cx.copy_array(&m, elem, &dims[1..], span)?;
            Ok(Val::Array(Arr::Manifest(copy)))
        }
        (v, _) => Ok(v),
    }
}

/// Stores a (materialized) result into the output parameters.
fn write_outputs(cx: &mut Lowerer<'_>, v: &Val, vars: &Params, at: &mut (usize, usize)) {
    let out = |cx: &mut Lowerer<'_>, outs: &[VarId], k: &mut usize, value: E| {
        if let Some(o) = outs.get(*k) {
            cx.w.push(Stmt::Set {
                place: Place::Out(*o),
                value,
            });
        }
        *k += 1;
    };
    match v {
        Val::Scalar(_, c) => out(cx, &vars.out_leaves, &mut at.1, c.clone()),
        Val::Tuple(items) => items.iter().for_each(|v| write_outputs(cx, v, vars, at)),
        Val::Array(Arr::Manifest(m)) => {
            out(cx, &vars.out_dims, &mut at.0, m.len.clone());
            let mut dims = Vec::new();
            m.elem.dims(&mut dims);
            for d in dims {
                out(cx, &vars.out_dims, &mut at.0, d);
            }
            let mut ptrs = Vec::new();
            m.elem.ptrs(&mut ptrs);
            for (_, p) in ptrs {
                out(cx, &vars.out_leaves, &mut at.1, p);
            }
        }
        // Materialized before, and functions are refused by the layout.
        Val::Array(Arr::Delayed(_)) | Val::Func(_) => {}
    }
}

/// What a failure site means, as a C format string taking the two
/// details as `long long` (`%lld`), prefixed with `line:column`.
pub(crate) fn site_text(m: &Module, site: &Site) -> String {
    let what = match &site.kind {
        SiteKind::Index => "index %lld out of bounds for an array of %lld".to_string(),
        SiteKind::Overflow(op) => format!("integer overflow in `{op}`"),
        SiteKind::DivisionByZero(op) => format!("division by zero in `{op}`"),
        SiteKind::NotAnInt(op) => format!(
            "`{op}` of a real with no Int value (NaN, infinite, or beyond the range of Int)"
        ),
        SiteKind::SizeMismatch(op) => format!("{op} over arrays of sizes %lld and %lld"),
        SiteKind::NegativeCount(op) => format!("`{op}` with a negative count %lld"),
        SiteKind::Alloc(_) => "cannot allocate an array of %lld elements".to_string(),
        SiteKind::Ragged => "rows of different lengths (%lld and %lld)".to_string(),
        SiteKind::AccumulatorSize(op) => {
            format!("the accumulator of `{op}` changed length from %lld to %lld")
        }
        SiteKind::InputSize { param } => {
            format!("input `{param}`: an array length (%lld) that does not fit its type")
        }
    };
    let at = if site.span.is_generated() {
        String::new()
    } else {
        let (line, col) = line_col(&m.file.text, site.span.lo as usize);
        format!("{}:{line}:{col}: ", m.file.name)
    };
    c_string(&format!("{at}{what}"))
}

/// The 1-based line and column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// A C string literal (escaping quotes, backslashes, control characters,
/// and `%` except in `%lld`).
pub(crate) fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    let mut rest = s;
    while let Some(ch) = rest.chars().next() {
        if rest.starts_with("%lld") {
            out.push_str("%lld");
            rest = &rest[4..];
            continue;
        }
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '%' => out.push_str("%%"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\{:03o}", c as u32))
            }
            c if !c.is_ascii() => out.push('?'),
            c => out.push(c),
        }
        rest = &rest[ch.len_utf8()..];
    }
    out.push('"');
    out
}
