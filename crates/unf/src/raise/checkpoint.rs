//! The transposed Jacobian of a left fold (`foldl`, general `reduce`,
//! `ifold`) with √n checkpointing, when [`Checkpoint::Sqrt`] is asked for.
//!
//! `loops.rs` writes `J^T foldl` as scans over the whole loop: the
//! accumulators, the pairs they make with the elements, the cotangents and
//! the per-element products are each an array of n values, so a gradient
//! of a loop of n steps keeps O(n) values alive. Here the n steps are
//! strip-mined into `nb = ⌈n / B⌉` blocks of `B = ⌈√n⌉` steps (the scheme
//! of Griewank and Walther's "checkpointing" and Futhark's and JAX's
//! `checkpoint` of a sequential loop), and only one state per block is
//! stored:
//!
//! ```text
//! cps = scanl (fun (s, b) -> ifold (fun (a, j) -> f (a, x[b*B + j])) s (len b)) z blocks
//! cb  = scanr (fun (b, c) -> let S = states of block b, from cps[b]
//!                            in  c run back through the block by the step) c_n blocks
//! gs  = scanl (fun (acc, b) -> let S = states of block b, C = cotangents of block b from cb[b+1]
//!                              in  acc + Σ_j ∇_F f (S[j], x[..]) C[j+1]) 0 blocks
//! ```
//!
//! `cps` holds nb + 1 states, `cb` nb + 1 cotangents, and each block's
//! arrays B + 1 values, which die with the block: O(√n) memory. Every
//! floating-point operation is the one `loops.rs` performs, in the same
//! order, so the gradient is the same to the bit: the states are the same
//! applications of `f` from the same start, the cotangents the same steps
//! from the same seed, and the free variables' cotangents the same sum
//! (`reduce (+^) 0` over the elements in order, here a `foldl` carried
//! from block to block, starting from the same zero). Running the sum
//! backwards with the cotangents would save the third pass but add in
//! another order. The price is recomputation: the body runs once more in
//! `cps`, once more per block in `cb`, and once more (with the steps of
//! the cotangent again) in `gs` when a free variable or the elements need
//! a cotangent (docs/cost.md, "Checkpointing").

use super::emit::ValId;
use super::loops::{array_of, elem_of};
use super::sparse::Part;
use super::{Abs, Raise, State, at};
use crate::error::Error;
use crate::ir::{Fun, LoopKind};
use syntax::{Expr, Prim as P, Ty};

/// How UNF^-1 writes the transposed Jacobian of a loop: a choice of
/// evaluation strategy, not of derivative (both give the same numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checkpoint {
    /// Every accumulator of the loop is stored for the backward pass: O(n)
    /// memory, the body run twice and its derivative twice per element.
    #[default]
    Off,
    /// The left folds' steps are strip-mined into ⌈√n⌉ blocks of ⌈√n⌉
    /// steps and one state per block is stored: O(√n) memory, the body
    /// run up to three times more.
    Sqrt,
}

impl Checkpoint {
    /// Every scheme, by name (the command line's `--checkpoint` values).
    pub const ALL: [Checkpoint; 2] = [Checkpoint::Off, Checkpoint::Sqrt];

    /// The scheme's name.
    pub fn name(self) -> &'static str {
        match self {
            Checkpoint::Off => "off",
            Checkpoint::Sqrt => "sqrt",
        }
    }

    /// The scheme of a name.
    pub fn from_name(name: &str) -> Option<Checkpoint> {
        Checkpoint::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the loop of this kind is checkpointed under the scheme.
    pub fn applies(self, kind: LoopKind) -> bool {
        self == Checkpoint::Sqrt
            && matches!(kind, LoopKind::Foldl | LoopKind::Reduce | LoopKind::Ifold)
    }
}

/// The strip-mining of one loop: its elements, the block size, the blocks.
struct Strip {
    /// The array the loop runs over, or `n` for `ifold`.
    x: ValId,
    ifold: bool,
    /// The number of steps n.
    steps: ValId,
    /// B = ⌈√n⌉ (at least 1).
    size: ValId,
    /// `build nb (fun b -> b)`.
    blocks: ValId,
}

impl Raise<'_> {
    /// `a op b` on integers, bound.
    pub(super) fn int_op(&mut self, op: P, a: ValId, b: ValId) -> ValId {
        let (x, y) = (self.b.use_val(a), self.b.use_val(b));
        let e = self.b.prim(op, vec![x, y], Ty::Int);
        self.b.bind(e, "k")
    }

    /// `build n (fun j -> j)`.
    fn indices(&mut self, n: ValId) -> Result<ValId, Error> {
        let id = self.lam(&[(Ty::Int, "j")], |_, p| Ok(p[0]))?;
        let ne = self.b.use_val(n);
        Ok(self.call(P::Build, &[ne, id], array_of(Ty::Int), "j"))
    }

    fn strip(&mut self, kind: LoopKind, x: ValId) -> Result<Strip, Error> {
        let ifold = kind == LoopKind::Ifold;
        let steps = if ifold {
            x
        } else {
            let e = self.b.length(x);
            self.b.bind(e, "n")
        };
        // r = ⌊√n⌋ (exact for every n below 2^52), B = r or r + 1.
        let ne = self.b.use_val(steps);
        let real = self.b.prim(P::Real, vec![ne], Ty::Real);
        let root = self.b.un(P::Sqrt, real);
        let floor = self.b.prim(P::Floor, vec![root], Ty::Int);
        let r = self.b.bind(floor, "r");
        let sq = self.int_op(P::Mul, r, r);
        let one = self.b.int(1);
        let up = self.int_op(P::Add, r, one);
        let ceil = self.if_lt((sq, steps), up, r);
        let size = self.if_lt((ceil, one), one, ceil);
        // nb = (n + B - 1) / B.
        let t = self.int_op(P::Add, steps, size);
        let t = self.int_op(P::Sub, t, one);
        let count = self.int_op(P::Div, t, size);
        let blocks = self.indices(count)?;
        Ok(Strip {
            x,
            ifold,
            steps,
            size,
            blocks,
        })
    }

    /// The element of step `i`: `x[i]`, or `i` itself for `ifold`.
    fn element(&mut self, st: &Strip, i: ValId) -> ValId {
        if st.ifold {
            i
        } else {
            let ie = self.b.use_val(i);
            self.index_at(st.x, ie)
        }
    }

    /// The first step of block `b` and the block's length, `min B (n - lo)`.
    fn bounds(&mut self, st: &Strip, b: ValId) -> (ValId, ValId) {
        let lo = self.int_op(P::Mul, b, st.size);
        let rest = self.int_op(P::Sub, st.steps, lo);
        (lo, self.if_lt((rest, st.size), rest, st.size))
    }

    /// `if a < b then yes else no` on integer values, bound.
    fn if_lt(&mut self, (a, b): (ValId, ValId), yes: ValId, no: ValId) -> ValId {
        let (ae, be) = (self.b.use_val(a), self.b.use_val(b));
        let test = self.b.cmp(P::Lt, ae, be);
        let (ye, ne) = (self.b.use_val(yes), self.b.use_val(no));
        let e = self.b.ite(test, ye, ne);
        self.b.bind(e, "k")
    }

    /// The body's inputs for the accumulator `acc` and the element of
    /// step `lo + j`.
    fn step_inputs(
        &mut self,
        st: &Strip,
        free: &[Abs],
        acc: ValId,
        lo: ValId,
        j: ValId,
    ) -> Vec<Abs> {
        let i = self.int_op(P::Add, lo, j);
        let e = self.element(st, i);
        let mut inputs = free.to_vec();
        inputs.extend([Abs::Val(acc), Abs::Val(e)]);
        inputs
    }

    /// `vjp_s f (acc, elem) c`: the cotangent of the accumulator one step
    /// back, as `loops.rs` computes it.
    fn back_step(&mut self, fun: &Fun, inputs: Vec<Abs>, c: ValId) -> Result<ValId, Error> {
        let nf = fun.free.len();
        let (_, cot) = self.grad(fun.body, inputs, Abs::Val(c))?;
        match cot[nf] {
            Abs::Zero(_) => Ok(self.zero_of(c)),
            other => self.materialize(other),
        }
    }

    /// The states of block `b` recomputed from its checkpoint:
    /// `scanl f cps[b] (x[lo..lo+len])`; returns `(lo, len, S)`.
    fn block_states(
        &mut self,
        st: &Strip,
        fun: &Fun,
        free: &[Abs],
        cps: ValId,
        b: ValId,
    ) -> Result<(ValId, ValId, ValId), Error> {
        let (lo, len) = self.bounds(st, b);
        let be = self.b.use_val(b);
        let start = self.index_at(cps, be);
        let sty = self.b.ty(start).clone();
        let lam = self.lam(&[(sty.clone(), "a"), (Ty::Int, "j")], |r, q| {
            let inputs = r.step_inputs(st, free, q[0], lo, q[1]);
            r.primal_value(fun.body, inputs)
        })?;
        let ids = self.indices(len)?;
        let args = [lam, self.b.use_val(start), self.b.use_val(ids)];
        let states = self.call(P::Scanl, &args, array_of(sty), "s");
        Ok((lo, len, states))
    }

    /// `J^T` of a left fold, checkpointed (module documentation), from
    /// [`Raise::jt_loop`]: `s` the cotangents without the result's `z`,
    /// `n` the length of the loop's context, `free` its body's free
    /// variables at the primal point `primal`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn jt_fold_checkpointed(
        &mut self,
        kind: LoopKind,
        fun: &Fun,
        free: Vec<Abs>,
        z: ValId,
        mut s: State,
        n: usize,
        primal: &State,
    ) -> Result<State, Error> {
        let nf = free.len();
        let s0 = self.materialize(at(primal, n))?;
        let x = self.materialize(at(primal, n + 1))?;
        let sty = self.b.ty(s0).clone();
        let ety = if kind == LoopKind::Ifold {
            Ty::Int
        } else {
            elem_of(self.b.ty(x))
        };
        let st = self.strip(kind, x)?;
        // The checkpoints: the state at the start of every block, and the
        // final one.
        let lam = self.lam(&[(sty.clone(), "s"), (Ty::Int, "b")], |r, p| {
            let (lo, len) = r.bounds(&st, p[1]);
            let inner = r.lam(&[(sty.clone(), "a"), (Ty::Int, "j")], |r, q| {
                let inputs = r.step_inputs(&st, &free, q[0], lo, q[1]);
                r.primal_value(fun.body, inputs)
            })?;
            let args = [inner, r.b.use_val(p[0]), r.b.use_val(len)];
            Ok(r.call(P::Ifold, &args, sty.clone(), "s"))
        })?;
        let args = [lam, self.b.use_val(s0), self.b.use_val(st.blocks)];
        let cps = self.call(P::Scanl, &args, array_of(sty.clone()), "cp");
        // The cotangent at the start of every block, block by block from
        // the last, each block's states recomputed from its checkpoint.
        let lam = self.lam(&[(Ty::Int, "b"), (sty.clone(), "c")], |r, p| {
            let (lo, len, states) = r.block_states(&st, fun, &free, cps, p[0])?;
            let inner = r.lam(&[(sty.clone(), "c"), (Ty::Int, "k")], |r, q| {
                // j = len - 1 - k: the steps of the block from its last.
                let one = r.b.int(1);
                let last = r.int_op(P::Sub, len, one);
                let j = r.int_op(P::Sub, last, q[1]);
                let je = r.b.use_val(j);
                let acc = r.index_at(states, je);
                let inputs = r.step_inputs(&st, &free, acc, lo, j);
                r.back_step(fun, inputs, q[0])
            })?;
            let args = [inner, r.b.use_val(p[1]), r.b.use_val(len)];
            Ok(r.call(P::Ifold, &args, sty.clone(), "c"))
        })?;
        let args = [lam, self.b.use_val(z), self.b.use_val(st.blocks)];
        let cb = self.call(P::Scanr, &args, array_of(sty.clone()), "cb");
        let zero = self.b.add(Expr::Int(0), Ty::Int);
        let ds0 = self.index_at(cb, zero);
        let acc = self.add(at(&s, n), Abs::Val(ds0))?;
        s.set_mut(n, acc);
        // Which cotangents the elements' pass gives (those of the free
        // variables and of the elements that are not zero), found by
        // raising one step's derivative and dropping it.
        let wanted: Vec<usize> = (0..nf).chain([nf + 1]).collect();
        self.b.open();
        let ps = self
            .b
            .params(&[(sty.clone(), "x"), (ety.clone(), "x"), (sty.clone(), "c")]);
        let mut inputs = free.clone();
        inputs.extend([Abs::Val(ps[0]), Abs::Val(ps[1])]);
        let (_, cot) = self.grad(fun.body, inputs, Abs::Val(ps[2]))?;
        let nz = self.nonzero(&cot, wanted.iter().copied());
        let _ = self.b.suspend();
        if nz.is_empty() {
            return Ok(s);
        }
        self.elements_pass(&st, fun, &free, (&sty, &ety), (cps, cb), &nz, &mut s, n)?;
        Ok(s)
    }

    /// The pass over the blocks in order that sums the free variables'
    /// cotangents and collects the elements' (components `nz` of the
    /// body's input), and adds them into `s`.
    #[allow(clippy::too_many_arguments)]
    fn elements_pass(
        &mut self,
        st: &Strip,
        fun: &Fun,
        free: &[Abs],
        (sty, ety): (&Ty, &Ty),
        (cps, cb): (ValId, ValId),
        nz: &[usize],
        s: &mut State,
        n: usize,
    ) -> Result<(), Error> {
        let nf = free.len();
        // The carried value: one sum per free variable, and the last
        // block's element cotangents.
        let mut init = Vec::with_capacity(nz.len());
        for &j in nz {
            init.push(if j < nf {
                let w = self.witness(free[j])?;
                self.zero_of(w)
            } else {
                // B zeros (none when n = 0: then there is no block). The C
                // backend keeps a scan's arrays at one length, so every
                // block's element cotangents are padded to B.
                let len = self.if_lt((st.steps, st.size), st.steps, st.size);
                let lam = self.lam(&[(Ty::Int, "j")], |r, p| {
                    let je = r.b.use_val(p[0]);
                    let w = r.index_at(st.x, je);
                    Ok(r.zero_of(w))
                })?;
                let le = self.b.use_val(len);
                self.call(P::Build, &[le, lam], array_of(ety.clone()), "d")
            });
        }
        let init = self.tuple_of(&init);
        let gty = self.b.ty(init).clone();
        let lam = self.lam(&[(gty.clone(), "g"), (Ty::Int, "b")], |r, p| {
            let accs = if nz.len() == 1 {
                vec![p[0]]
            } else {
                r.b.unpack(p[0], "g")
            };
            let (lo, len, states) = r.block_states(st, fun, free, cps, p[1])?;
            let one = r.b.int(1);
            let next = r.int_op(P::Add, p[1], one);
            let ne = r.b.use_val(next);
            let cend = r.index_at(cb, ne);
            // The block's cotangents C[0..=len], C[len] the one it ends on.
            let cstep = r.lam(&[(Ty::Int, "j"), (sty.clone(), "c")], |r, q| {
                let je = r.b.use_val(q[0]);
                let acc = r.index_at(states, je);
                let inputs = r.step_inputs(st, free, acc, lo, q[0]);
                r.back_step(fun, inputs, q[1])
            })?;
            let ids = r.indices(len)?;
            let args = [cstep, r.b.use_val(cend), r.b.use_val(ids)];
            let cots = r.call(P::Scanr, &args, array_of(sty.clone()), "c");
            // Per step, the cotangents `loops.rs` computes per element.
            let mut parts = Vec::new();
            let per = r.lam(&[(Ty::Int, "j")], |r, q| {
                let je = r.b.use_val(q[0]);
                let acc = r.index_at(states, je);
                let j1 = r.int_op(P::Add, q[0], one);
                let ce = r.b.use_val(j1);
                let c = r.index_at(cots, ce);
                let inputs = r.step_inputs(st, free, acc, lo, q[0]);
                let (_, cot) = r.grad(fun.body, inputs, Abs::Val(c))?;
                // Segments are written out per block (the mark is older
                // than every value): blocks carry a dense sum.
                let (v, ps) = r.pack_parts(&cot, nz, nf, ValId(0))?;
                parts = ps;
                Ok(v)
            })?;
            let elty = r.b.node_ty(super::loops::lam_ret(r, per)).clone();
            let le = r.b.use_val(len);
            let g = r.call(P::Build, &[le, per], array_of(elty.clone()), "g");
            let mut out = Vec::with_capacity(nz.len());
            for (slot, &j) in nz.iter().enumerate() {
                let comp = if nz.len() == 1 {
                    g
                } else {
                    r.proj_map(g, slot as u32 + 1)?
                };
                out.push(if j < nf {
                    match parts[slot] {
                        // The block's pairs added to the carried sum, in
                        // order, as the stored loop adds all of them.
                        Part::Pairs(k) => {
                            let w = r.witness(free[j])?;
                            r.add_pairs(w, Some(accs[slot]), comp, k)?
                        }
                        Part::Flat(_) => {
                            return Err(super::internal(r.b.span, "segments in a block"));
                        }
                        Part::Dense => {
                            let aty = r.b.ty(accs[slot]).clone();
                            let add = r.add_lambda(&aty);
                            let args = [add, r.b.use_val(accs[slot]), r.b.use_val(comp)];
                            r.call(P::Foldl, &args, aty, "d")
                        }
                    }
                } else {
                    r.padded(comp, len, st.size)?
                });
            }
            Ok(r.tuple_of(&out))
        })?;
        let args = [lam, self.b.use_val(init), self.b.use_val(st.blocks)];
        let gs = self.call(P::Scanl, &args, array_of(gty), "gs");
        let count = {
            let e = self.b.length(st.blocks);
            self.b.bind(e, "nb")
        };
        let ce = self.b.use_val(count);
        let last = self.index_at(gs, ce);
        let totals = if nz.len() == 1 {
            vec![last]
        } else {
            self.b.unpack(last, "d")
        };
        for (slot, &j) in nz.iter().enumerate() {
            let (pos, total) = if j < nf {
                (fun.free[j] as usize - 1, totals[slot])
            } else {
                // The elements' cotangents, block by block:
                // `build n (fun i -> gs[i / B + 1].slot[i mod B])`.
                let lam = self.lam(&[(Ty::Int, "i")], |r, p| {
                    let q = r.int_op(P::Div, p[0], st.size);
                    let one = r.b.int(1);
                    let q = r.int_op(P::Add, q, one);
                    let qe = r.b.use_val(q);
                    let t = r.index_at(gs, qe);
                    let blk = if nz.len() == 1 {
                        t
                    } else {
                        r.b.unpack(t, "g")[slot]
                    };
                    let m = r.int_op(P::Mod, p[0], st.size);
                    let me = r.b.use_val(m);
                    Ok(r.index_at(blk, me))
                })?;
                let ne = self.b.use_val(st.steps);
                let all = self.call(P::Build, &[ne, lam], array_of(ety.clone()), "d");
                (n + 1, all)
            };
            let acc = self.add(at(s, pos), Abs::Val(total))?;
            s.set_mut(pos, acc);
        }
        Ok(())
    }

    /// `build B (fun j -> if j < len then a[j] else 0)`, for an array `a`
    /// of `len` >= 1 elements.
    fn padded(&mut self, a: ValId, len: ValId, size: ValId) -> Result<ValId, Error> {
        let ty = self.b.ty(a).clone();
        let lam = self.lam(&[(Ty::Int, "j")], |r, p| {
            let (je, le) = (r.b.use_val(p[0]), r.b.use_val(len));
            let inside = r.b.cmp(P::Lt, je, le);
            r.b.open();
            let je = r.b.use_val(p[0]);
            let v = r.index_at(a, je);
            let ve = r.b.use_val(v);
            let then_ = r.b.close_pruned(ve);
            r.b.open();
            let zero = r.b.add(Expr::Int(0), Ty::Int);
            let w = r.index_at(a, zero);
            let z = r.zero_of(w);
            let ze = r.b.use_val(z);
            let else_ = r.b.close_pruned(ze);
            let e = r.b.ite(inside, then_, else_);
            Ok(r.b.bind(e, "d"))
        })?;
        let se = self.b.use_val(size);
        Ok(self.call(P::Build, &[se, lam], ty, "d"))
    }

    /// The value itself when there is one, their tuple otherwise.
    pub(super) fn tuple_of(&mut self, vals: &[ValId]) -> ValId {
        if let [only] = vals {
            return *only;
        }
        let tys = vals.iter().map(|&v| self.b.ty(v).clone()).collect();
        let items = vals.iter().map(|&v| self.b.use_val(v)).collect();
        let e = self.b.add(Expr::Tuple(items), Ty::Tuple(tys));
        self.b.bind(e, "g")
    }
}
