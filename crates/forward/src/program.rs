//! Whole-program derivatives of an entry definition: the Target modules
//! behind the CLI's `jvp`, `grad --via forward`, `jacobian` and `hessian`
//! (calling conventions in lib.rs and docs/forward.md).
//!
//! Each builder expands the module's derivative constructs, then builds one
//! new definition over the entry's body and parameters and returns a module
//! holding only it (compacted, binders unique, every node typed).

use syntax::{Def, Expr, ExprId, Module, Name, Param, Pat, Ty};

use crate::build::{Atom, Builder, Res, show_ty};
use crate::dual::{Macro, Rep, Scope};
use crate::expand::{expand_module, used_names, zeros_of};
use crate::shape::{self, let_atom};
use crate::{Config, Error, Mode};

/// The entry after expansion, its parameter types and its result type.
struct Entry {
    cx: Builder,
    def: Def,
    tys: Vec<Ty>,
    ret: Ty,
}

fn prepare(m: &Module, entry: &Def, cfg: &Config) -> Res<Entry> {
    let expanded = expand_module(m, cfg, None)?;
    let def = expanded
        .def(entry.name.as_str())
        .cloned()
        .ok_or_else(|| Error::NotFound {
            span: entry.name_span,
            message: format!("no definition `{}` in the module", entry.name),
        })?;
    if !expanded.is_typed() {
        return Err(Error::NotCore {
            span: def.name_span,
            message: "the module has no types".to_string(),
        });
    }
    let mut tys = Vec::with_capacity(def.params.len());
    for p in &def.params {
        let ty = p.ty.clone().ok_or_else(|| Error::NotCore {
            span: p.span,
            message: format!("parameter `{}` has no type", p.name),
        })?;
        if !ty.is_ground() {
            return Err(Error::UnsupportedType {
                span: p.span,
                what: format!("parameter `{}` of an entry point", p.name),
                ty: show_ty(&ty),
            });
        }
        tys.push(ty);
    }
    let ret = expanded
        .ty(def.body)
        .cloned()
        .ok_or_else(|| Error::NotCore {
            span: def.name_span,
            message: "the body has no type".to_string(),
        })?;
    if !ret.is_ground() {
        return Err(Error::UnsupportedType {
            span: def.name_span,
            what: format!("the result of `{}`", def.name),
            ty: show_ty(&ret),
        });
    }
    let mut cx = Builder::over(expanded);
    cx.span = def.name_span;
    Ok(Entry { cx, def, tys, ret })
}

/// The indices of the parameters named in `wrt` (all when `None`).
fn wrt_indices(def: &Def, wrt: Option<&[String]>) -> Res<Vec<usize>> {
    let Some(names) = wrt else {
        return Ok((0..def.params.len()).collect());
    };
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        let i = def
            .params
            .iter()
            .position(|p| p.name.as_str() == n)
            .ok_or_else(|| Error::NotFound {
                span: def.name_span,
                message: format!("`{}` has no parameter `{n}`", def.name),
            })?;
        out.push(i);
    }
    Ok(out)
}

/// The module holding the one new definition.
fn finish(cx: Builder, name: String, like: &Def, params: Vec<Param>, body: ExprId) -> Res<Module> {
    let ret = cx.ty(body)?;
    let mut m = cx.out;
    m.defs = vec![Def {
        name: Name::new(name),
        name_span: like.name_span,
        params,
        ret: Some(ret),
        body,
    }];
    m.compact();
    retype(&mut m)?;
    Ok(m)
}

/// Recomputes every type with the front end's inference, so that the
/// output's types are exactly the ones `syntax::verify` expects (sizes the
/// builder left unknown are related again, `Int` literals of type `R`
/// normalised).
pub(crate) fn retype(m: &mut Module) -> Res<()> {
    syntax::infer(m).map_err(|e| Error::Internal {
        span: e.span(),
        message: format!("the transformed program does not type-check: {e}"),
    })
}

/// The entry as a lambda `fun (x1, ..., xn) -> body`, a node outside the
/// output tree that only the macro reads.
fn entry_lambda(e: &mut Entry) -> ExprId {
    let ty = Ty::Func(e.tys.clone(), Box::new(e.ret.clone()));
    e.cx.add(
        Expr::Lambda {
            params: e.def.params.clone(),
            body: e.def.body,
        },
        ty,
    )
}

/// `D (fun (x1, ..., xn) -> body)` bound to a variable (one direction), and
/// every parameter lifted to a dual with zero tangent, bound once.
fn dual_entry(
    e: &mut Entry,
    cfg: &Config,
    binds: &mut Vec<(Pat, ExprId)>,
) -> Res<(Atom, Vec<Atom>)> {
    let lam = entry_lambda(e);
    let scope = Scope::new();
    let mut mac = Macro::new(
        &mut e.cx,
        Rep::Scalar,
        &scope,
        cfg.mutant_first_summand_only,
    );
    let fd = mac.apply(lam)?;
    binds.extend(mac.take_pending());
    let fd = let_atom(&mut e.cx, binds, "f_d", fd)?;
    let mut lifted = Vec::with_capacity(e.tys.len());
    for (p, ty) in e.def.params.iter().zip(&e.tys) {
        let v = e.cx.var(&p.name, ty.clone());
        let l = shape::lift(&mut e.cx, &Rep::Scalar, ty, v)?;
        lifted.push(let_atom(&mut e.cx, binds, p.name.as_str(), l)?);
    }
    Ok((fd, lifted))
}

/// `f_d` applied to the lifted parameters, parameter `j` replaced by `d`.
fn pass(cx: &mut Builder, fd: &Atom, lifted: &[Atom], j: usize, d: ExprId) -> Res<ExprId> {
    let args = lifted
        .iter()
        .enumerate()
        .map(|(i, a)| if i == j { d } else { cx.emit(a) })
        .collect();
    let f = cx.emit(fd);
    cx.app(f, args)
}

/// What [`vector_setup`] binds.
struct VectorSetup {
    /// The offset of each `wrt` parameter's first real.
    offsets: Vec<Atom>,
    /// The vectorised representation (with the shared zeros).
    rep: Rep,
    /// Each parameter's index and the name of its dual.
    duals: Vec<(usize, Name)>,
}

/// The vectorised setup: counts and offsets of the `wrt` parameters, the
/// shared zero tangent, and the macro's environment (seeded duals for the
/// `wrt` parameters, lifted ones for the others). Returns the offsets and
/// the representation.
fn vector_setup(e: &mut Entry, wrt: &[usize], binds: &mut Vec<(Pat, ExprId)>) -> Res<VectorSetup> {
    let mut offsets = Vec::with_capacity(wrt.len());
    let mut at = Atom::Int(0);
    for &j in wrt {
        offsets.push(at.clone());
        let x = Atom::Var(e.def.params[j].name.clone(), e.tys[j].clone());
        let c = shape::count(&mut e.cx, &e.tys[j], &x)?;
        let here = e.cx.emit(&at);
        let next = e.cx.add_i(here, c);
        at = let_atom(&mut e.cx, binds, "o", next)?;
    }
    let zeros = zeros_of(&mut e.cx, &at, binds)?;
    let rep = Rep::Vector {
        zeros: zeros.clone(),
    };
    let mut duals = Vec::with_capacity(e.tys.len());
    for (i, (p, ty)) in e.def.params.iter().zip(&e.tys).enumerate() {
        let x = Atom::Var(p.name.clone(), ty.clone());
        let d = match wrt.iter().position(|&j| j == i) {
            Some(w) => shape::seed(&mut e.cx, ty, &x, &offsets[w], &zeros)?,
            None => {
                let v = e.cx.emit(&x);
                shape::lift(&mut e.cx, &rep, ty, v)?
            }
        };
        let name = e.cx.fresh(p.name.as_str());
        binds.push((Pat::Var(name.clone()), d));
        duals.push((i, name));
    }
    Ok(VectorSetup {
        offsets,
        rep,
        duals,
    })
}

/// `D body` under the vectorised representation, with the parameters'
/// duals from [`vector_setup`].
fn vector_body(e: &mut Entry, rep: Rep, duals: &[(usize, Name)], cfg: &Config) -> Res<ExprId> {
    let scope = Scope::new();
    let body = e.def.body;
    let params: Vec<Name> = e.def.params.iter().map(|p| p.name.clone()).collect();
    let mut mac = Macro::new(&mut e.cx, rep, &scope, cfg.mutant_first_summand_only);
    for (i, name) in duals {
        mac.bind_var(params[*i].clone(), name.clone());
    }
    let r = mac.apply(body)?;
    let pending = mac.take_pending();
    e.cx.wrap(pending, r)
}

pub(crate) fn jvp(m: &Module, entry: &Def, cfg: &Config) -> Res<Module> {
    let mut e = prepare(m, entry, cfg)?;
    let used = used_names(&e.cx.out);
    let mut tangent_params = Vec::with_capacity(e.tys.len());
    let mut binds = Vec::new();
    let mut duals = Vec::new();
    for (p, ty) in e.def.params.iter().zip(&e.tys) {
        let wanted = format!("d{}", p.name);
        let dname = if used.contains(&wanted) {
            e.cx.fresh(&wanted)
        } else {
            e.cx.reserve(&wanted);
            Name::new(wanted)
        };
        tangent_params.push(Param {
            name: dname.clone(),
            ty: Some(ty.clone()),
            span: p.span,
        });
        let pv = e.cx.var(&p.name, ty.clone());
        let tv = e.cx.var(&dname, ty.clone());
        let z = shape::zip(&mut e.cx, ty, pv, tv)?;
        let name = e.cx.fresh(p.name.as_str());
        binds.push((Pat::Var(name.clone()), z));
        duals.push((p.name.clone(), name));
    }
    let scope = Scope::new();
    let body = e.def.body;
    let mut mac = Macro::new(
        &mut e.cx,
        Rep::Scalar,
        &scope,
        cfg.mutant_first_summand_only,
    );
    for (p, d) in duals {
        mac.bind_var(p, d);
    }
    let r = mac.apply(body)?;
    binds.extend(mac.take_pending());
    let ret = e.ret.clone();
    let out = e.cx.bind("r", r, |cx, ra| {
        let r1 = cx.emit(&ra);
        let value = shape::primal(cx, &Rep::Scalar, &ret, r1)?;
        let r2 = cx.emit(&ra);
        let tangent = shape::tangent(cx, &ret, r2)?;
        cx.tuple(vec![value, tangent])
    })?;
    let body = e.cx.wrap(binds, out)?;
    let mut params = e.def.params.clone();
    params.extend(tangent_params);
    let name = format!("{}_jvp", e.def.name);
    finish(e.cx, name, &e.def, params, body)
}

fn require_real_result(e: &Entry, what: &str) -> Res<()> {
    if e.ret != Ty::Real {
        return Err(Error::UnsupportedType {
            span: e.def.name_span,
            what: format!(
                "the result of `{}` (a {what} needs a real-valued entry)",
                e.def.name
            ),
            ty: show_ty(&e.ret),
        });
    }
    Ok(())
}

pub(crate) fn grad(m: &Module, entry: &Def, wrt: Option<&[String]>, cfg: &Config) -> Res<Module> {
    let mut e = prepare(m, entry, cfg)?;
    require_real_result(&e, "gradient")?;
    let wrt = wrt_indices(&e.def, wrt)?;
    let mut binds = Vec::new();
    let mut items = Vec::with_capacity(wrt.len() + 1);
    match cfg.mode {
        Mode::Passes => {
            let (fd, lifted) = dual_entry(&mut e, cfg, &mut binds)?;
            items.push(e.def.body);
            for &j in &wrt {
                let x = Atom::Var(e.def.params[j].name.clone(), e.tys[j].clone());
                let g = shape::assemble(&mut e.cx, &e.tys[j], &x, &mut |cx, d| {
                    let r = pass(cx, &fd, &lifted, j, d)?;
                    cx.proj(r, 2)
                })?;
                items.push(g);
            }
        }
        Mode::Vectorised => {
            let VectorSetup {
                offsets,
                rep,
                duals,
            } = vector_setup(&mut e, &wrt, &mut binds)?;
            let r = vector_body(&mut e, rep, &duals, cfg)?;
            let r = let_atom(&mut e.cx, &mut binds, "r", r)?;
            let rv = e.cx.emit(&r);
            let t = e.cx.proj(rv, 2)?;
            let t = let_atom(&mut e.cx, &mut binds, "t", t)?;
            let rv = e.cx.emit(&r);
            items.push(e.cx.proj(rv, 1)?);
            for (w, &j) in wrt.iter().enumerate() {
                let x = Atom::Var(e.def.params[j].name.clone(), e.tys[j].clone());
                items.push(shape::gather(&mut e.cx, &e.tys[j], &x, &t, &offsets[w])?);
            }
        }
    }
    let out = e.cx.tuple(items)?;
    let body = e.cx.wrap(binds, out)?;
    let params = e.def.params.clone();
    let name = format!("{}_grad", e.def.name);
    finish(e.cx, name, &e.def, params, body)
}

pub(crate) fn jacobian(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    cfg: &Config,
) -> Res<Module> {
    let mut e = prepare(m, entry, cfg)?;
    let wrt = wrt_indices(&e.def, wrt)?;
    let u = e.ret.clone();
    let mut binds = Vec::new();
    let mut items = Vec::with_capacity(wrt.len() + 1);
    match cfg.mode {
        Mode::Passes => {
            let (fd, lifted) = dual_entry(&mut e, cfg, &mut binds)?;
            let v = let_atom(&mut e.cx, &mut binds, "y", e.def.body)?;
            items.push(e.cx.emit(&v));
            for &j in &wrt {
                let x = Atom::Var(e.def.params[j].name.clone(), e.tys[j].clone());
                let cols = shape::assemble(&mut e.cx, &e.tys[j], &x, &mut |cx, d| {
                    let r = pass(cx, &fd, &lifted, j, d)?;
                    shape::tangent(cx, &u, r)
                })?;
                let cols = let_atom(&mut e.cx, &mut binds, "cols", cols)?;
                items.push(shape::transpose(
                    &mut e.cx,
                    &u,
                    &e.tys[j],
                    &v,
                    &cols,
                    &|_, x| Ok(x),
                )?);
            }
        }
        Mode::Vectorised => {
            let VectorSetup {
                offsets,
                rep,
                duals,
            } = vector_setup(&mut e, &wrt, &mut binds)?;
            let r = vector_body(&mut e, rep.clone(), &duals, cfg)?;
            let r = let_atom(&mut e.cx, &mut binds, "r", r)?;
            let rv = e.cx.emit(&r);
            items.push(shape::primal(&mut e.cx, &rep, &u, rv)?);
            for (w, &j) in wrt.iter().enumerate() {
                let x = Atom::Var(e.def.params[j].name.clone(), e.tys[j].clone());
                let ty = e.tys[j].clone();
                let off = offsets[w].clone();
                let rv = e.cx.emit(&r);
                items.push(shape::rebuild(&mut e.cx, &u, rv, &|cx, leaf| {
                    let tan = cx.proj(leaf, 2)?;
                    cx.bind("t", tan, |cx, t| shape::gather(cx, &ty, &x, &t, &off))
                })?);
            }
        }
    }
    let out = e.cx.tuple(items)?;
    let body = e.cx.wrap(binds, out)?;
    let params = e.def.params.clone();
    let name = format!("{}_jacobian", e.def.name);
    finish(e.cx, name, &e.def, params, body)
}

pub(crate) fn hessian(
    m: &Module,
    entry: &Def,
    wrt: Option<&[String]>,
    cfg: &Config,
) -> Res<Module> {
    let g = grad(m, entry, wrt, cfg)?;
    let gdef = g.defs[0].clone();
    let mut e = prepare(
        &g,
        &gdef,
        &Config {
            mode: Mode::Passes,
            ..cfg.clone()
        },
    )?;
    let wrt = wrt_indices(&e.def, wrt)?;
    let name = format!("{}_hessian", entry.name);
    if wrt.is_empty() {
        let params = e.def.params.clone();
        let body = e.def.body;
        return finish(e.cx, name, &e.def, params, body);
    }
    let gty = e.ret.clone();
    let mut binds = Vec::new();
    let (fd, lifted) = dual_entry(&mut e, cfg, &mut binds)?;
    let vg = let_atom(&mut e.cx, &mut binds, "g", e.def.body)?;
    let mut items = Vec::new();
    for i in 0..=wrt.len() {
        let v = e.cx.emit(&vg);
        items.push(e.cx.proj(v, i as u32 + 1)?);
    }
    for &i in &wrt {
        let x = Atom::Var(e.def.params[i].name.clone(), e.tys[i].clone());
        let cols = shape::assemble(&mut e.cx, &e.tys[i], &x, &mut |cx, d| {
            let r = pass(cx, &fd, &lifted, i, d)?;
            shape::tangent(cx, &gty, r)
        })?;
        let cols = let_atom(&mut e.cx, &mut binds, "cols", cols)?;
        for jj in 0..wrt.len() {
            let c = e.cx.emit(&cols);
            let slot = jj as u32 + 2;
            items.push(shape::rebuild(&mut e.cx, &e.tys[i], c, &|cx, leaf| {
                cx.proj(leaf, slot)
            })?);
        }
    }
    let out = e.cx.tuple(items)?;
    let body = e.cx.wrap(binds, out)?;
    let params = e.def.params.clone();
    finish(e.cx, name, &e.def, params, body)
}
