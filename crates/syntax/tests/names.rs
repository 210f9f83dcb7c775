//! `Name` shares its text (an `Arc<str>`) but must behave as the `String`
//! it replaced: the maps keyed by names (the optimizer's census, the
//! builders' free-name sets) iterate in an order decided by the hash, and
//! `BTreeMap`s and sorted lists by the ordering, so both must be the
//! text's; the RON files hold a name as a plain string.

use std::collections::BTreeSet;
use std::hash::BuildHasher;

use syntax::Name;
use syntax::fxhash::FxHasher;

#[test]
fn a_name_hashes_as_its_text() {
    let h = std::hash::BuildHasherDefault::<FxHasher>::default();
    for text in ["x", "v_17", "v_1234", "t.2", ""] {
        assert_eq!(
            h.hash_one(Name::new(text)),
            h.hash_one(text.to_string()),
            "{text:?}"
        );
    }
}

#[test]
fn names_order_and_compare_as_their_texts() {
    let texts = ["v_10", "v_9", "a", "v_1", "B", "v_1"];
    let names: BTreeSet<Name> = texts.iter().map(Name::new).collect();
    let strings: BTreeSet<String> = texts.iter().map(|t| t.to_string()).collect();
    let names: Vec<&str> = names.iter().map(Name::as_str).collect();
    let strings: Vec<&str> = strings.iter().map(String::as_str).collect();
    assert_eq!(names, strings);
    // Equal texts from different allocations are equal names.
    assert_eq!(Name::new(String::from("v_1")), Name::new("v_1"));
    assert_ne!(Name::new("v_1"), Name::new("v_10"));
}

#[test]
fn a_name_is_written_and_read_as_a_string() {
    let name = Name::new("x_3");
    let text = ron::to_string(&name).expect("a name serializes");
    assert_eq!(text, ron::to_string("x_3").expect("a string serializes"));
    let back: Name = ron::from_str(&text).expect("the name reads back");
    assert_eq!(back, name);
}

#[test]
fn fresh_names_avoid_the_reserved_and_each_other() {
    let mut g = syntax::ir::NameGen::default();
    g.reserve("v_1");
    let a = g.fresh("v");
    let b = g.fresh("v_7");
    assert_eq!(a.as_str(), "v_2");
    assert_eq!(b.as_str(), "v_3");
}
