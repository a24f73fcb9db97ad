use super::{Tool, ToolOrigin};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A set of tools keyed by name (the product's `Record<string, ToolDescriptor>`).
///
/// Iteration is in name order, so what the model sees is stable. Cloning is
/// O(1): the map is shared until one of the clones changes it.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Arc<BTreeMap<String, Arc<dyn Tool>>>,
}

/// Two tools ended up with one name.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "two tools are named `{name}`: {first} and {second}; rename one (or filter a server's tools)"
)]
pub struct DuplicateToolError {
    /// The shared name.
    pub name: String,
    /// A description of the first tool (display name and description).
    pub first: String,
    /// A description of the second tool.
    pub second: String,
}

fn describe(tool: &dyn Tool) -> String {
    let spec = tool.spec();
    if let ToolOrigin::Mcp { server, tool } = &spec.origin {
        return format!("tool `{tool}` of MCP server `{server}`");
    }
    format!("`{}` (\"{}\")", spec.title(), spec.description)
}

impl ToolSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool under its spec name; a second tool with that name is an error
    /// that names both.
    pub fn insert(&mut self, tool: Arc<dyn Tool>) -> Result<(), DuplicateToolError> {
        let name = tool.spec().name.clone();
        if let Some(existing) = self.tools.get(&name) {
            return Err(DuplicateToolError {
                first: describe(existing.as_ref()),
                second: describe(tool.as_ref()),
                name,
            });
        }
        Arc::make_mut(&mut self.tools).insert(name, tool);
        Ok(())
    }

    /// Adds every tool of `tools`; stops at the first duplicate.
    pub fn extend(&mut self, tools: impl IntoTools) -> Result<(), DuplicateToolError> {
        for tool in tools.into_tools() {
            self.insert(tool)?;
        }
        Ok(())
    }

    /// Builds a set from anything [`IntoTools`].
    pub fn try_from_tools(tools: impl IntoTools) -> Result<Self, DuplicateToolError> {
        let mut set = Self::new();
        set.extend(tools)?;
        Ok(set)
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    /// Whether a tool named `name` is in the set.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Removes and returns the tool named `name`.
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        Arc::make_mut(&mut self.tools).remove(name)
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The tools, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.values()
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl IntoIterator for ToolSet {
    type Item = Arc<dyn Tool>;
    type IntoIter = std::collections::btree_map::IntoValues<String, Arc<dyn Tool>>;
    fn into_iter(self) -> Self::IntoIter {
        Arc::unwrap_or_clone(self.tools).into_values()
    }
}

/// Anything `AgentBuilder::tools` accepts: one tool, a `Vec`, an array, a
/// [`ToolSet`], an `Option`, or a tuple of these (`(my_tool, mcp.tools())`).
pub trait IntoTools {
    /// The tools, in order.
    fn into_tools(self) -> Vec<Arc<dyn Tool>>;
}

impl<T: Tool> IntoTools for T {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(self)]
    }
}

impl IntoTools for Arc<dyn Tool> {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        vec![self]
    }
}

impl IntoTools for Box<dyn Tool> {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::from(self)]
    }
}

impl IntoTools for ToolSet {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        Arc::unwrap_or_clone(self.tools).into_values().collect()
    }
}

impl IntoTools for &ToolSet {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        self.tools.values().cloned().collect()
    }
}

impl<T: IntoTools> IntoTools for Vec<T> {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        self.into_iter().flat_map(IntoTools::into_tools).collect()
    }
}

impl<T: IntoTools, const N: usize> IntoTools for [T; N] {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        self.into_iter().flat_map(IntoTools::into_tools).collect()
    }
}

impl<T: IntoTools> IntoTools for Option<T> {
    fn into_tools(self) -> Vec<Arc<dyn Tool>> {
        self.map(IntoTools::into_tools).unwrap_or_default()
    }
}

macro_rules! tuple_into_tools {
    ($($name:ident),+) => {
        impl<$($name: IntoTools),+> IntoTools for ($($name,)+) {
            #[allow(non_snake_case)]
            fn into_tools(self) -> Vec<Arc<dyn Tool>> {
                let ($($name,)+) = self;
                let mut out = Vec::new();
                $(out.extend($name.into_tools());)+
                out
            }
        }
    };
}
tuple_into_tools!(A, B);
tuple_into_tools!(A, B, C);
tuple_into_tools!(A, B, C, D);
tuple_into_tools!(A, B, C, D, E);
tuple_into_tools!(A, B, C, D, E, F);
