//! The elements of a tuple or an array value, shared and immutable: one
//! allocation holding the reference count, the length and the elements,
//! behind a pointer of one word (`triomphe::ThinArc`).
//!
//! With the fat `Rc<[Value]>` (a pointer and a length) a `Value` took 24
//! bytes; with one word it takes 16, a tag and a word, since every other
//! variant (`f64`, `i64`, `bool`, `Rc<Closure>`) is a word too. Reverse mode
//! over a loop stores arrays of n values, most of them reals, so this is a
//! third of what it stores per step (docs/scale.md, "Compact stored
//! values"). The elements stay `Value`s, so nothing else changes: a value
//! computes bit for bit what it did.

use std::ops::Deref;

use triomphe::ThinArc;

use crate::value::Value;

/// The shared elements of a tuple or an array; cloning is O(1).
#[derive(Clone)]
pub struct Items(ThinArc<(), Value>);

impl Items {
    /// The elements of an iterator whose length is known, built in place in
    /// their one allocation (no intermediate `Vec`).
    pub fn from_exact(items: impl ExactSizeIterator<Item = Value>) -> Items {
        Items(ThinArc::from_header_and_iter((), items))
    }
}

impl Deref for Items {
    type Target = [Value];

    fn deref(&self) -> &[Value] {
        &self.0.slice
    }
}

impl From<Vec<Value>> for Items {
    fn from(items: Vec<Value>) -> Items {
        Items::from_exact(items.into_iter())
    }
}

impl From<&[Value]> for Items {
    fn from(items: &[Value]) -> Items {
        Items::from_exact(items.iter().cloned())
    }
}

impl FromIterator<Value> for Items {
    fn from_iter<I: IntoIterator<Item = Value>>(items: I) -> Items {
        Items::from(items.into_iter().collect::<Vec<_>>())
    }
}
