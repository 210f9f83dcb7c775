//! What the loop IR's tests share: type constants, statement
//! shorthands, and building and running printed C.

use super::*;

pub const F64: Ty = Ty::Scalar(Scalar::F64);
pub const I64: Ty = Ty::Scalar(Scalar::I64);
pub const BOOL: Ty = Ty::Scalar(Scalar::Bool);
/// A writable block of reals.
pub const MEM: Ty = Ty::Mem {
    elem: Scalar::F64,
    writable: true,
};
/// A read-only block of reals (an input).
pub const INPUT: Ty = Ty::Mem {
    elem: Scalar::F64,
    writable: false,
};

pub fn v(x: VarId) -> Expr {
    Expr::Var(x)
}

pub fn set(x: VarId, e: Expr) -> Stmt {
    Stmt::Set {
        place: Place::Var(x),
        value: e,
    }
}

pub fn let_(x: VarId, e: Expr) -> Stmt {
    Stmt::Let {
        var: x,
        init: Some(e),
    }
}

/// `for index in 0 ..< hi { body }`.
pub fn for_up(index: VarId, hi: Expr, body: Block) -> Stmt {
    Stmt::For(Box::new(For {
        index,
        lo: Some(Expr::I64(0)),
        hi,
        dir: Dir::Up,
        step: 1,
        pragma: None,
        body,
    }))
}

/// Builds C functions printed from the loop IR with the runtime and a
/// `main`, in the default configuration, runs it and returns its output.
pub fn run_c(tag: &str, functions: &str, main: &str) -> String {
    let cfg = crate::Config::default();
    let mut src = String::from(crate::runtime::PRELUDE);
    src.push_str("static const char *const ad_site_text[] = {\"\"};\n");
    src.push_str(functions);
    src.push_str(main);
    let dir = std::env::temp_dir().join(format!("adrev-imp-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("test I/O");
    let (c_file, exe) = (dir.join("test.c"), dir.join("test"));
    std::fs::write(&c_file, &src).expect("test I/O");
    let out = std::process::Command::new(&cfg.cc)
        .args(cfg.flags())
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .args(cfg.libs())
        .output()
        .expect("test I/O");
    assert!(
        out.status.success(),
        "{}\n{src}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(&exe).output().expect("test I/O");
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(run.stdout).expect("test I/O")
}

/// A C99 hexadecimal float (`%a`: `0x1.8p-1`, `-0x0p+0`).
pub fn hexf(t: &str) -> f64 {
    let (neg, t) = t.strip_prefix('-').map_or((false, t), |r| (true, r));
    let t = t.strip_prefix("0x").expect("test I/O");
    let (mant, exp) = t.split_once('p').expect("test I/O");
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut m = u64::from_str_radix(int, 16).expect("well-formed test data") as f64;
    let mut scale = 1.0 / 16.0;
    for ch in frac.chars() {
        m += ch.to_digit(16).expect("well-formed test data") as f64 * scale;
        scale /= 16.0;
    }
    let x = m * 2f64.powi(exp.parse::<i32>().expect("well-formed test data"));
    if neg { -x } else { x }
}

/// The program with `fuse::fuse` run on its first function, verified
/// before and after.
pub fn fused(p: &Program) -> Program {
    let mut q = p.clone();
    verify(&q).expect("the program verifies");
    fuse::fuse(&mut q.funcs[0]);
    verify(&q).expect("the program verifies after fusion");
    q
}

/// Asserts that the output has `lines` lines, each two results `x | y`
/// that are the same text (a function before and after a pass, printed
/// bit for bit with `%a`).
pub fn assert_halves_agree(got: &str, lines: usize) {
    assert_eq!(got.lines().count(), lines, "{got}");
    for l in got.lines() {
        let (x, y) = l.split_once(" | ").expect("two results per line");
        assert_eq!(x, y, "{got}");
    }
}
