//! Robustness: no input makes the parser, the printer or the RON reader
//! panic. Arbitrary strings, arbitrary bytes, soups of the language's own
//! tokens (which get much further into the parser), and mutations of valid
//! RON files.

use crate::common;

use common::{parse, same_module};
use proptest::prelude::*;
use syntax::{Module, from_ron, print};

/// Tokens of the language, glued with or without spaces.
fn token_soup() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "def",
        "f",
        "x",
        "y",
        "=",
        "let",
        "in",
        "(",
        ")",
        ",",
        "[",
        "]",
        "+",
        "-",
        "*",
        "/",
        "<",
        "<=",
        "==",
        "!=",
        "&&",
        "||",
        "fun",
        "->",
        "if",
        "then",
        "else",
        "1",
        "2.5",
        "1e-3",
        ".",
        ".1",
        ":",
        "R",
        "Int",
        "[n]",
        "[n+1]",
        "[_]",
        "true",
        "--",
        "\n",
        "sin",
        "(+)",
        "_",
        "99999999999999999999",
        "1e999",
        "é",
        "!",
        "p.1.2",
    ]);
    (
        prop::collection::vec((token, any::<bool>()), 0..40),
        any::<bool>(),
    )
        .prop_map(|(tokens, prefix)| {
            let mut text = String::from(if prefix { "def f = " } else { "" });
            for (t, space) in tokens {
                text.push_str(t);
                if space {
                    text.push(' ');
                }
            }
            text
        })
}

/// What every successful parse must satisfy: the printed text parses back
/// to the same module, and spans lie inside the text.
fn check_parsed(text: &str) -> Result<(), TestCaseError> {
    let Ok(m) = parse(text) else {
        return Ok(());
    };
    for s in m.spans.iter().chain(m.defs.iter().map(|d| &d.name_span)) {
        prop_assert!(
            s.lo <= s.hi && s.hi as usize <= text.len(),
            "{:?} in {:?}",
            s,
            text
        );
        prop_assert!(text.is_char_boundary(s.lo as usize) && text.is_char_boundary(s.hi as usize));
    }
    let printed = print::module(&m);
    let back = parse(&printed)
        .map_err(|e| TestCaseError::fail(format!("{text:?} printed as {printed:?}: {e:?}")))?;
    prop_assert_eq!(
        same_module(&m, &back),
        Ok(()),
        "{:?} printed as {:?}",
        text,
        printed
    );
    Ok(())
}

fn check_error_span(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = parse(text) {
        let s = e.span();
        prop_assert!(
            s.lo <= s.hi && s.hi as usize <= text.len(),
            "{:?} in {:?}",
            e,
            text
        );
        prop_assert!(!e.to_string().is_empty());
    }
    Ok(())
}

proptest! {
    // About one soup in seventy parses; enough cases to round-trip many.
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn token_soups_do_not_panic_and_round_trip(text in token_soup()) {
        check_error_span(&text)?;
        check_parsed(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn arbitrary_strings_do_not_panic(text in any::<String>()) {
        check_error_span(&text)?;
        check_parsed(&text)?;
    }

    #[test]
    fn arbitrary_bytes_do_not_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        check_error_span(&text)?;
        check_parsed(&text)?;
    }


    #[test]
    fn parse_ty_does_not_panic(text in token_soup()) {
        if let Ok(t) = syntax::parse_ty(&text) {
            prop_assert_eq!(syntax::parse_ty(&print::ty(&t)), Ok(t));
        }
    }

    #[test]
    fn arbitrary_ron_does_not_panic(text in any::<String>()) {
        let _ = from_ron::<Module>(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &text);
    }

    #[test]
    fn mutated_ron_does_not_panic(at in any::<prop::sample::Index>(), with in any::<char>(), cut in any::<bool>()) {
        let m = parse("def f (x : [n]R) : R =\n  let (a, b) = (x[0], 1.5) in\n  a * b + sum (map (fun y -> y) x)")
            .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
        let ron = syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m).expect("the module writes as RON");
        let chars: Vec<char> = ron.chars().collect();
        let i = at.index(chars.len());
        let mutated: String = if cut {
            chars[..i].iter().collect()
        } else {
            chars.iter().enumerate().map(|(j, &c)| if j == i { with } else { c }).collect()
        };
        if let Ok(read) = from_ron::<Module>(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &mutated) {
            // Whatever was read, printing it must not panic either.
            let _ = print::module(&read);
        }
    }
}

#[test]
fn token_soups_reach_successful_parses() {
    // The soup test above only checks the round trip of soups that parse;
    // make sure there are enough of those for it to mean something.
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let soup = token_soup();
    let mut ok = 0;
    for _ in 0..5000 {
        let text = soup.new_tree(&mut runner).expect("a soup").current();
        if parse(&text).is_ok() {
            ok += 1;
        }
    }
    println!("{ok} of 5000 soups parse");
    assert!(ok >= 25, "only {ok} of 5000 soups parse");
}

/// Every single-character change of a small module's RON to a digit is
/// read as an error or as a module that prints: the proptest above found
/// an expression id a digit made out of range, which the reader accepted
/// and the printer indexed (seed-dependent, so checked here
/// exhaustively).
#[test]
fn every_digit_mutation_of_ron_reads_or_errs_without_panic() {
    let m = parse(
        "def f (x : [n]R) : R =\n  let (a, b) = (x[0], 1.5) in\n  a * b + sum (map (fun y -> y) x)",
    )
    .expect("the module parses");
    let ron = syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &m)
        .expect("the module writes as RON");
    let chars: Vec<char> = ron.chars().collect();
    for i in 0..chars.len() {
        for with in ['0', '1', '9'] {
            let mutated: String = chars
                .iter()
                .enumerate()
                .map(|(j, &c)| if j == i { with } else { c })
                .collect();
            if let Ok(read) =
                from_ron::<Module>(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &mutated)
            {
                let _ = print::module(&read);
            }
        }
    }
}
