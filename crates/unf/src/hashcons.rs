//! Ground types interned by structure, so that interning one costs its new
//! nodes, not its size.
//!
//! `Tables` interned a ground type by hashing the whole `Ty`: a hash walks
//! the whole tree, shared `Arc` elements or not, so the d nodes of a nested
//! literal `[[...[x]...]]`, whose types are `[1]...[1]R` at every depth,
//! cost d² to intern (docs/scale.md, "Shared types"). Here each type node
//! gets a private id, the key of an array being its size and its element's
//! id (hash-consing): a key hashes in O(1). An element `Arc` already seen
//! is looked up by its address, so a type that shares its element with one
//! interned before costs one node: the type of `[e]` right after the type
//! of `e`. The `Arc`s looked up by address are kept alive here, so that an
//! address is never reused by another type while the table lives.

use std::cell::Cell;
use std::sync::Arc;
use syntax::fxhash::FxHashMap;
use syntax::{Size, Ty};

/// One type node, its children named by their ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Node {
    Real,
    Int,
    Bool,
    Array(Size, u32),
    Tuple(Vec<u32>),
    Func(Vec<u32>, u32),
}

thread_local! {
    /// Type nodes hashed on this thread, by every table (see
    /// [`type_nodes_hashed`]).
    static HASHED: Cell<u64> = const { Cell::new(0) };
}

/// The number of type nodes the type tables have hashed on this thread so
/// far: the work of interning ground types. Tests read it to check that a
/// pass interns types in time linear in its input (a count, not a clock).
pub fn type_nodes_hashed() -> u64 {
    HASHED.with(Cell::get)
}

/// Structural ids of ground types (a type's id equals another's exactly
/// when the two types are equal).
#[derive(Debug, Clone, Default)]
pub(crate) struct Shapes {
    ids: FxHashMap<Node, u32>,
    /// The id of each element `Arc` seen, by its address.
    by_address: FxHashMap<usize, u32>,
    /// The `Arc`s of `by_address`, held so their addresses stay theirs.
    held: Vec<Arc<Ty>>,
}

fn address(elem: &Arc<Ty>) -> usize {
    Arc::as_ptr(elem) as usize
}

impl Shapes {
    /// The structural id of `ty`. Iterative down a chain of arrays (a type
    /// may nest as deeply as a literal does, deeper than the stack allows
    /// recursion); tuple and function components recurse.
    pub(crate) fn id(&mut self, ty: &Ty) -> u32 {
        // The arrays from `ty` down to the first element already seen (or
        // to a type that is not an array), outermost first.
        let mut spine: Vec<(&Size, &Arc<Ty>)> = Vec::new();
        let mut t = ty;
        let mut id = loop {
            match t {
                Ty::Array(size, elem) => {
                    spine.push((size, elem));
                    if let Some(&e) = self.by_address.get(&address(elem)) {
                        break e;
                    }
                    t = elem;
                }
                other => break self.leaf(other),
            }
        };
        // `id` is the id of the innermost array's element; build outward.
        while let Some((size, elem)) = spine.pop() {
            if let std::collections::hash_map::Entry::Vacant(v) =
                self.by_address.entry(address(elem))
            {
                v.insert(id);
                self.held.push(Arc::clone(elem));
            }
            id = self.node(Node::Array(size.clone(), id));
        }
        id
    }

    fn leaf(&mut self, ty: &Ty) -> u32 {
        let node = match ty {
            Ty::Real => Node::Real,
            Ty::Int => Node::Int,
            Ty::Bool => Node::Bool,
            Ty::Array(..) => return self.id(ty),
            Ty::Tuple(items) => Node::Tuple(items.iter().map(|t| self.id(t)).collect()),
            Ty::Func(args, ret) => {
                let args = args.iter().map(|t| self.id(t)).collect();
                Node::Func(args, self.id(ret))
            }
        };
        self.node(node)
    }

    fn node(&mut self, node: Node) -> u32 {
        HASHED.with(|h| h.set(h.get() + 1));
        let next = self.ids.len() as u32;
        *self.ids.entry(node).or_insert(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nest(depth: usize) -> Ty {
        (0..depth).fold(Ty::Real, |t, _| Ty::array(Size::Lit(1), t))
    }

    #[test]
    fn equal_types_get_one_id_and_different_ones_two() {
        let mut s = Shapes::default();
        let a = s.id(&nest(3));
        assert_eq!(s.id(&nest(3)), a, "an equal tree built apart");
        assert_ne!(s.id(&nest(2)), a);
        let wide = Ty::array(Size::Lit(2), nest(2));
        assert_ne!(s.id(&wide), a, "the sizes differ");
        let pair = Ty::Tuple(vec![nest(1), Ty::Int]);
        let swapped = Ty::Tuple(vec![Ty::Int, nest(1)]);
        assert_ne!(s.id(&pair), s.id(&swapped));
        assert_eq!(s.id(&pair), s.id(&Ty::Tuple(vec![nest(1), Ty::Int])));
    }

    #[test]
    fn a_type_sharing_its_element_with_one_seen_costs_one_node() {
        let mut s = Shapes::default();
        let inner = Arc::new(nest(1000));
        let outer = Ty::array(Size::Lit(1), Arc::clone(&inner));
        let before = type_nodes_hashed();
        s.id(&outer);
        assert_eq!(
            type_nodes_hashed() - before,
            1002,
            "the first walk is whole"
        );
        let again = Ty::array(Size::Lit(1), Ty::array(Size::Lit(1), Arc::clone(&inner)));
        let before = type_nodes_hashed();
        s.id(&again);
        assert_eq!(type_nodes_hashed() - before, 2, "one node per new level");
    }
}
