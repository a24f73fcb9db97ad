//! `agents:`: several agents in one spec file, served as one tool each and
//! callable from one another by listing their names among `tools`.

use super::file::AgentEntryFile;
use super::locate::line_of_key;
use super::{AgentSpec, BUILTIN_NAMES, SpecError, SpecErrorKind, SpecLoader, join_clean};
use crate::Agent;
use crate::agent::{AgentTool, agent_description};
use crate::tool::is_valid_tool_name;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where a spec is read: the top of its file, or as one of its `agents`.
pub(super) enum Scope {
    /// The top spec: its `agents:` are the names its agents may call.
    Top,
    /// One of the top spec's agents: it may call these (its siblings).
    Child(BTreeSet<String>),
}

impl Scope {
    /// The agent names that `tools` may list, given the spec's own `agents:`.
    pub(super) fn names(
        &self,
        path: &Path,
        entries: &BTreeMap<String, AgentEntryFile>,
    ) -> Result<BTreeSet<String>, SpecError> {
        match self {
            Scope::Top => Ok(entries.keys().cloned().collect()),
            Scope::Child(_) if !entries.is_empty() => Err(SpecError::new(
                path,
                SpecErrorKind::Invalid(
                    "only the top of a spec file defines `agents`; move these there (an agent lists the others it calls among its `tools`)".into(),
                ),
            )
            .key("agents")),
            Scope::Child(names) => Ok(names.clone()),
        }
    }
}

impl SpecLoader {
    /// Reads every entry of the top spec's `agents:` (`names`: their names)
    /// and checks that no agent calls itself, directly or through others.
    pub(super) fn resolve_agents(
        &self,
        entries: BTreeMap<String, AgentEntryFile>,
        names: &BTreeSet<String>,
        dir: &Path,
        path: &Path,
        text: &str,
    ) -> Result<BTreeMap<String, AgentSpec>, SpecError> {
        let mut agents = BTreeMap::new();
        for (name, entry) in entries {
            let key = format!("agents.{name}");
            let at_key = |message: String| {
                SpecError::new(path, SpecErrorKind::Invalid(message))
                    .at(line_of_key(text, &key), None)
                    .key(key.clone())
            };
            if !is_valid_tool_name(&name) {
                return Err(at_key(
                    "an agent's name is its tool's name: use 1-64 characters of a-z, A-Z, 0-9, `_` and `-`".into(),
                ));
            }
            if BUILTIN_NAMES.contains(&name.as_str()) {
                return Err(at_key(format!(
                    "`{name}` is a built-in tool's name; give the agent another name"
                )));
            }
            let scope = Scope::Child(names.clone());
            let mut spec = match entry {
                AgentEntryFile::Inline(file) => self.resolve(*file, path, text, &scope)?,
                AgentEntryFile::Path(file) => {
                    let child = join_clean(dir, Path::new(&file));
                    let child_text = self.read(&child)?;
                    self.parse_in(&child_text, &child, &scope)?
                }
            };
            if spec.name.is_none() {
                spec.name = Some(name.clone());
            }
            agents.insert(name, spec);
        }
        if let Some(cycle) = find_cycle(&agents) {
            return Err(SpecError::new(
                path,
                SpecErrorKind::Invalid(format!(
                    "the agents {} call each other in a cycle; an agent cannot call itself, directly or through others",
                    cycle
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(" → ")
                )),
            )
            .at(line_of_key(text, "agents"), None)
            .key("agents"));
        }
        Ok(agents)
    }
}

/// A cycle of agents calling agents, as names from its start back to it.
fn find_cycle(agents: &BTreeMap<String, AgentSpec>) -> Option<Vec<String>> {
    fn visit(
        name: &str,
        agents: &BTreeMap<String, AgentSpec>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == name) {
            let mut cycle = path[start..].to_vec();
            cycle.push(name.to_owned());
            return Some(cycle);
        }
        if done.contains(name) {
            return None;
        }
        path.push(name.to_owned());
        for callee in agents
            .get(name)
            .map(|s| s.agent_tools.as_slice())
            .unwrap_or_default()
        {
            if let Some(cycle) = visit(callee, agents, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(name.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    agents
        .keys()
        .find_map(|name| visit(name, agents, &mut Vec::new(), &mut done))
}

impl AgentSpec {
    /// The names of the file's `agents`, each after the agents it calls.
    pub fn agent_order(&self) -> Vec<&str> {
        fn visit<'a>(
            name: &'a str,
            agents: &'a BTreeMap<String, AgentSpec>,
            order: &mut Vec<&'a str>,
        ) {
            if order.contains(&name) {
                return;
            }
            if let Some((key, spec)) = agents.get_key_value(name) {
                for callee in &spec.agent_tools {
                    visit(callee, agents, order);
                }
                order.push(key);
            }
        }
        let mut order = Vec::new();
        for name in self.agents.keys() {
            visit(name, &self.agents, &mut order);
        }
        order
    }

    /// Builds every agent of the file's `agents:`, each after the agents it
    /// calls: `build` gets the agent's name, its spec and the agent tools
    /// it lists (add them to its builder), and returns the agent.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use lousho::spec::SpecLoader;
    /// let spec = SpecLoader::new().parse(
    ///     "model: test\ntools: [researcher]\nagents:\n  researcher: { model: test, description: Finds facts }\n",
    ///     "team.yaml",
    /// )?;
    /// let agents = spec.build_agents(|_name, spec, tools| -> Result<_, Box<dyn std::error::Error>> {
    ///     Ok(spec.agent_builder()?.tools(tools).build()?)
    /// })?;
    /// let lead = spec.agent_builder()?.tools(spec.agent_tools_from(&agents)).build()?;
    /// assert!(lead.tool("researcher").is_some());
    /// # Ok(()) }
    /// ```
    pub fn build_agents<E>(
        &self,
        mut build: impl FnMut(&str, &AgentSpec, Vec<AgentTool>) -> Result<Agent, E>,
    ) -> Result<BTreeMap<String, Agent>, E> {
        let mut built = BTreeMap::new();
        for name in self.agent_order() {
            let Some(spec) = self.agents.get(name) else {
                continue;
            };
            let tools = spec.agent_tools_from(&built);
            let agent = build(name, spec, tools)?;
            built.insert(name.to_owned(), agent);
        }
        Ok(built)
    }

    /// The agent tools this spec lists in `tools`, from agents built by
    /// [`build_agents`](Self::build_agents) (names not in `built` are left out).
    pub fn agent_tools_from(&self, built: &BTreeMap<String, Agent>) -> Vec<AgentTool> {
        self.agent_tools
            .iter()
            .filter_map(|name| {
                let agent = built.get(name)?;
                Some(agent.as_tool(name.clone(), agent_description(name, agent)))
            })
            .collect()
    }
}
