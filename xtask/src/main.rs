//! `cargo xtask`: the user's command line.
//!
//! Every subcommand is a thin shell over the library crates: it reads
//! files, calls the same pure stage functions the tests call, verifies
//! what goes in and out, and writes files. Exit status: 0 on success, 1
//! for any error in the user's input (with a rendered diagnostic on
//! stderr), 2 for an internal error (a stage's output failed its verifier).

mod bench;
mod checkpoint_bench;
mod derive;
mod diag;
mod hist_bench;
mod inspect;
mod load;
mod native;
mod pipeline;
mod shapes;

use clap::{Parser, Subcommand};
use diag::CliError;

/// mimalloc instead of the system allocator: the stages build and drop
/// millions of small nodes and names on long programs, and with glibc's
/// allocator that was a third of their time (docs/scale.md). Wrapped in
/// `semantics::memory::Counting` so that the budget of `ADREV_MEMORY_LIMIT`
/// counts the heap the run holds, the same on every run (resident size is
/// not: docs/semantics.md, "Memory").
#[global_allocator]
static GLOBAL: semantics::memory::Counting<mimalloc::MiMalloc> =
    semantics::memory::Counting(mimalloc::MiMalloc);
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Differentiate array programs: run the stages of the compiler"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and type a `.ad` program; write the typed Source program as RON.
    Parse {
        /// The program text.
        file: PathBuf,
        /// Where to write the Source RON file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Type-check a program (text or IR file) and print its entry's type.
    Check {
        /// A `.ad` program or an IR file.
        file: PathBuf,
        /// The definition to report (default: the last).
        #[arg(long)]
        entry: Option<String>,
    },
    /// Print any IR file in readable notation.
    Print {
        /// An IR file (`.ron`) or a `.ad` program.
        file: PathBuf,
    },
    /// Evaluate a program's entry at the given inputs.
    Eval {
        #[command(flatten)]
        program: derive::ProgramArgs,
        #[command(flatten)]
        backend: native::BackendArgs,
    },
    /// Print the gradient of a real-valued entry: `value = ...`, then
    /// `grad PARAM = ...` for each parameter.
    Grad {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The parameters to differentiate with respect to, comma-separated
        /// (default: all, in order).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// The route that computes the gradient.
        #[arg(long, value_enum, default_value = "unf")]
        via: derive::Via,
        #[command(flatten)]
        backend: native::BackendArgs,
        /// Run the route's raw output, without partial evaluation and the
        /// optimizations of Fig. 12.
        #[arg(long)]
        no_opt: bool,
        /// How the UNF route writes a loop's backward pass: `sqrt` keeps
        /// √n checkpoints instead of every state (docs/derivatives.md).
        #[arg(long, value_enum, default_value = "off")]
        checkpoint: derive::CheckpointVia,
    },
    /// Print the value and the vector-Jacobian product of an entry of any
    /// result type (reverse mode): `value = ...`, then `vjp PARAM = ...`.
    Vjp {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// The cotangent, a value shaped like the entry's result.
        #[arg(long, value_name = "VALUE")]
        cotangent: String,
        /// The reverse-mode route.
        #[arg(long, value_enum, default_value = "unf")]
        via: derive::Via,
        #[command(flatten)]
        backend: native::BackendArgs,
    },
    /// Print the value and the directional derivative (forward mode).
    Jvp {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The tangent of each parameter, `NAME=VALUE` (every parameter needs one).
        #[arg(long = "tangent", value_name = "NAME=VALUE")]
        tangent: Vec<String>,
        #[command(flatten)]
        backend: native::BackendArgs,
    },
    /// Print the Jacobian of an entry: forward mode (vectorised seeds),
    /// reverse mode (one pass per output real), or without `--via` the
    /// cheaper one for the sizes at hand, named on a last line `mode = ...`.
    Jacobian {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// Forward or reverse mode (default: the cheaper for the sizes).
        #[arg(long, value_enum)]
        via: Option<derive::JacobianVia>,
        #[command(flatten)]
        backend: native::BackendArgs,
    },
    /// Print the gradient and the Hessian of a real-valued entry (forward over forward).
    Hessian {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
    },
    /// Stage: Source → Source UNF (the arrow UNF, Fig. 9).
    Unf {
        /// A `.ad` program or a Source IR file.
        input: PathBuf,
        /// Where to write the Source UNF RON file.
        #[arg(short, long)]
        output: PathBuf,
        /// The definition to transform (default: the last).
        #[arg(long)]
        entry: Option<String>,
    },
    /// Stage: Source UNF → Target UNF (reverse differentiation D_rho, Fig. 8).
    Reverse {
        /// A Source UNF file.
        input: PathBuf,
        /// Where to write the Target UNF RON file.
        #[arg(short, long)]
        output: PathBuf,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
    },
    /// Stage: Target UNF → Target (the arrow UNF^-1, Fig. 10).
    UnfInverse {
        /// A Target UNF file.
        input: PathBuf,
        /// Where to write the Target RON file.
        #[arg(short, long)]
        output: PathBuf,
        /// How a loop's backward pass is written: `sqrt` keeps √n
        /// checkpoints instead of every state (docs/derivatives.md).
        #[arg(long, value_enum, default_value = "off")]
        checkpoint: derive::CheckpointVia,
    },
    /// Run parse → unf → reverse → unf-inverse → optimize, writing every boundary
    /// file into DIR.
    Pipeline {
        /// The program text.
        file: PathBuf,
        /// The directory for the boundary files.
        #[arg(long, value_name = "DIR")]
        dump: PathBuf,
        /// Run `COMMAND IN OUT` instead of the built-in STAGE (repeatable);
        /// its output is verified like the built-in stage's.
        #[arg(long, value_name = "STAGE=COMMAND")]
        replace: Vec<String>,
        /// The definition to differentiate (default: the last).
        #[arg(long)]
        entry: Option<String>,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
    },
    /// Run one built-in stage with positional paths, `STAGE IN OUT`: the
    /// calling convention of `pipeline --replace`, so a replacement can be
    /// a script that calls back into the built-in stages.
    Stage {
        /// parse, unf, reverse, unf-inverse or optimize.
        stage: String,
        /// The input file.
        input: PathBuf,
        /// The output file.
        output: PathBuf,
    },
    /// adrev as a GradBench tool: the protocol on stdin and stdout
    /// (docs/gradbench.md); the `adrev-gradbench` binary.
    Gradbench {
        /// The C compiler's optimisation level, 0 to 3 (default 3).
        #[arg(long)]
        opt_level: Option<String>,
        /// Build every program with AddressSanitizer and
        /// UndefinedBehaviorSanitizer (the debug mode; docs/gradbench.md).
        #[arg(long)]
        sanitize: bool,
    },
    /// Benchmarks, reported as tables and ratios (never asserted): `all`
    /// (the default) runs `codegen`, `jacobian` and `scale`; `gradbench`
    /// (GradBench's evals through the tool; writes its section of
    /// docs/performance.md unless `--quick` or `--no-docs`) runs alone.
    Bench {
        /// `all`, `codegen` (generated C against the hand-written baseline,
        /// JAX and PyTorch; writes docs/performance.md and .svg unless
        /// `--quick` or `--no-docs`), `jacobian` (dF~'s vectorised Jacobian
        /// against n forward passes), `scale` (every stage on long `let`
        /// chains, then `shapes`), `chain` (text to optimized gradient of
        /// the same chains in memory, no files), `shapes` (the front end on nested and
        /// flat array literals, chains of definitions and many definitions)
        /// or `checkpoint` (a long loop's gradient with every state stored
        /// and with √n checkpoints: memory and time, evaluator and C),
        /// or `hist` (the gradient of scatter and the histograms at doubling
        /// sizes: counted cost and C time).
        #[arg(default_value = "all")]
        which: String,
        /// Small sizes, one round, few repetitions; docs are not written.
        #[arg(long)]
        quick: bool,
        /// Chain lengths for `scale` (default 2500,5000,10000,20000; quick
        /// 1000,2000), loop lengths for `checkpoint` (default
        /// 1000000,10000000; quick 10000,100000).
        #[arg(long, value_delimiter = ',')]
        sizes: Option<Vec<usize>>,
        /// Runs of each size for `scale`; the least time of each step is
        /// reported (default 1).
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Array lengths for `codegen` (default 1000000,10000000; quick 10000).
        #[arg(long, value_delimiter = ',')]
        lengths: Option<Vec<usize>>,
        /// GMM's number of points for `codegen` (default 10000; quick 1000).
        #[arg(long)]
        gmm_n: Option<usize>,
        /// Only these `codegen` kernels (sum, prod, dot, sinexp, logsumexp,
        /// gmm, kmeans, det, ba), these `gradbench` evals (lse, llsq, ode,
        /// det, gmm, kmeans, lstm, ba, ht), or the `shapes` whose name
        /// contains one of these (nested array, constant, flat, chain,
        /// independent).
        #[arg(long, value_delimiter = ',')]
        kernels: Vec<String>,
        /// Timed calls per process for `codegen` (default 11; quick 5).
        #[arg(long)]
        reps: Option<usize>,
        /// Rounds of `codegen` (each tool once per round; default 3; quick 1).
        #[arg(long)]
        rounds: Option<usize>,
        /// A Python with jax and/or torch for `codegen` (default: $ADREV_PEERS_PYTHON).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Build generated and baseline code with -march=native.
        #[arg(long)]
        native: bool,
        /// Do not write docs/performance.md and docs/performance.svg.
        #[arg(long)]
        no_docs: bool,
        /// Jacobian sizes for `jacobian` (default 8,16,32,64; quick 8,16).
        #[arg(long, value_delimiter = ',')]
        jacobian_sizes: Option<Vec<usize>>,
    },
    /// Stage: Source → Target by the direct reverse macro (Fig. 5).
    ReverseDirect {
        /// A Source IR file (or a `.ad` program).
        input: PathBuf,
        /// Where to write the Target RON file.
        #[arg(short, long)]
        output: PathBuf,
        /// The definition to differentiate (default: the last).
        #[arg(long)]
        entry: Option<String>,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// Test only: break the direct macro's output on purpose (drop one
        /// entry of its type table) before it is verified, to show a pass's
        /// verifier failure exiting with status 2 (xtask/tests/errors.rs).
        #[arg(long, hide = true)]
        break_output: bool,
    },
    /// Run every gradient route on one program at one point (and nearby
    /// points), print their gradients and largest relative differences, and
    /// exit 1 where they disagree (JAX's check_grads).
    CheckGrad {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// The parameters to differentiate with respect to (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// How many random points near the given one to check too.
        #[arg(long, default_value_t = 3)]
        nearby: usize,
        /// The seed of the nearby points.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Also build the optimized gradient program with the C backend
        /// (the system C compiler) and run it at every point.
        #[arg(long)]
        c: bool,
        /// Test only: differentiate with the deliberately broken forward
        /// macro of Exercise 182.8, to show a disagreement being reported.
        #[arg(long, hide = true)]
        mutant_forward: bool,
        #[command(flatten)]
        backend: native::BackendArgs,
    },
    /// Differential fuzzing: random programs through every route; stops at
    /// the first disagreement and prints it as a fixture.
    FuzzDiff {
        /// How many programs to generate.
        #[arg(long, default_value_t = 1000)]
        cases: u64,
        /// The seed of the run.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Also run the C backend (source and gradient program, against
        /// the evaluator) on one case in N; 0: never. Each such case
        /// builds two programs with the system C compiler.
        #[arg(long, value_name = "N", default_value_t = 200)]
        c_every: u64,
        /// Go on after a disagreement (each one shrunk and printed)
        /// instead of stopping at the first.
        #[arg(long)]
        keep_going: bool,
    },
    /// Write the C source (and header) of a program: `OUT.c`, `OUT.h`.
    Codegen {
        /// A Target or Source IR file, or a `.ad` program.
        input: PathBuf,
        /// The C file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Also write the loop IR the C is printed from (RON; `print`
        /// shows it in the IR's notation).
        #[arg(long, value_name = "FILE")]
        loop_ir: Option<PathBuf>,
        #[command(flatten)]
        options: native::COptions,
    },
    /// Generate C for a program (or its gradient) and build the driver and
    /// the shared library into DIR with the system C compiler.
    Compile {
        /// A `.ad` program or a Source IR file.
        file: PathBuf,
        /// Compile the gradient program `grad` runs (reverse mode through
        /// UNF, optimized).
        #[arg(long)]
        grad: bool,
        /// The definition to differentiate (default: the last).
        #[arg(long)]
        entry: Option<String>,
        /// With `--grad`: the parameters to differentiate (default: all).
        #[arg(long, value_name = "A,B,...")]
        wrt: Option<String>,
        /// The directory for the C files and the binaries.
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        options: native::COptions,
    },
    /// Stage: Target → Target by partial evaluation and Fig. 12.
    Optimize {
        /// A Target IR file.
        input: PathBuf,
        /// Where to write the optimized Target RON file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// List the optimizer's rewrite rules.
    Rules,
    /// The cost (Fig. 11) of a program and of its gradient, p = NAO(e),
    /// their ratio and Theorem 5.4's bound 4·3^p.
    Cost {
        #[command(flatten)]
        program: derive::ProgramArgs,
        /// Cost the unoptimized gradient instead.
        #[arg(long)]
        no_opt: bool,
        /// Cost the gradient with loops checkpointed (`sqrt`): what the
        /// recomputation adds (docs/cost.md).
        #[arg(long, value_enum, default_value = "off")]
        checkpoint: derive::CheckpointVia,
    },
    /// Rewrite every snapshot (fixtures' stage boundaries, diagnostics) from
    /// what the code produces now; review the result with `git diff`.
    Bless,
    #[command(flatten)]
    Inspect(inspect::Command),
    /// Stage: Source → Target by the forward macro; the output's entry takes
    /// the parameters, then one tangent per parameter, and returns
    /// `(value, tangent)`.
    Forward {
        /// A Source IR file (or a `.ad` program).
        input: PathBuf,
        /// Where to write the Target RON file.
        #[arg(short, long)]
        output: PathBuf,
        /// The definition to transform (default: the last).
        #[arg(long)]
        entry: Option<String>,
    },
}

fn main() -> ExitCode {
    // A mistyped command or flag is the user's error: exit 1 like every
    // other (clap's own default, 2, is this program's internal error);
    // `--help` and `--version` print and exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    quiet_on_closed_stdout();
    // Programs nest deeply; every pass guards its recursion, but start on
    // a roomy stack anyway so shallow frames never hit the guard's limit.
    let result = std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || run(cli.command))
        .map_err(|e| CliError::Internal(format!("cannot start the worker thread: {e}\n")))
        .and_then(|handle| {
            handle.join().unwrap_or_else(|_| {
                Err(CliError::Internal("the compiler panicked (a bug)\n".into()))
            })
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::User(msg)) => {
            eprint!("{msg}");
            ExitCode::from(1)
        }
        Err(CliError::Internal(msg)) => {
            eprint!("internal error: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::Parse { file, output } => parse(&file, &output),
        Command::Check { file, entry } => check(&file, entry.as_deref()),
        Command::Print { file } => print(&file),
        Command::Eval { program, backend } => derive::eval(&derive::Common {
            program: &program,
            wrt: None,
            backend,
        }),
        Command::Bless => bless(),
        Command::Optimize { input, output } => pipeline::run_stage(
            pipeline::Stage::Optimize,
            &input,
            &output,
            &pipeline::Options::default(),
        ),
        Command::Rules => {
            for r in optimize::rules() {
                println!("{:<18} {:<22} {}", r.name, r.group, r.description);
            }
            Ok(())
        }
        Command::Cost {
            program,
            no_opt,
            checkpoint,
        } => derive::cost(
            &derive::Common {
                program: &program,
                wrt: None,
                backend: native::BackendArgs::default(),
            },
            no_opt,
            checkpoint,
        ),
        Command::Codegen {
            input,
            output,
            loop_ir,
            options,
        } => native::codegen_cmd(&input, &output, loop_ir.as_deref(), options),
        Command::Compile {
            file,
            grad,
            entry,
            wrt,
            output,
            options,
        } => native::compile(
            &file,
            grad,
            entry.as_deref(),
            wrt.as_deref(),
            &output,
            options,
        ),
        Command::ReverseDirect {
            input,
            output,
            entry,
            wrt,
            break_output,
        } => source_stage(
            &input,
            &output,
            entry.as_deref(),
            wrt.as_deref(),
            &[adrev::passes::Pass::FirstOrder, adrev::passes::Pass::Direct],
            break_output,
        ),
        Command::CheckGrad {
            program,
            wrt,
            nearby,
            seed,
            c,
            mutant_forward,
            backend,
        } => derive::check_grad(
            &derive::Common {
                program: &program,
                wrt: wrt.as_deref(),
                backend,
            },
            difftest::CheckConfig {
                nearby,
                seed,
                c: c.then(codegen::Config::default),
                mutant_forward,
                ..difftest::CheckConfig::default()
            },
        ),
        Command::FuzzDiff {
            cases,
            seed,
            c_every,
            keep_going,
        } => fuzz_diff(&difftest::FuzzConfig {
            cases,
            seed,
            c_every,
            keep_going,
        }),
        Command::Gradbench {
            opt_level,
            sanitize,
        } => {
            let config =
                gradbench::tool_config(opt_level.as_deref(), sanitize).map_err(CliError::user)?;
            gradbench::serve(std::io::stdin().lock(), std::io::stdout().lock(), config)
                .map_err(CliError::user)
        }
        Command::Bench {
            which,
            quick,
            sizes,
            repeat,
            lengths,
            gmm_n,
            kernels,
            reps,
            rounds,
            python,
            native,
            no_docs,
            jacobian_sizes,
        } => {
            let checkpoint_sizes = sizes.clone().unwrap_or_else(|| {
                if quick {
                    vec![10_000, 100_000]
                } else {
                    vec![1_000_000, 10_000_000]
                }
            });
            let scale_sizes = sizes.unwrap_or_else(|| {
                if quick {
                    vec![1000, 2000]
                } else {
                    vec![2500, 5000, 10_000, 20_000]
                }
            });
            let jac = jacobian_sizes.unwrap_or_else(|| {
                if quick {
                    vec![8, 16]
                } else {
                    vec![8, 16, 32, 64]
                }
            });
            let opts = bench::CodegenOpts {
                quick,
                lengths,
                gmm_n,
                kernels: kernels.clone(),
                reps,
                rounds,
                python,
                native,
                write_docs: !quick && !no_docs,
            };
            match which.as_str() {
                "all" => bench::codegen(&opts)
                    .and_then(|()| bench::jacobian(&jac))
                    .and_then(|()| bench::scale(&scale_sizes, repeat)),
                "codegen" => bench::codegen(&opts),
                "jacobian" => bench::jacobian(&jac),
                "scale" => bench::scale(&scale_sizes, repeat)
                    .and_then(|()| shapes::shapes(quick, &kernels)),
                "chain" => bench::chain(&scale_sizes, repeat),
                "shapes" => shapes::shapes(quick, &kernels),
                "checkpoint" => checkpoint_bench::checkpoint(&checkpoint_sizes),
                "hist" => hist_bench::hist(quick),
                "gradbench" => bench::gradbench(quick, &kernels, !quick && !no_docs),
                other => Err(CliError::user(format!(
                    "no benchmark named `{other}` (try `all`, `codegen`, `jacobian`, `scale`, `chain`, `shapes`, `checkpoint`, `hist` or `gradbench`)"
                ))),
            }
        }
        Command::Stage {
            stage,
            input,
            output,
        } => {
            let (stage, _) = pipeline::parse_replacement(&format!("{stage}=builtin"))?;
            pipeline::run_stage(stage, &input, &output, &pipeline::Options::default())
        }
        Command::Unf {
            input,
            output,
            entry,
        } => pipeline::run_stage(
            pipeline::Stage::Unf,
            &input,
            &output,
            &pipeline::Options {
                entry,
                ..pipeline::Options::default()
            },
        ),
        Command::Reverse { input, output, wrt } => pipeline::run_stage(
            pipeline::Stage::Reverse,
            &input,
            &output,
            &pipeline::Options {
                wrt,
                ..pipeline::Options::default()
            },
        ),
        Command::UnfInverse {
            input,
            output,
            checkpoint,
        } => pipeline::run_stage(
            pipeline::Stage::UnfInverse,
            &input,
            &output,
            &pipeline::Options {
                checkpoint: checkpoint.scheme(),
                ..pipeline::Options::default()
            },
        ),
        Command::Pipeline {
            file,
            dump,
            replace,
            entry,
            wrt,
        } => pipeline::pipeline(
            &file,
            &dump,
            &replace,
            &pipeline::Options {
                entry,
                wrt,
                ..pipeline::Options::default()
            },
        ),
        Command::Grad {
            program,
            wrt,
            via,
            backend,
            no_opt,
            checkpoint,
        } => derive::grad(
            &derive::Common {
                program: &program,
                wrt: wrt.as_deref(),
                backend,
            },
            via,
            no_opt,
            checkpoint,
        ),
        Command::Vjp {
            program,
            wrt,
            cotangent,
            via,
            backend,
        } => derive::vjp(
            &derive::Common {
                program: &program,
                wrt: wrt.as_deref(),
                backend,
            },
            via,
            &cotangent,
        ),
        Command::Jvp {
            program,
            tangent,
            backend,
        } => derive::jvp(
            &derive::Common {
                program: &program,
                wrt: None,
                backend,
            },
            &tangent,
        ),
        Command::Jacobian {
            program,
            wrt,
            via,
            backend,
        } => derive::jacobian(
            &derive::Common {
                program: &program,
                wrt: wrt.as_deref(),
                backend,
            },
            via,
        ),
        Command::Hessian { program, wrt } => derive::hessian(&derive::Common {
            program: &program,
            wrt: wrt.as_deref(),
            backend: native::BackendArgs::default(),
        }),
        Command::Forward {
            input,
            output,
            entry,
        } => source_stage(
            &input,
            &output,
            entry.as_deref(),
            None,
            &[adrev::passes::Pass::Jvp],
            false,
        ),
        Command::Inspect(command) => inspect::run(command),
    }
}

fn parse(file: &Path, output: &Path) -> Result<(), CliError> {
    let text = load::read_text(file)?;
    let module = load::compile_text(&file.display().to_string(), text)?;
    load::write_ron(
        output,
        syntax::to_ron(syntax::SOURCE_IR, syntax::FORMAT_VERSION, &module),
    )
}

fn check(file: &Path, entry: Option<&str>) -> Result<(), CliError> {
    // Loading verifies the file (the stage contract); what is left is to
    // say what it holds.
    let line = match load::load(file)? {
        load::Program::Source(m) | load::Program::Target(m) => {
            signature(adrev::program::entry(&m, entry)?)
        }
        load::Program::Unf(u) => {
            if entry.is_some_and(|e| e != u.entry.as_str()) {
                return Err(CliError::user(format!(
                    "a UNF file holds one definition, `{}`",
                    u.entry
                )));
            }
            let def = u.entry_def().ok_or_else(|| {
                CliError::Internal(format!(
                    "internal error: a verified UNF file without its entry `{}`\n",
                    u.entry
                ))
            })?;
            let mut line = format!("{}: {}", u.kind.ir_name(), signature(def));
            if u.kind == unf::Kind::Target {
                let names: Vec<String> = u
                    .wrt
                    .iter()
                    .filter_map(|&w| def.params.get(w as usize - 1))
                    .map(|p| p.name.to_string())
                    .collect();
                line.push_str(&format!(
                    ", differentiated with respect to {}",
                    names.join(", ")
                ));
            }
            line
        }
    };
    println!("{line}");
    Ok(())
}

/// `def f (x : T) ... : T`, as the program would declare it.
fn signature(def: &syntax::Def) -> String {
    let unknown = || "?".to_string();
    let mut line = format!("def {}", def.name);
    for p in &def.params {
        let ty = p.ty.as_ref().map_or_else(unknown, syntax::print::ty);
        line.push_str(&format!(" ({} : {ty})", p.name));
    }
    line.push_str(&format!(
        " : {}",
        def.ret.as_ref().map_or_else(unknown, syntax::print::ty)
    ));
    line
}

fn print(file: &Path) -> Result<(), CliError> {
    // The loop IR of the C backend (`codegen --loop-ir`).
    if let Ok(text) = std::fs::read_to_string(file)
        && syntax::read_header(&text).is_ok_and(|h| h.ir == codegen::imp::IR_NAME)
    {
        let p = codegen::imp::from_ron(&text)
            .map_err(|e| CliError::user(format!("{}: {e}", file.display())))?;
        print!("{}", codegen::imp::print::program(&p));
        return Ok(());
    }
    match load::load(file)? {
        load::Program::Source(m) | load::Program::Target(m) => {
            print!("{}", syntax::print::module(&m))
        }
        load::Program::Unf(m) => print!("{}", unf::print(&m)),
    }
    Ok(())
}

/// Runs one pass list of the library on a Source file and writes the
/// Target result (`forward`, `reverse-direct`).
fn source_stage(
    input: &Path,
    output: &Path,
    entry: Option<&str>,
    wrt: Option<&str>,
    passes: &[adrev::passes::Pass],
    break_output: bool,
) -> Result<(), CliError> {
    use adrev::passes::{self, Context, Flow, Pass};
    let program = adrev::Program::load(input)?;
    let m = match program.ir() {
        adrev::Ir::Source(m) => m.clone(),
        other => {
            return Err(CliError::user(format!(
                "this stage takes a Source program (a `.ad` file or a `source` file); `{}` holds the `{}` IR",
                input.display(),
                other.ir_name()
            )));
        }
    };
    let def = program.entry(entry)?;
    let cx = Context {
        wrt: adrev::Wrt::parse(wrt)?.for_crates(def)?,
        ..Context::new(def.name.as_str())
    };
    let mut list = vec![Pass::Inline, Pass::Expand];
    list.extend_from_slice(passes);
    let out = if break_output {
        broken_stage(&list, m, cx)?
    } else {
        passes::run(&list, Flow::Source(m), &cx)?.into_module()?
    };
    load::write_ron(
        output,
        syntax::to_ron(syntax::TARGET_IR, syntax::FORMAT_VERSION, &out),
    )
}

/// Test only (`--break-output`): the passes run unverified, the last one's
/// Target output loses an entry of its type table, and the library's
/// verifier of pass outputs judges it, as [`adrev::passes::run`] would
/// have: an internal error naming the pass.
fn broken_stage(
    list: &[adrev::passes::Pass],
    m: syntax::Module,
    cx: adrev::passes::Context,
) -> Result<syntax::Module, CliError> {
    use adrev::passes::{self, Context, Flow};
    let last = list.last().map_or("(none)", |p| p.name());
    let off = Context {
        verify: adrev::Verify::Off,
        ..cx
    };
    let mut out = passes::run(list, Flow::Source(m), &off)?.into_module()?;
    out.types.pop();
    passes::verified(last, out, false)
}

fn bless() -> Result<(), CliError> {
    // The snapshot tests rewrite their files when UPDATE_EXPECT is set
    // (expect-test) and pass; a test that still fails is a real failure.
    let nextest = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let args: &[&str] = if nextest {
        &["nextest", "run", "--workspace", "--no-fail-fast"]
    } else {
        &["test", "--workspace", "--no-fail-fast"]
    };
    // Every snapshot is computed from the fixture's program.ad, never from
    // another snapshot (testkit::stages), so one run rewrites them all.
    let status = std::process::Command::new("cargo")
        .args(args)
        .env("UPDATE_EXPECT", "1")
        .status()
        .map_err(|e| CliError::user(format!("cannot run cargo: {e}")))?;
    if status.success() {
        println!("snapshots blessed; review them with `git diff fixtures/`");
        Ok(())
    } else {
        Err(CliError::user(
            "some tests still fail after blessing (see above)",
        ))
    }
}

fn fuzz_diff(cfg: &difftest::FuzzConfig) -> Result<(), CliError> {
    let cases = cfg.cases;
    let step = (cases / 20).max(1);
    let mut failures = 0;
    let report = difftest::fuzz_with(cfg, |done, r| {
        if r.failures.len() > failures {
            failures = r.failures.len();
            let f = &r.failures[failures - 1];
            eprintln!(
                "fuzz-diff: case {}: {}: {}",
                f.case, f.disagreement.check, f.disagreement.detail
            );
        }
        if done % step == 0 {
            eprintln!(
                "fuzz-diff: {done}/{cases} cases, {} passed, {:.1} s",
                r.passed,
                r.elapsed.as_secs_f64()
            );
        }
    });
    print!("{}", report.render());
    if report.failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::user(
            "fuzz-diff found a disagreement (printed above as a fixture)",
        ))
    }
}

/// `cargo xtask rules | head` closes our stdout early; `println!` then
/// panics with a broken pipe. That is the reader's choice, not a bug, so
/// end quietly as a Unix tool does, and report every other panic as usual.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
