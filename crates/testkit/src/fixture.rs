//! The example fixtures: a folder `fixtures/<name>/` holding `program.ad`
//! (with its expectation comments), its snapshots, and optionally an
//! `options.ron` ([`crate::options`]).

use crate::options::Options;
use semantics::{Expectations, Value};
use std::path::{Path, PathBuf};
use syntax::{Def, Module, SourceFile};

/// One fixture.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The folder's name.
    pub name: String,
    /// The folder.
    pub dir: PathBuf,
    /// The text of `program.ad`.
    pub text: String,
    /// Its options (the defaults without an options file).
    pub options: Options,
}

/// The folder of the fixtures.
pub fn root() -> PathBuf {
    crate::workspace().join("fixtures")
}

/// The names of the fixture folders (those with a `program.ad`), sorted.
pub fn names() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root())
        .expect("the fixtures directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("program.ad").is_file())
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    out.sort();
    out
}

impl Fixture {
    /// Reads the fixture `name`; an unreadable program or a bad options
    /// file is an error saying which.
    pub fn load(name: &str) -> Result<Fixture, String> {
        let dir = root().join(name);
        let path = dir.join("program.ad");
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let options = Options::of(&dir)?;
        Ok(Fixture {
            name: name.to_string(),
            dir,
            text,
            options,
        })
    }

    /// Every fixture, sorted by name (panics on a bad options file).
    pub fn all() -> Vec<Fixture> {
        names()
            .iter()
            .map(|n| Fixture::load(n).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    /// The program's path as the diagnostics name it (relative to the
    /// workspace root, which is where the command line runs).
    pub fn file_name(&self) -> String {
        format!("fixtures/{}/program.ad", self.name)
    }

    /// A file of the fixture's folder.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// The program compiled by the front end, every definition with its
    /// calls inlined (`syntax::compile`; panics with the error).
    pub fn compile(&self) -> Module {
        syntax::compile(self.source_file())
            .unwrap_or_else(|e| panic!("{} does not compile: {e}", self.name))
    }

    /// The program as the driver loads it and `parse` writes it
    /// (`10.source.ron`): the calls of definitions kept
    /// (`syntax::compile_calls`; panics with the error).
    pub fn compile_calls(&self) -> Module {
        syntax::compile_calls(self.source_file())
            .unwrap_or_else(|e| panic!("{} does not compile: {e}", self.name))
    }

    /// The entry (the last definition) alone with its calls inlined, as
    /// every request of the driver takes it (`adrev::passes::Pass::Inline`).
    pub fn entry_module(&self) -> Module {
        let m = self.compile_calls();
        let entry = m.defs.last().expect("a definition").name.clone();
        syntax::inline_entry(&m, entry.as_str())
            .unwrap_or_else(|e| panic!("{}: the entry does not inline: {e}", self.name))
    }

    fn source_file(&self) -> SourceFile {
        SourceFile {
            name: self.file_name(),
            text: self.text.clone(),
        }
    }

    /// The expectation comments.
    pub fn expectations(&self) -> Expectations {
        Expectations::parse(&self.text)
    }

    /// The `-- at` inputs of `def`, by name.
    pub fn inputs(&self, def: &Def) -> Vec<(String, Value)> {
        self.expectations()
            .inputs(def)
            .unwrap_or_else(|e| panic!("{}: bad `-- at`: {e}", self.name))
    }

    /// Compares `actual` with the snapshot `file` of the fixture's folder;
    /// `UPDATE_EXPECT=1` rewrites the file instead (`cargo xtask bless`).
    pub fn snapshot(&self, file: &str, actual: &str) {
        expect_test::expect_file![self.path(file)].assert_eq(actual);
    }

    /// Panics if a snapshot `file` exists: the stage producing it does not
    /// take this fixture, so the file is stale.
    pub fn no_snapshot(&self, file: &str, why: &str) {
        assert!(
            !self.path(file).exists(),
            "{}: {file} exists but {why}",
            self.name
        );
    }
}

/// Reads a file, panicking with its path.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
