//! A program loaded once, and the one place a [`Request`] becomes passes
//! and artefacts.

use crate::compiled::{Artefact, Compiled, Plan, Pullback};
use crate::diag::{Error, Result};
use crate::inputs::Inputs;
use crate::load::{self, Ir};
use crate::passes::{self, Context, Flow, Pass};
use crate::request::{Backend, JacobianMode, Kind, Request, Verify, Wrt};
use std::path::Path;
use syntax::{Def, Module};

/// A program in any IR, loaded (parsed, typed or read and verified) once.
#[derive(Debug, Clone)]
pub struct Program {
    ir: Ir,
}

/// One stage boundary of the reverse-mode pipeline, as `pipeline --dump`
/// writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageDump {
    /// The stage that produced it: `parse`, `unf`, `reverse`,
    /// `unf-inverse`, `optimize`.
    pub stage: &'static str,
    /// The file name `pipeline --dump` gives it (`20.source-unf.ron`).
    pub file: &'static str,
    /// The IR's envelope name.
    pub ir: &'static str,
    /// The module in the paper's notation (the printer of its IR).
    pub text: String,
    /// The module as its RON envelope.
    pub ron: String,
}

impl Program {
    /// Program text (the `.ad` language); `name` is the file name in
    /// diagnostics.
    pub fn from_text(name: &str, text: impl Into<String>) -> Result<Program> {
        Ok(Program {
            ir: Ir::Source(load::compile_text(name, text.into())?),
        })
    }

    /// A `.ad` file, or any IR file (`source`, `target`, `source-unf`,
    /// `target-unf` RON), verified on reading.
    pub fn load(path: impl AsRef<Path>) -> Result<Program> {
        Ok(Program {
            ir: load::load(path.as_ref())?,
        })
    }

    /// A program already in memory (a `source` module in core form).
    pub fn from_ir(ir: Ir) -> Program {
        Program { ir }
    }

    /// The program as loaded.
    pub fn ir(&self) -> &Ir {
        &self.ir
    }

    /// The term-language module (Source or Target).
    pub fn module(&self) -> Result<&Module> {
        self.ir.module("this request")
    }

    /// The entry definition: `name`, or the last definition.
    pub fn entry(&self, name: Option<&str>) -> Result<&Def> {
        match &self.ir {
            Ir::Unf(u) => {
                if name.is_some_and(|n| n != u.entry.as_str()) {
                    return Err(Error::user(format!(
                        "a UNF file holds one definition, `{}`",
                        u.entry
                    )));
                }
                u.entry_def().ok_or_else(|| {
                    Error::internal(format!(
                        "a verified UNF file without its entry `{}`",
                        u.entry
                    ))
                })
            }
            Ir::Source(m) | Ir::Target(m) => entry(m, name),
        }
    }

    /// The inputs of the `-- at` lines of the program's text.
    pub fn default_inputs(&self) -> Inputs<'static> {
        let text = match &self.ir {
            Ir::Source(m) | Ir::Target(m) => &m.file.text,
            Ir::Unf(u) => &u.source.file.text,
        };
        Inputs::from_literals(semantics::Expectations::parse(text).at)
    }

    /// The Source module of the definition `entry` (default: the last)
    /// alone, its calls inlined and its derivative constructs expanded
    /// (what every route differentiates), verified at the boundary;
    /// `command` names the caller in the error for a program that is not
    /// Source.
    pub fn expanded(&self, command: &str, entry: Option<&str>) -> Result<Module> {
        self.expand(
            command,
            entry,
            Verify::Boundaries,
            &forward::Config::default(),
        )
    }

    /// The Source module of a derivative request: its entry alone, inlined,
    /// with its derivative constructs expanded in the request's forward mode.
    pub(crate) fn source(&self, req: &Request) -> Result<Module> {
        self.expand(
            req.kind.name(),
            req.entry.as_deref(),
            req.verify,
            &req.forward,
        )
    }

    fn expand(
        &self,
        command: &str,
        entry_name: Option<&str>,
        verify: Verify,
        forward: &forward::Config,
    ) -> Result<Module> {
        match &self.ir {
            Ir::Source(m) => {
                let cx = Context {
                    verify,
                    forward: forward.clone(),
                    ..Context::new(entry(m, entry_name)?.name.as_str())
                };
                passes::run(&[Pass::Inline, Pass::Expand], Flow::Source(m.clone()), &cx)?
                    .into_module()
            }
            other => Err(Error::user(format!(
                "`{command}` differentiates a Source program (a `.ad` file or a `source` file), not a `{}` one",
                other.ir_name()
            ))),
        }
    }

    /// Builds what `req` asks for: the derivative program(s) through the
    /// pass list of its route, verified by its policy, optimized if asked,
    /// and built for its backend.
    pub fn compile(&self, req: &Request) -> Result<Compiled> {
        let c = match &req.backend {
            Backend::Eval => None,
            Backend::C(cfg) => Some(cfg),
        };
        if req.kind == Kind::Value {
            return self.compile_value(req, c);
        }
        let m = self.source(req)?;
        let def = entry(&m, req.entry.as_deref())?.clone();
        let wrt = req.wrt.resolve(&def)?;
        let cx = Context {
            entry: def.name.to_string(),
            wrt: req.wrt.for_crates(&def)?,
            verify: req.verify,
            forward: req.forward.clone(),
            checkpoint: req.checkpoint,
        };
        let opt = |mut list: Vec<Pass>| {
            if req.optimize {
                list.push(Pass::Optimize);
            }
            list
        };
        let build = |list: Vec<Pass>, suffix: &str| -> Result<Artefact> {
            let out = passes::run(&list, Flow::Source(m.clone()), &cx)?.into_module()?;
            Artefact::new(out, format!("{}_{suffix}", def.name), c)
        };
        let plan = match req.kind {
            Kind::Value => unreachable_value()?,
            Kind::Grad | Kind::ValueAndGrad => Plan::Gradient(build(
                passes::gradient_passes(req.route, req.optimize),
                "grad",
            )?),
            Kind::Jvp => Plan::Jvp(build(opt(vec![Pass::Jvp]), "jvp")?),
            Kind::Hessian => Plan::Hessian(build(opt(vec![Pass::Hessian]), "hessian")?),
            Kind::Vjp => Plan::Vjp(self.pullback(&m, &def, req, c)?),
            Kind::Jacobian { mode } => {
                let forward = || build(opt(vec![Pass::ForwardJacobian]), "jacobian");
                match mode {
                    JacobianMode::Forward => Plan::ForwardJacobian(forward()?),
                    JacobianMode::Reverse => {
                        Plan::ReverseJacobian(self.pullback(&m, &def, req, c)?)
                    }
                    JacobianMode::Auto => Plan::AutoJacobian {
                        forward: forward()?,
                        reverse: self.pullback(&m, &def, req, c)?,
                    },
                }
            }
        };
        Ok(Compiled {
            entry: def,
            kind: req.kind,
            wrt,
            plan,
        })
    }

    fn compile_value(&self, req: &Request, c: Option<&codegen::Config>) -> Result<Compiled> {
        if let Ir::Unf(u) = &self.ir {
            if c.is_some() {
                return Err(Error::user(
                    "the C backend runs a term-language program (`.ad`, `source` or `target`), not a UNF module",
                ));
            }
            let def = self.entry(req.entry.as_deref())?.clone();
            return Ok(Compiled {
                entry: def,
                kind: Kind::Value,
                wrt: Vec::new(),
                plan: Plan::UnfValue(u.clone()),
            });
        }
        let m = self.module()?;
        let cx = Context {
            verify: req.verify,
            forward: req.forward.clone(),
            ..Context::new(entry(m, req.entry.as_deref())?.name.as_str())
        };
        let flow = match &self.ir {
            Ir::Target(m) => Flow::Target(m.clone()),
            _ => Flow::Source(m.clone()),
        };
        let m = passes::run(&[Pass::Inline, Pass::Expand], flow, &cx)?.into_module()?;
        let def = entry(&m, req.entry.as_deref())?.clone();
        let name = def.name.to_string();
        Ok(Compiled {
            entry: def,
            kind: Kind::Value,
            wrt: Vec::new(),
            plan: Plan::Value(Artefact::new(m, name, c)?),
        })
    }

    /// The primal and the gradient program of the entry's pullback
    /// (`pullback.rs`), by the request's route.
    fn pullback(
        &self,
        m: &Module,
        def: &Def,
        req: &Request,
        c: Option<&codegen::Config>,
    ) -> Result<Pullback> {
        // Written after the program as loaded (every definition, calls kept),
        // so the pullback's name is fresh among all of them.
        let (pm, pname) = crate::pullback::program(self.module()?, def)?;
        let cx = Context {
            entry: pname.clone(),
            wrt: Some(req.wrt.resolve(def)?),
            verify: req.verify,
            forward: req.forward.clone(),
            checkpoint: req.checkpoint,
        };
        let mut list = vec![Pass::Inline, Pass::Expand];
        list.extend(passes::gradient_passes(req.route, req.optimize));
        let g = passes::run(&list, Flow::Source(pm), &cx)?.into_module()?;
        Ok(Pullback {
            primal: Artefact::new(m.clone(), def.name.to_string(), c)?,
            grad: Artefact::new(g, format!("{pname}_grad"), c)?,
        })
    }

    /// Every stage boundary of the reverse-mode pipeline (UNF route,
    /// optimized) for `entry` and `wrt`: Source, Source UNF, Target UNF,
    /// Target and optimized Target, each printed and as RON.
    pub fn stages(&self, entry_name: Option<&str>, wrt: &Wrt) -> Result<Vec<StageDump>> {
        let m = self.expand(
            Kind::Grad.name(),
            entry_name,
            Verify::Boundaries,
            &forward::Config::default(),
        )?;
        let Ir::Source(parsed) = &self.ir else {
            return Err(Error::internal("a Source request without a Source module"));
        };
        let def = entry(&m, entry_name)?.clone();
        let cx = Context {
            wrt: wrt.for_crates(&def)?,
            verify: Verify::Boundaries,
            ..Context::new(def.name.as_str())
        };
        let term = |stage, file: &'static str, ir, m: &Module| -> Result<StageDump> {
            Ok(StageDump {
                stage,
                file,
                ir,
                text: syntax::print::module(m),
                ron: syntax::to_ron(ir, syntax::FORMAT_VERSION, m)
                    .map_err(|e| crate::diag::unwritable(file, e))?,
            })
        };
        let unf_dump = |stage, file: &'static str, m: &unf::Module| -> Result<StageDump> {
            Ok(StageDump {
                stage,
                file,
                ir: m.kind.ir_name(),
                text: unf::print(m),
                ron: unf::to_ron(m).map_err(|e| crate::diag::unwritable(file, e))?,
            })
        };
        let mut out = vec![term("parse", "10.source.ron", syntax::SOURCE_IR, parsed)?];
        let fo = passes::run(&[Pass::FirstOrder, Pass::Lower], Flow::Source(m), &cx)?;
        let Flow::SourceUnf(s, checked) = fo else {
            return Err(Error::internal("lowering did not give a Source UNF module"));
        };
        out.push(unf_dump("unf", "20.source-unf.ron", &s)?);
        let (t, checked) = match passes::run(&[Pass::Reverse], Flow::SourceUnf(s, checked), &cx)? {
            Flow::TargetUnf(t, checked) => (t, checked),
            _ => return Err(Error::internal("D_rho did not give a Target UNF module")),
        };
        out.push(unf_dump("reverse", "30.target-unf.ron", &t)?);
        let raised =
            passes::run(&[Pass::Raise], Flow::TargetUnf(t, checked), &cx)?.into_module()?;
        out.push(term(
            "unf-inverse",
            "40.target.ron",
            syntax::TARGET_IR,
            &raised,
        )?);
        let opt = passes::run(&[Pass::Optimize], Flow::Target(raised), &cx)?.into_module()?;
        out.push(term("optimize", "50.opt.ron", syntax::TARGET_IR, &opt)?);
        Ok(out)
    }
}

fn unreachable_value() -> Result<Plan> {
    Err(Error::internal(
        "a value request reached the derivative planner",
    ))
}

/// The entry definition of a module: `name`, or the last definition.
pub fn entry<'m>(m: &'m Module, name: Option<&str>) -> Result<&'m Def> {
    m.entry(name).ok_or_else(|| match name {
        Some(n) => {
            let defs: Vec<_> = m.defs.iter().map(|d| format!("`{}`", d.name)).collect();
            Error::user(format!(
                "no definition named `{n}` (the program defines {})",
                defs.join(", ")
            ))
        }
        None => Error::user("the program has no definition"),
    })
}
