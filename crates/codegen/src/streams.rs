//! Scans read while they are computed.
//!
//! `scanl f z A` with a scalar accumulator need not be written to memory
//! when its only reader walks it in order: the reader's loop carries the
//! accumulator and advances it once per element. The gradient of `prod`,
//! `map2 (*) (scanr (*) 1 (shift1L A)) (shift1R s)`, then takes one
//! backward loop instead of a scan loop and a map loop.
//!
//! A delayed array built on such a scan has an [`Order`]: it must be read
//! upwards (`scanl`) or downwards (`scanr`), each element exactly once. The
//! readers that walk arrays (materialization, folds, scans, stores) pick
//! their direction from it and call [`Lowerer::open_streams`] before their
//! loop; every other reader (indexing, shifts, a reader going the other
//! way, two sources going opposite ways) materializes the array first. A
//! delayed array is read by one reader only (`uses.rs`), so a stream is
//! never advanced twice.

use std::rc::Rc;

use syntax::{Prim, Span, Ty};

use crate::arrays::Dir;
use crate::error::Error;
use crate::imp::{BinOp, Expr as E, Stmt, VarId};
use crate::layout::{has_array, scalar_kinds};
use crate::lower::Lowerer;
use crate::val::{Arr, Delayed, Func, Gen, Leaves, Manifest, Val};

/// The order in which a delayed array's elements must be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Any order, any number of times (a pull array).
    Any,
    /// Upwards, each once.
    Up,
    /// Downwards, each once.
    Down,
}

impl Order {
    /// The loop direction for reading an array of this order.
    pub fn dir(self) -> Dir {
        if self == Order::Down {
            Dir::Down
        } else {
            Dir::Up
        }
    }

    fn of_dir(dir: Dir) -> Order {
        match dir {
            Dir::Up => Order::Up,
            Dir::Down => Order::Down,
        }
    }
}

/// The order of an array (manifest arrays: any).
pub(crate) fn order(a: &Arr) -> Order {
    match a {
        Arr::Manifest(_) => Order::Any,
        Arr::Delayed(d) => match &d.recipe {
            Gen::Map { srcs, .. } => srcs
                .iter()
                .map(order)
                .find(|o| *o != Order::Any)
                .unwrap_or(Order::Any),
            Gen::Build { .. } => Order::Any,
            Gen::Offset { src, .. } => order(src),
            Gen::Scan { op, .. } => {
                if *op == Prim::Scanl {
                    Order::Up
                } else {
                    Order::Down
                }
            }
        },
    }
}

impl Lowerer<'_> {
    /// The array, materialized unless it may be read in any order.
    pub fn random_access(&mut self, a: Arr) -> Result<Arr, Error> {
        if order(&a) == Order::Any {
            Ok(a)
        } else {
            Ok(Arr::Manifest(self.materialize(&a)?))
        }
    }

    /// The array, materialized unless it may be read in direction `dir`.
    pub fn readable(&mut self, a: Arr, dir: Dir) -> Result<Arr, Error> {
        match order(&a) {
            Order::Any => Ok(a),
            o if o == Order::of_dir(dir) => Ok(a),
            _ => Ok(Arr::Manifest(self.materialize(&a)?)),
        }
    }

    /// Sources of one `map`/`map2`: streams of opposite directions cannot
    /// be read by one loop, so the later ones are materialized.
    pub fn compatible(&mut self, srcs: Vec<Arr>) -> Result<Vec<Arr>, Error> {
        let mut seen = Order::Any;
        let mut out = Vec::new();
        for s in srcs {
            let o = order(&s);
            if o == Order::Any || seen == Order::Any || o == seen {
                if o != Order::Any {
                    seen = o;
                }
                out.push(s);
            } else {
                out.push(Arr::Manifest(self.materialize(&s)?));
            }
        }
        Ok(out)
    }

    /// `scanl`/`scanr` as a stream when the accumulator is scalar (else
    /// `None`: the caller writes it to memory).
    pub fn scan_stream(
        &mut self,
        op: Prim,
        f: &Rc<Func>,
        z: &Val,
        a: &Arr,
        ty: &Ty,
        span: Span,
    ) -> Result<Option<Val>, Error> {
        let Ty::Array(_, acc_ty) = ty else {
            return Ok(None);
        };
        if has_array(acc_ty) {
            return Ok(None);
        }
        let dir = if op == Prim::Scanl {
            Dir::Up
        } else {
            Dir::Down
        };
        let src = self.readable(a.clone(), dir)?;
        let n = src.len().clone();
        let len = self.len_plus_one(&n);
        Ok(Some(Val::Array(Arr::Delayed(Rc::new(Delayed {
            len,
            ty: ty.clone(),
            recipe: Gen::Scan {
                op,
                f: f.clone(),
                z: z.clone(),
                src,
                kinds: scalar_kinds(acc_ty),
                acc: std::cell::RefCell::new(Vec::new()),
            },
            span,
        })))))
    }

    /// Declares the accumulators of the streams an array is built on,
    /// before the loop that reads it.
    pub fn open_streams(&mut self, a: &Arr) {
        let Arr::Delayed(d) = a else { return };
        match &d.recipe {
            Gen::Map { srcs, .. } => srcs.iter().for_each(|s| self.open_streams(s)),
            Gen::Build { .. } => {}
            Gen::Offset { src, .. } => self.open_streams(src),
            Gen::Scan {
                z, src, kinds, acc, ..
            } => {
                let mut zs = Vec::new();
                scalars(z, &mut zs);
                let vars: Vec<VarId> = kinds
                    .iter()
                    .zip(&zs)
                    .map(|(k, z)| self.mut_var(*k, Some(z.clone()), "scan"))
                    .collect();
                *acc.borrow_mut() = vars;
                self.open_streams(src);
            }
        }
    }

    /// Element `i` of a stream: the accumulator before (`scanl`) or after
    /// (`scanr`) taking in element `i` of the source.
    pub fn scan_element(&mut self, d: &Delayed, i: &E) -> Result<Val, Error> {
        let Gen::Scan {
            op,
            f,
            z,
            src,
            kinds,
            acc,
        } = &d.recipe
        else {
            return Err(Error::core(d.span, "a stream that is not a scan"));
        };
        for fr in &mut self.frames {
            fr.sequential = true;
        }
        let accs = acc.borrow().clone();
        if accs.len() != kinds.len() {
            return Err(Error::core(
                d.span,
                "a scan read by a loop that did not open it",
            ));
        }
        let acc_val = rebuild(
            z,
            &mut accs
                .iter()
                .zip(kinds)
                .map(|(a, k)| Val::Scalar(*k, E::Var(*a))),
        );
        let take = |cx: &mut Lowerer<'_>| -> Val {
            let vals: Vec<Val> = accs
                .iter()
                .zip(kinds)
                .map(|(a, k)| cx.let_scalar(*k, E::Var(*a), "elem"))
                .collect();
            rebuild(z, &mut vals.into_iter())
        };
        let advance = |cx: &mut Lowerer<'_>| -> Result<(), Error> {
            cx.w.open();
            let r = cx.elem(src, i).and_then(|x| {
                let args = if *op == Prim::Scanl {
                    vec![acc_val.clone(), x]
                } else {
                    vec![x, acc_val.clone()]
                };
                let v = cx.apply(f, args, d.span)?;
                cx.update(&accs, kinds, &v, d.span)
            });
            let then = cx.w.close();
            r?;
            cx.w.push(Stmt::If {
                cond: E::bin(BinOp::Lt, i.clone(), src.len().clone()),
                then,
                els: Vec::new(),
            });
            Ok(())
        };
        if *op == Prim::Scanl {
            let v = take(self);
            advance(self)?;
            Ok(v)
        } else {
            advance(self)?;
            Ok(take(self))
        }
    }
}

impl Lowerer<'_> {
    /// Remembers that element `index` of the manifest array `m`, the last
    /// one of a `scanl` just written by a loop, is `acc` (the accumulator
    /// variables, which the loop leaves holding it and nothing writes
    /// again; they are declared in the block that declares `m`'s buffers,
    /// so they are in scope wherever `m` is).
    pub fn record_last(&mut self, m: &Manifest, index: &E, acc: Val) {
        if let Some(p) = first_ptr(&m.elem) {
            self.lasts.insert(p, (m.len.clone(), index.clone(), acc));
        }
    }

    /// Element `i` of `a` without a load or a bounds check, when it is the
    /// last element of a `scanl` written out (`S[length A]` for `S =
    /// scanl f z A`, `reduce-from-scan`'s form): the value the scan's
    /// accumulator ended with. The array must be the scan's own (same
    /// buffer, same length: not a shift of it), the index the same
    /// expression as the scanned array's length, which lies in `[0, n +
    /// 1)`.
    pub fn last_element(&self, a: &Arr, i: &E) -> Option<Val> {
        let Arr::Manifest(m) = a else {
            return None;
        };
        let (len, index, v) = self.lasts.get(&first_ptr(&m.elem)?)?;
        (*len == m.len && index == i).then(|| v.clone())
    }
}

/// The first buffer of a manifest array of scalars or tuples of scalars,
/// when it is a variable (not an offset into one).
fn first_ptr(l: &Leaves) -> Option<VarId> {
    match l {
        Leaves::Scalar { ptr: E::Var(p), .. } => Some(*p),
        Leaves::Scalar { .. } => None,
        Leaves::Tuple(items) => items.first().and_then(first_ptr),
        Leaves::Array { .. } => None,
    }
}

/// The scalar expressions of a value without arrays, in preorder.
pub(crate) fn scalars(v: &Val, out: &mut Vec<E>) {
    match v {
        Val::Scalar(_, c) => out.push(c.clone()),
        Val::Tuple(items) => items.iter().for_each(|v| scalars(v, out)),
        _ => {}
    }
}

/// A value of the shape of `like` whose scalars come from `it`.
pub(crate) fn rebuild(like: &Val, it: &mut dyn Iterator<Item = Val>) -> Val {
    match like {
        Val::Tuple(items) => Val::Tuple(
            items
                .iter()
                .map(|v| rebuild(v, it))
                .collect::<Vec<_>>()
                .into(),
        ),
        _ => it.next().unwrap_or(Val::Tuple(Rc::from([]))),
    }
}
