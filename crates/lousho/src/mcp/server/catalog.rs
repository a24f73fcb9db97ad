//! What a running server offers — tools, resources, resource templates,
//! prompts — and the handle that changes it while serving
//! ([`ServerCatalog`]); each change is announced to the connected clients
//! (`notifications/*/list_changed`, `notifications/resources/updated`).

mod listeners;
mod paging;
pub(crate) mod wire;

pub(crate) use listeners::{Change, Listeners, Subscribed};
pub(crate) use paging::page;

use super::annotations::to_rmcp_tool;
use super::error::ServeError;
use super::options::ServeApprovals;
use super::prompts::DefinedPrompt;
use super::resources::{DefinedResource, DefinedResourceTemplate, ResourceReader};
use crate::Agent;
use crate::sync::RwLockExt;
use crate::tool::{DuplicateToolError, IntoTools, ToolSet};
use rmcp::model::{ServerConfig, Tool};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

/// What a running server offers, changeable while it serves: get it from
/// [`McpServerHandle::catalog`](super::McpServerHandle::catalog). Each
/// change is announced to connected clients — `notifications/tools/list_changed`
/// and its prompts and resources kin to every session that can receive
/// notifications (stdio, stateful HTTP, a 2026-07-28 `subscriptions/listen`
/// stream), `notifications/resources/updated` to those subscribed to the URI.
/// Cheap to clone.
#[derive(Clone)]
pub struct ServerCatalog {
    inner: Arc<Inner>,
}

struct Inner {
    /// The first agent: its permission rules gate tools added later.
    agent: Agent,
    approvals: ServeApprovals,
    page_size: usize,
    /// The server's name, title, icons and instructions, for [`Entries::info`].
    identity: wire::Identity,
    entries: RwLock<Entries>,
    listeners: Listeners,
}

/// Everything served, as of now.
pub(crate) struct Entries {
    /// The agent tools' listings (fixed while serving).
    agent_tools: Vec<Tool>,
    direct: ToolSet,
    /// The direct tools' listings, by name.
    direct_listed: BTreeMap<String, Tool>,
    pub(crate) resources: BTreeMap<String, DefinedResource>,
    /// By URI template.
    pub(crate) templates: BTreeMap<String, DefinedResourceTemplate>,
    pub(crate) prompts: BTreeMap<String, DefinedPrompt>,
    /// Whether resources and prompts were ever served: once declared, a
    /// capability stays (a client told of it may still list an empty set).
    declared: Declared,
    info: ServerConfig,
}

/// The capabilities declared so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Declared {
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
}

/// What `serve_mcp` starts a catalog with.
pub(crate) struct Initial {
    pub(crate) agent: Agent,
    pub(crate) approvals: ServeApprovals,
    pub(crate) page_size: usize,
    pub(crate) identity: wire::Identity,
    pub(crate) agent_tools: Vec<Tool>,
    pub(crate) direct: ToolSet,
    pub(crate) resources: Vec<DefinedResource>,
    pub(crate) templates: Vec<DefinedResourceTemplate>,
    pub(crate) prompts: Vec<DefinedPrompt>,
}

impl ServerCatalog {
    /// The catalog `serve_mcp` starts with; a resource URI, template or
    /// prompt name given twice, or a template lousho cannot match, is an
    /// error.
    pub(crate) fn new(initial: Initial) -> Result<Self, ServeError> {
        let Initial {
            agent,
            approvals,
            page_size,
            identity,
            agent_tools,
            direct,
            resources,
            templates,
            prompts,
        } = initial;
        let direct_listed = direct
            .iter()
            .map(|t| (t.spec().name.clone(), to_rmcp_tool(&agent, t.as_ref())))
            .collect();
        let mut entries = Entries {
            agent_tools,
            direct,
            direct_listed,
            resources: BTreeMap::new(),
            templates: BTreeMap::new(),
            prompts: BTreeMap::new(),
            declared: Declared::default(),
            info: ServerConfig::default(),
        };
        for r in resources {
            entries.insert_resource(r)?;
        }
        for t in templates {
            entries.insert_template(t)?;
        }
        for p in prompts {
            entries.insert_prompt(p)?;
        }
        entries.refresh(&identity);
        Ok(Self {
            inner: Arc::new(Inner {
                agent,
                approvals,
                page_size: page_size.max(1),
                identity,
                entries: RwLock::new(entries),
                listeners: Listeners::default(),
            }),
        })
    }

    /// Adds tools, served directly like [`ServeOptions::tools`](crate::ServeOptions::tools)
    /// (the agent's permission rules decide which are exposed), and tells
    /// the clients. A name already served is an error and nothing is added.
    pub async fn add_tools(&self, tools: impl IntoTools) -> Result<(), ServeError> {
        let tools = tools.into_tools();
        let exposed = super::exposed_direct_tools(&self.inner.agent, &tools, self.inner.approvals)?;
        self.change(Change::Tools, |e| {
            for tool in exposed.iter() {
                let name = &tool.spec().name;
                if let Some(held) = e.agent_tools.iter().find(|t| t.name == *name) {
                    return Err(DuplicateToolError {
                        name: name.clone(),
                        first: format!(
                            "the agent tool (\"{}\")",
                            held.description.as_deref().unwrap_or_default()
                        ),
                        second: format!("a direct tool (\"{}\")", tool.spec().description),
                    }
                    .into());
                }
            }
            let mut direct = e.direct.clone();
            for tool in exposed.iter() {
                direct.insert(tool.clone())?;
            }
            for tool in exposed.iter() {
                let listed = to_rmcp_tool(&self.inner.agent, tool.as_ref());
                e.direct_listed.insert(tool.spec().name.clone(), listed);
            }
            e.direct = direct;
            Ok(!exposed.is_empty())
        })
        .await
        .map(drop)
    }

    /// Stops serving the direct tool `name` (calls in flight finish);
    /// whether it was served.
    pub async fn remove_tool(&self, name: &str) -> bool {
        self.change(Change::Tools, |e| {
            e.direct_listed.remove(name);
            Ok(e.direct.remove(name).is_some())
        })
        .await
        .unwrap_or(false)
    }

    /// Adds a resource; a URI already served is an error.
    pub async fn add_resource(&self, resource: DefinedResource) -> Result<(), ServeError> {
        self.change(Change::Resources, |e| {
            e.insert_resource(resource).map(|()| true)
        })
        .await
        .map(drop)
    }

    /// Stops serving the resource at `uri`; whether it was served.
    pub async fn remove_resource(&self, uri: &str) -> bool {
        self.change(Change::Resources, |e| Ok(e.resources.remove(uri).is_some()))
            .await
            .unwrap_or(false)
    }

    /// Adds a resource template; one with the same URI template already
    /// served, or one lousho cannot match, is an error.
    pub async fn add_resource_template(
        &self,
        template: DefinedResourceTemplate,
    ) -> Result<(), ServeError> {
        self.change(Change::Resources, |e| {
            e.insert_template(template).map(|()| true)
        })
        .await
        .map(drop)
    }

    /// Stops serving the resource template `uri_template`; whether it was
    /// served.
    pub async fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.change(Change::Resources, |e| {
            Ok(e.templates.remove(uri_template).is_some())
        })
        .await
        .unwrap_or(false)
    }

    /// Adds a prompt; a name already served is an error.
    pub async fn add_prompt(&self, prompt: DefinedPrompt) -> Result<(), ServeError> {
        self.change(Change::Prompts, |e| e.insert_prompt(prompt).map(|()| true))
            .await
            .map(drop)
    }

    /// Stops serving the prompt `name`; whether it was served.
    pub async fn remove_prompt(&self, name: &str) -> bool {
        self.change(Change::Prompts, |e| Ok(e.prompts.remove(name).is_some()))
            .await
            .unwrap_or(false)
    }

    /// Tells the clients subscribed to `uri` (`resources/subscribe`, or a
    /// 2026-07-28 listen stream naming it) that its content changed
    /// (`notifications/resources/updated`); they read it again when they
    /// want it.
    pub async fn resource_updated(&self, uri: &str) {
        self.inner
            .listeners
            .notify(&Change::Updated(uri.to_owned()))
            .await;
    }

    /// Applies `f` to the entries; when it reports a change, refreshes the
    /// server's capabilities and announces `change`.
    async fn change(
        &self,
        change: Change,
        f: impl FnOnce(&mut Entries) -> Result<bool, ServeError>,
    ) -> Result<bool, ServeError> {
        let changed = {
            let mut entries = self.inner.entries.write_unpoisoned();
            let changed = f(&mut entries)?;
            if changed {
                entries.refresh(&self.inner.identity);
            }
            changed
        };
        if changed {
            self.inner.listeners.notify(&change).await;
        }
        Ok(changed)
    }

    /// Reads the entries (never held across an `.await`).
    pub(crate) fn read<T>(&self, f: impl FnOnce(&Entries) -> T) -> T {
        f(&self.inner.entries.read_unpoisoned())
    }

    /// The server's `initialize` answer (capabilities follow the entries).
    pub(crate) fn info(&self) -> ServerConfig {
        self.read(|e| e.info.clone())
    }

    /// The page size of `*/list` answers.
    pub(crate) fn page_size(&self) -> usize {
        self.inner.page_size
    }

    /// The sessions and streams that hear about changes.
    pub(crate) fn listeners(&self) -> &Listeners {
        &self.inner.listeners
    }
}

impl fmt::Debug for ServerCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.read(|e| {
            f.debug_struct("ServerCatalog")
                .field("tools", &e.direct)
                .field("resources", &e.resources.keys().collect::<Vec<_>>())
                .field("templates", &e.templates.keys().collect::<Vec<_>>())
                .field("prompts", &e.prompts.keys().collect::<Vec<_>>())
                .finish_non_exhaustive()
        })
    }
}

/// What reads a URI: its reader, the template's variables, the listed MIME
/// type.
pub(crate) struct Resolved {
    pub(crate) reader: ResourceReader,
    pub(crate) vars: BTreeMap<String, String>,
    pub(crate) mime_type: Option<String>,
}

impl Entries {
    fn insert_resource(&mut self, resource: DefinedResource) -> Result<(), ServeError> {
        if self.resources.contains_key(&resource.uri) {
            return Err(ServeError::DuplicateResource(resource.uri));
        }
        self.resources.insert(resource.uri.clone(), resource);
        Ok(())
    }

    fn insert_template(&mut self, template: DefinedResourceTemplate) -> Result<(), ServeError> {
        if let Err(e) = &template.parsed {
            return Err(ServeError::InvalidUriTemplate(e.clone()));
        }
        if self.templates.contains_key(&template.template) {
            return Err(ServeError::DuplicateResource(template.template));
        }
        self.templates.insert(template.template.clone(), template);
        Ok(())
    }

    fn insert_prompt(&mut self, prompt: DefinedPrompt) -> Result<(), ServeError> {
        if self.prompts.contains_key(&prompt.name) {
            return Err(ServeError::DuplicatePrompt(prompt.name));
        }
        self.prompts.insert(prompt.name.clone(), prompt);
        Ok(())
    }

    /// Every tool as `tools/list` shows it: the agent tools, then the
    /// direct ones by name.
    pub(crate) fn tools(&self) -> Vec<Tool> {
        let mut list = self.agent_tools.clone();
        list.extend(self.direct_listed.values().cloned());
        list
    }

    /// Declares what is served now (and keeps what was declared before).
    fn refresh(&mut self, identity: &wire::Identity) {
        self.declared.resources |= !self.resources.is_empty() || !self.templates.is_empty();
        self.declared.prompts |= !self.prompts.is_empty();
        self.info = wire::server_config(self.declared, identity);
    }

    /// The capabilities declared so far.
    pub(crate) fn declared(&self) -> Declared {
        self.declared
    }

    /// The listing of the tool `name`.
    pub(crate) fn tool(&self, name: &str) -> Option<Tool> {
        self.direct_listed
            .get(name)
            .or_else(|| self.agent_tools.iter().find(|t| t.name == name))
            .cloned()
    }

    /// The directly served tools (O(1) to clone).
    pub(crate) fn direct(&self) -> &ToolSet {
        &self.direct
    }

    /// What serves `uri`: a fixed resource, else the first template (in
    /// template order) it fits.
    pub(crate) fn resolve(&self, uri: &str) -> Option<Resolved> {
        if let Some(r) = self.resources.get(uri) {
            return Some(Resolved {
                reader: r.reader.clone(),
                vars: BTreeMap::new(),
                mime_type: r.listing.mime_type.clone(),
            });
        }
        self.templates.values().find_map(|t| {
            let vars = t.parsed.as_ref().ok()?.matches(uri)?;
            Some(Resolved {
                reader: t.reader.clone(),
                vars,
                mime_type: t.listing.mime_type.clone(),
            })
        })
    }
}
