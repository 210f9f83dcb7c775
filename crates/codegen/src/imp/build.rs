//! Building loop-IR functions: a table of variables and a stack of open
//! blocks, so a lowering appends statements where it stands and nests
//! blocks by opening and closing them.

use super::ir::*;

/// A function being built.
#[derive(Debug, Default)]
pub struct FuncBuilder {
    vars: Vec<Var>,
    params: Vec<VarId>,
    /// The open blocks, innermost last; the function's body first.
    blocks: Vec<Block>,
}

impl FuncBuilder {
    /// An empty function.
    pub fn new() -> FuncBuilder {
        FuncBuilder {
            blocks: vec![Vec::new()],
            ..FuncBuilder::default()
        }
    }

    /// A new variable (declared by the statement that introduces it).
    pub fn var(&mut self, name: impl Into<String>, ty: Ty, mutable: bool) -> VarId {
        self.vars.push(Var {
            name: name.into(),
            ty,
            mutable,
        });
        VarId(self.vars.len() as u32 - 1)
    }

    /// A new parameter, after the others.
    pub fn param(&mut self, name: impl Into<String>, ty: Ty) -> VarId {
        let v = self.var(name, ty, false);
        self.params.push(v);
        v
    }

    /// Appends a statement to the innermost open block.
    pub fn push(&mut self, s: Stmt) {
        if let Some(b) = self.blocks.last_mut() {
            b.push(s);
        }
    }

    /// Opens a block: what is pushed next goes into it.
    pub fn open(&mut self) {
        self.blocks.push(Vec::new());
    }

    /// Closes the innermost block and returns it (the function's body
    /// stays open).
    pub fn close(&mut self) -> Block {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
    }

    /// The statements of `f` as a block, built with the builder.
    pub fn block(&mut self, f: impl FnOnce(&mut FuncBuilder)) -> Block {
        self.open();
        f(self);
        self.close()
    }

    /// The finished function.
    pub fn finish(mut self, name: impl Into<String>) -> Func {
        let body = self.blocks.drain(..).next().unwrap_or_default();
        Func {
            name: name.into(),
            vars: self.vars,
            params: self.params,
            body,
        }
    }
}

impl Program {
    /// The id of the extern `name`, added to the table on first use.
    pub fn extern_id(&mut self, name: &str, params: &[Scalar], ret: Scalar) -> ExternId {
        if let Some(i) = self.externs.iter().position(|e| e.name == name) {
            return ExternId(i as u32);
        }
        self.externs.push(Extern {
            name: name.to_string(),
            params: params.to_vec(),
            ret,
        });
        ExternId(self.externs.len() as u32 - 1)
    }

    /// The id of the table holding `data` in `shape`, added on first use:
    /// a literal met again (in the gradient as in the primal, or inlined
    /// twice) shares one table, recognised by its shared buffer.
    pub fn table_id(&mut self, shape: &[u64], data: &std::sync::Arc<[f64]>) -> TableId {
        if let Some(i) = self
            .tables
            .iter()
            .position(|t| std::sync::Arc::ptr_eq(&t.data, data) && t.shape == shape)
        {
            return TableId(i as u32);
        }
        self.tables.push(Table {
            shape: shape.to_vec(),
            data: data.clone(),
        });
        TableId(self.tables.len() as u32 - 1)
    }
}
