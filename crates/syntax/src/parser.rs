//! The parser: tokens → a surface-form [`Module`].
//!
//! Recursive descent with precedence climbing for the infix operators. The
//! grammar and every choice the specification leaves open are written down
//! in docs/language.md, "Syntax decisions". In short, loosest first:
//! `let`/`if`/`fun` (extend as far right as possible), `||`, `&&`,
//! comparisons (non-associative), `+ -`, `* /`, prefix `-`, application by
//! juxtaposition, postfix `.i` and `a[i]`.
//!
//! Invariants of the output:
//! - surface form (ir.rs): builtins stay `App(Var "sin", ..)`, operators
//!   are `Expr::Prim`, operator sections are `Expr::Section`, literals
//!   without point or exponent are `Expr::Int`; `types` is empty;
//! - operands are added to the arena before the node that uses them;
//! - every node, parameter and definition name has the byte span of its
//!   text (a parenthesized expression's span includes the parentheses);
//! - no expression is nested deeper than `stack::MAX_DEPTH` and no type
//!   deeper than [`MAX_TYPE_DEPTH`]; beyond that the result is
//!   `Error::TooDeep` with the span where the limit was crossed.
//!
//! The first error stops the parse. Every recursive function runs inside
//! `stack::guard`, so deep programs do not overflow the stack.

use crate::error::Error;
use crate::ir::{
    Def, Expr, ExprId, Fixity, Module, Name, Param, Pat, Prim, Size, SourceFile, Span, Ty,
};
use crate::lexer::{Tok, Token, lex};
use crate::stack::{self, MAX_DEPTH};

/// How deeply a type may nest. Types are boxed trees whose derived `Drop`,
/// `Clone`, `PartialEq` and serde impls recurse, and the RON reader of the
/// envelope refuses more than 128 levels of nesting, which a tuple type
/// about 30 deep already reaches. The parser holds types to a depth that
/// all of these handle with room for the types later stages build from
/// them; no program needs more.
pub const MAX_TYPE_DEPTH: usize = 16;

/// Parses a whole program: one or more definitions.
pub fn parse(file: SourceFile) -> Result<Module, Error> {
    let tokens = lex(&file.text)?;
    let mut p = Parser::new(&file.text, tokens);
    p.program()?;
    let mut module = p.module;
    module.file = file;
    Ok(module)
}

/// Parses the text of a type alone, for example `[n]R -> R`.
pub fn parse_ty(text: &str) -> Result<Ty, Error> {
    let tokens = lex(text)?;
    let mut p = Parser::new(text, tokens);
    let ty = p.ty()?;
    p.expect(&Tok::Eof, "end of input after the type")?;
    Ok(ty)
}

struct Parser<'t> {
    /// The text, for quoting tokens in messages.
    text: &'t str,
    tokens: Vec<Token>,
    pos: usize,
    module: Module,
    /// How many nested constructs the parser is inside.
    depth: usize,
    /// How many nested type constructs the parser is inside.
    ty_depth: usize,
    /// Parallel to the arena: the height of each node's subtree.
    heights: Vec<u32>,
}

type Res<T> = Result<T, Error>;

/// The infix operators with their binding powers (`Prim::fixity`).
fn infix(tok: &Tok) -> Option<Prim> {
    Some(match tok {
        Tok::OrOr => Prim::Or,
        Tok::AndAnd => Prim::And,
        Tok::Lt => Prim::Lt,
        Tok::Le => Prim::Le,
        Tok::Gt => Prim::Gt,
        Tok::Ge => Prim::Ge,
        Tok::EqEq => Prim::Eq,
        Tok::Ne => Prim::Ne,
        Tok::Plus => Prim::Add,
        Tok::Minus => Prim::Sub,
        Tok::Star => Prim::Mul,
        Tok::Slash => Prim::Div,
        _ => return None,
    })
}

fn binding_power(op: Prim) -> u8 {
    match op.fixity() {
        Fixity::Infix(bp) => bp,
        _ => u8::MAX,
    }
}

/// The binding power of the comparisons, which do not associate.
const COMPARISON: u8 = 3;

/// Whether a token can start an argument of an application.
fn starts_atom(tok: &Tok) -> bool {
    matches!(
        tok,
        Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Real(_)
            | Tok::Reals(_)
            | Tok::True
            | Tok::False
            | Tok::LParen
            | Tok::LBracket
    )
}

impl<'t> Parser<'t> {
    fn new(text: &'t str, tokens: Vec<Token>) -> Parser<'t> {
        Parser {
            text,
            tokens,
            pos: 0,
            module: Module::default(),
            depth: 0,
            ty_depth: 0,
            heights: Vec::new(),
        }
    }

    // ---- Token helpers -------------------------------------------------

    fn peek(&self) -> &Token {
        // The lexer always ends the tokens with `Eof`, and `bump` never
        // moves past it.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.tokens[(self.pos + k).min(self.tokens.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn at(&self, tok: &Tok) -> bool {
        &self.peek().tok == tok
    }

    fn eat(&mut self, tok: &Tok) -> Option<Span> {
        if self.at(tok) {
            Some(self.bump().span)
        } else {
            None
        }
    }

    /// How a token is named in a message: its text in backticks, or "end
    /// of input".
    fn describe(&self, t: &Token) -> String {
        match (
            &t.tok,
            self.text.get(t.span.lo as usize..t.span.hi as usize),
        ) {
            (Tok::Eof, _) | (_, None) => "end of input".to_string(),
            (_, Some(text)) => format!("`{text}`"),
        }
    }

    /// An error "expected {what}, found {the next token}" at the next token.
    fn unexpected(&self, what: &str) -> Error {
        let t = self.peek();
        Error::Syntax {
            span: t.span,
            message: format!("expected {what}, found {}", self.describe(t)),
        }
    }

    /// Consumes `tok` or fails with "expected `tok` {context}, found ...".
    fn expect(&mut self, tok: &Tok, context: &str) -> Res<Span> {
        match self.eat(tok) {
            Some(span) => Ok(span),
            None if tok == &Tok::Eof => Err(self.unexpected(context)),
            None => Err(self.unexpected(&format!("`{}` {context}", tok.symbol()))),
        }
    }

    fn ident(&mut self, what: &str) -> Res<(Name, Span)> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let name = Name::new(s.clone());
                let span = self.bump().span;
                Ok((name, span))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    // ---- Depth --------------------------------------------------------

    /// Runs `f` one level deeper, refusing to go past `MAX_DEPTH`.
    fn nested<R>(&mut self, f: impl FnOnce(&mut Self) -> Res<R>) -> Res<R> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::TooDeep {
                span: self.peek().span,
                limit: MAX_DEPTH,
            });
        }
        self.depth += 1;
        let res = stack::guard(|| f(self));
        self.depth -= 1;
        res
    }

    /// Adds a node, refusing trees higher than `MAX_DEPTH`.
    fn add(&mut self, expr: Expr, span: Span) -> Res<ExprId> {
        let mut height = 0;
        expr.for_each_child(|c| height = height.max(self.heights[c.index()]));
        let height = height + 1;
        if height as usize > MAX_DEPTH {
            return Err(Error::TooDeep {
                span,
                limit: MAX_DEPTH,
            });
        }
        self.heights.push(height);
        Ok(self.module.add(expr, span))
    }

    fn span_of(&self, id: ExprId) -> Span {
        self.module.span(id)
    }

    // ---- Definitions --------------------------------------------------

    fn program(&mut self) -> Res<()> {
        self.def()?;
        loop {
            match self.peek().tok {
                Tok::Eof => return Ok(()),
                Tok::Def => self.def()?,
                _ => return Err(self.unexpected("`def` or end of input after the definition")),
            }
        }
    }

    fn def(&mut self) -> Res<()> {
        self.expect(&Tok::Def, "at the start of a definition")?;
        let (name, name_span) = self.ident("a definition name after `def`")?;
        let mut params = Vec::new();
        while matches!(self.peek().tok, Tok::Ident(_) | Tok::LParen) {
            self.param_group(&mut params)?;
        }
        let ret = match self.eat(&Tok::Colon) {
            Some(_) => Some(self.ty()?),
            None => None,
        };
        self.expect(&Tok::Eq, "after the header of the definition")?;
        let mut body = self.expr()?;
        if self.at(&Tok::With) {
            body = self.with_rules(&params, body)?;
        }
        self.module.defs.push(Def {
            name,
            name_span,
            params,
            ret,
            body,
        });
        Ok(())
    }

    /// `e with jvp (x.., dx..) -> e1 with vjp (x.., ct) -> e2` (either
    /// rule or both, in either order) after the body `e` of a definition
    /// with `params`: `with_rules (fun params -> e) jvp vjp point`, the
    /// point the tuple of the parameters (the parameter itself when there
    /// is one), a rule not given `()` (docs/language.md, "Derivative
    /// rules").
    fn with_rules(&mut self, params: &[Param], body: ExprId) -> Res<ExprId> {
        let start = self.peek().span;
        if params.is_empty() {
            return Err(Error::Syntax {
                span: start,
                message: "derivative rules need a definition with parameters".into(),
            });
        }
        let body_span = self.span_of(body);
        let mut rules: [Option<ExprId>; 2] = [None, None];
        let mut end = body_span;
        while let Some(with) = self.eat(&Tok::With) {
            let (kind, kind_span) = self.ident("`jvp` or `vjp` after `with`")?;
            let slot = match kind.as_str() {
                "jvp" => 0,
                "vjp" => 1,
                _ => {
                    return Err(Error::Syntax {
                        span: kind_span,
                        message: format!("expected `jvp` or `vjp` after `with`, found `{kind}`"),
                    });
                }
            };
            if rules[slot].is_some() {
                return Err(Error::Syntax {
                    span: kind_span,
                    message: format!("a second `{kind}` rule for this definition"),
                });
            }
            let mut ps = Vec::new();
            if !matches!(self.peek().tok, Tok::Ident(_) | Tok::LParen) {
                return Err(self.unexpected(&format!("the parameters of the `{kind}` rule")));
            }
            while matches!(self.peek().tok, Tok::Ident(_) | Tok::LParen) {
                self.param_group(&mut ps)?;
            }
            self.expect(&Tok::Arrow, "after the parameters of the rule")?;
            let rule_body = self.expr()?;
            end = self.span_of(rule_body);
            let span = with.to(end);
            rules[slot] = Some(self.add(
                Expr::Lambda {
                    params: ps,
                    body: rule_body,
                },
                span,
            )?);
        }
        let lambda = self.add(
            Expr::Lambda {
                params: params.to_vec(),
                body,
            },
            body_span,
        )?;
        let mut args = vec![lambda];
        for rule in rules {
            args.push(match rule {
                Some(r) => r,
                None => self.add(Expr::Tuple(Vec::new()), start)?,
            });
        }
        let mut vars = Vec::new();
        for p in params {
            vars.push(self.add(Expr::Var(p.name.clone()), p.span)?);
        }
        let point = match vars.as_slice() {
            [one] => *one,
            _ => self.add(Expr::Tuple(vars), body_span)?,
        };
        args.push(point);
        self.add(
            Expr::Prim {
                op: Prim::WithRules,
                args,
            },
            body_span.to(end),
        )
    }

    /// One group of parameters: `x`, `(x)`, `(x : T)` or
    /// `(x1 (: T1)?, ..., xk (: Tk)?)`.
    fn param_group(&mut self, out: &mut Vec<Param>) -> Res<()> {
        if self.eat(&Tok::LParen).is_none() {
            let (name, span) = self.ident("a parameter")?;
            out.push(Param {
                name,
                ty: None,
                span,
            });
            return Ok(());
        }
        loop {
            let (name, name_span) = self.ident("a parameter name")?;
            let (ty, span) = match self.eat(&Tok::Colon) {
                Some(_) => {
                    let ty = self.ty()?;
                    let end = self.tokens[self.pos - 1].span;
                    (Some(ty), name_span.to(end))
                }
                None => (None, name_span),
            };
            out.push(Param { name, ty, span });
            if self.eat(&Tok::Comma).is_none() {
                self.expect(&Tok::RParen, "after the parameter")?;
                return Ok(());
            }
        }
    }

    // ---- Expressions --------------------------------------------------

    /// A whole expression (a delimited position: a definition's body, a
    /// parenthesized expression, a `let`'s bound expression, ...).
    fn expr(&mut self) -> Res<ExprId> {
        self.nested(|p| p.binary(1))
    }

    /// Operators binding at least as tightly as `min_bp`.
    fn binary(&mut self, min_bp: u8) -> Res<ExprId> {
        stack::guard(|| {
            let mut lhs = self.prefix()?;
            let mut lhs_is_comparison = false;
            while let Some(op) = infix(&self.peek().tok) {
                let bp = binding_power(op);
                if bp < min_bp {
                    break;
                }
                let op_token = self.bump();
                if bp == COMPARISON && lhs_is_comparison {
                    return Err(Error::Syntax {
                        span: op_token.span,
                        message: format!(
                            "comparisons do not associate: parenthesize the comparison before `{}`",
                            op.symbol()
                        ),
                    });
                }
                let rhs = self.binary(bp + 1)?;
                let span = self.span_of(lhs).to(self.span_of(rhs));
                lhs = self.add(
                    Expr::Prim {
                        op,
                        args: vec![lhs, rhs],
                    },
                    span,
                )?;
                lhs_is_comparison = bp == COMPARISON;
            }
            Ok(lhs)
        })
    }

    /// Prefix `-`, the open forms `let`/`if`/`fun`, or an application.
    fn prefix(&mut self) -> Res<ExprId> {
        match self.peek().tok {
            Tok::Minus => self.nested(|p| {
                let minus = p.bump().span;
                let operand = p.prefix()?;
                let span = minus.to(p.span_of(operand));
                p.add(
                    Expr::Prim {
                        op: Prim::Neg,
                        args: vec![operand],
                    },
                    span,
                )
            }),
            // These recurse through `expr`, which counts the depth.
            Tok::Let => stack::guard(|| self.let_expr()),
            Tok::If => stack::guard(|| self.if_expr()),
            Tok::Fun => stack::guard(|| self.fun_expr()),
            _ => self.application(),
        }
    }

    fn let_expr(&mut self) -> Res<ExprId> {
        let start = self.bump().span;
        let pat = if self.eat(&Tok::LParen).is_some() {
            let mut names = vec![self.ident("a name in the pattern")?.0];
            while self.eat(&Tok::Comma).is_some() {
                names.push(self.ident("a name in the pattern")?.0);
            }
            self.expect(&Tok::RParen, "after the names of the pattern")?;
            if names.len() == 1 {
                Pat::Var(names.remove(0))
            } else {
                Pat::Tuple(names)
            }
        } else {
            Pat::Var(self.ident("a name or a tuple pattern after `let`")?.0)
        };
        let ty = match self.eat(&Tok::Colon) {
            Some(_) => Some(self.ty()?),
            None => None,
        };
        self.expect(&Tok::Eq, "after the pattern of `let`")?;
        let value = self.expr()?;
        self.expect(&Tok::In, "after the bound expression")?;
        let body = self.expr()?;
        let span = start.to(self.span_of(body));
        self.add(
            Expr::Let {
                pat,
                ty,
                value,
                body,
            },
            span,
        )
    }

    fn if_expr(&mut self) -> Res<ExprId> {
        let start = self.bump().span;
        let cond = self.expr()?;
        self.expect(&Tok::Then, "after the condition")?;
        let then_branch = self.expr()?;
        self.expect(&Tok::Else, "after the `then` branch")?;
        let else_branch = self.expr()?;
        let span = start.to(self.span_of(else_branch));
        self.add(
            Expr::If {
                cond,
                then_branch,
                else_branch,
            },
            span,
        )
    }

    fn fun_expr(&mut self) -> Res<ExprId> {
        let start = self.bump().span;
        let mut params = Vec::new();
        if self.at(&Tok::LParen) && self.peek_at(1) == &Tok::RParen {
            // `fun () -> e`: a function of no arguments.
            self.bump();
            self.bump();
        } else {
            if !matches!(self.peek().tok, Tok::Ident(_) | Tok::LParen) {
                return Err(self.unexpected("a parameter after `fun`"));
            }
            while matches!(self.peek().tok, Tok::Ident(_) | Tok::LParen) {
                self.param_group(&mut params)?;
            }
        }
        self.expect(&Tok::Arrow, "after the parameters")?;
        let body = self.expr()?;
        let span = start.to(self.span_of(body));
        self.add(Expr::Lambda { params, body }, span)
    }

    /// `f a1 ... ak`, or a single postfix expression.
    fn application(&mut self) -> Res<ExprId> {
        stack::guard(|| {
            let func = self.postfix()?;
            let mut args = Vec::new();
            while starts_atom(&self.peek().tok) {
                args.push(self.postfix()?);
            }
            match args.last() {
                None => Ok(func),
                Some(&last) => {
                    let span = self.span_of(func).to(self.span_of(last));
                    self.add(Expr::App { func, args }, span)
                }
            }
        })
    }

    /// An atom followed by projections `.i` and indexing `[i]`.
    fn postfix(&mut self) -> Res<ExprId> {
        stack::guard(|| {
            let mut e = self.atom()?;
            loop {
                if self.eat(&Tok::Dot).is_some() {
                    let index = self.tuple_index()?;
                    let span = self.span_of(e).to(self.tokens[self.pos - 1].span);
                    e = self.add(Expr::Proj { tuple: e, index }, span)?;
                } else if self.at(&Tok::LBracket) && !self.peek().space_before {
                    self.bump();
                    let index = self.expr()?;
                    let close = self.expect(&Tok::RBracket, "after the index")?;
                    let span = self.span_of(e).to(close);
                    e = self.add(Expr::Index { array: e, index }, span)?;
                } else {
                    return Ok(e);
                }
            }
        })
    }

    fn tuple_index(&mut self) -> Res<u32> {
        let t = self.peek().clone();
        let Tok::Int(digits) = &t.tok else {
            return Err(self.unexpected("a tuple position (1, 2, ...) after `.`"));
        };
        match digits.parse::<u32>() {
            Ok(0) => Err(Error::Syntax {
                span: t.span,
                message: "tuple positions start at 1".to_string(),
            }),
            Ok(i) => {
                self.bump();
                Ok(i)
            }
            Err(_) => Err(Error::Syntax {
                span: t.span,
                message: format!("tuple position `{digits}` is too large"),
            }),
        }
    }

    fn atom(&mut self) -> Res<ExprId> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Ident(name) => {
                self.bump();
                self.add(Expr::Var(Name::new(name)), t.span)
            }
            Tok::Int(digits) => match digits.parse::<i64>() {
                Ok(n) => {
                    self.bump();
                    self.add(Expr::Int(n), t.span)
                }
                Err(_) => Err(Error::Syntax {
                    span: t.span,
                    message: format!(
                        "integer literal `{digits}` is too large (at most {})",
                        i64::MAX
                    ),
                }),
            },
            Tok::Real(x) => {
                self.bump();
                self.add(Expr::Real(x), t.span)
            }
            Tok::Reals(literal) => {
                self.bump();
                self.add(Expr::Reals(*literal), t.span)
            }
            Tok::True | Tok::False => {
                self.bump();
                self.add(Expr::Bool(t.tok == Tok::True), t.span)
            }
            // These recurse through `expr`, which counts the depth.
            Tok::LParen => stack::guard(|| self.paren()),
            Tok::LBracket => stack::guard(|| self.array()),
            _ => Err(self.unexpected("an expression")),
        }
    }

    /// `()`, `(op)`, `(e)` or `(e1, ..., ek)`.
    fn paren(&mut self) -> Res<ExprId> {
        let open = self.bump().span;
        if let Some(close) = self.eat(&Tok::RParen) {
            return self.add(Expr::Tuple(Vec::new()), open.to(close));
        }
        if let Some(op) = infix(&self.peek().tok)
            && self.peek_at(1) == &Tok::RParen
        {
            self.bump();
            let close = self.bump().span;
            return self.add(Expr::Section(op), open.to(close));
        }
        let first = self.expr()?;
        if let Some(close) = self.eat(&Tok::RParen) {
            // Grouping: the node keeps its id and covers the parentheses.
            self.module.spans[first.index()] = open.to(close);
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(&Tok::Comma).is_some() {
            items.push(self.expr()?);
        }
        let close = self.expect(&Tok::RParen, "or `,` in the parenthesized expression")?;
        self.add(Expr::Tuple(items), open.to(close))
    }

    /// `[]` or `[e1, ..., ek]`.
    fn array(&mut self) -> Res<ExprId> {
        let open = self.bump().span;
        let mut items = Vec::new();
        if let Some(close) = self.eat(&Tok::RBracket) {
            return self.add(Expr::Array(items), open.to(close));
        }
        loop {
            items.push(self.expr()?);
            if self.eat(&Tok::Comma).is_none() {
                break;
            }
        }
        let close = self.expect(&Tok::RBracket, "or `,` in the array")?;
        self.add(Expr::Array(items), open.to(close))
    }

    // ---- Types --------------------------------------------------------

    /// Runs `f` one type level deeper, refusing to go past `MAX_TYPE_DEPTH`.
    fn ty_nested<R>(&mut self, f: impl FnOnce(&mut Self) -> Res<R>) -> Res<R> {
        if self.ty_depth >= MAX_TYPE_DEPTH {
            return Err(Error::TooDeep {
                span: self.peek().span,
                limit: MAX_TYPE_DEPTH,
            });
        }
        self.ty_depth += 1;
        let res = stack::guard(|| f(self));
        self.ty_depth -= 1;
        res
    }

    /// `T`, or `T -> U` (right associative), or `(T1, ..., Tk) -> U`.
    fn ty(&mut self) -> Res<Ty> {
        stack::guard(|| {
            let lhs = self.ty_atom()?;
            if self.eat(&Tok::Arrow).is_none() {
                return Ok(lhs.into_ty());
            }
            let ret = self.ty_nested(Parser::ty)?;
            let params = match lhs {
                TyAtom::One(t) => vec![t],
                TyAtom::Group(items) => items,
            };
            Ok(Ty::Func(params, Box::new(ret)))
        })
    }

    fn ty_atom(&mut self) -> Res<TyAtom> {
        self.ty_nested(|p| {
            let t = p.peek().clone();
            match &t.tok {
                Tok::Ident(name) => {
                    let ty = match name.as_str() {
                        "R" => Ty::Real,
                        "Int" => Ty::Int,
                        "Bool" => Ty::Bool,
                        _ => {
                            return Err(Error::Syntax {
                                span: t.span,
                                message: format!(
                                    "unknown type `{name}`: the types are `R`, `Int`, `Bool`, \
                                     arrays `[n]T`, tuples `(T, U)` and functions `T -> U`"
                                ),
                            });
                        }
                    };
                    p.bump();
                    Ok(TyAtom::One(ty))
                }
                Tok::LBracket => {
                    p.bump();
                    let size = p.size()?;
                    p.expect(&Tok::RBracket, "after the size of the array type")?;
                    let elem = p.ty_atom()?.into_ty();
                    Ok(TyAtom::One(Ty::array(size, elem)))
                }
                Tok::LParen => {
                    p.bump();
                    let mut items = Vec::new();
                    if p.eat(&Tok::RParen).is_some() {
                        return Ok(TyAtom::Group(items));
                    }
                    loop {
                        items.push(p.ty()?);
                        if p.eat(&Tok::Comma).is_none() {
                            break;
                        }
                    }
                    p.expect(&Tok::RParen, "or `,` in the parenthesized type")?;
                    if items.len() == 1 {
                        Ok(TyAtom::One(items.remove(0)))
                    } else {
                        Ok(TyAtom::Group(items))
                    }
                }
                _ => Err(p.unexpected("a type")),
            }
        })
    }

    /// `n`, `n+k`, `n-k`, a literal, or `_`.
    fn size(&mut self) -> Res<Size> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Ident(name) if name == "_" => {
                self.bump();
                Ok(Size::Dyn)
            }
            Tok::Ident(name) => {
                self.bump();
                let sign: i128 = match self.peek().tok {
                    Tok::Plus => 1,
                    Tok::Minus => -1,
                    _ => return Ok(Size::Var(Name::new(name.clone()), 0)),
                };
                self.bump();
                let k = self.peek().clone();
                let Tok::Int(digits) = &k.tok else {
                    return Err(self.unexpected("a number after the sign in the size"));
                };
                let offset = digits
                    .parse::<i128>()
                    .ok()
                    .and_then(|v| i64::try_from(sign * v).ok());
                let Some(offset) = offset else {
                    return Err(Error::Syntax {
                        span: k.span,
                        message: format!("size offset `{digits}` is too large"),
                    });
                };
                self.bump();
                Ok(Size::Var(Name::new(name.clone()), offset))
            }
            Tok::Int(digits) => match digits.parse::<u64>() {
                Ok(n) => {
                    self.bump();
                    Ok(Size::Lit(n))
                }
                Err(_) => Err(Error::Syntax {
                    span: t.span,
                    message: format!("size `{digits}` is too large"),
                }),
            },
            _ => Err(self.unexpected("a size (a name, a number or `_`)")),
        }
    }
}

/// A type, or a parenthesized list of k != 1 types that is either a tuple
/// type or, before `->`, the parameters of a k-ary function.
enum TyAtom {
    One(Ty),
    Group(Vec<Ty>),
}

impl TyAtom {
    fn into_ty(self) -> Ty {
        match self {
            TyAtom::One(t) => t,
            TyAtom::Group(items) => Ty::Tuple(items),
        }
    }
}
