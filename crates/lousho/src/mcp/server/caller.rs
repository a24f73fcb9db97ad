//! Who is calling: the caller an OAuth access token names (issuer and
//! subject), its scopes, and which tools those scopes open
//! ([`ScopePolicy`]). The HTTP layer puts a [`Caller`] into the request's
//! extensions; the handler reads it back through rmcp's `Parts`.

use super::resource_server::{OAuthResource, OAuthResourceError, is_scope_token};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// Which scopes a call needs: some for every call, more for some tools.
#[derive(Debug)]
pub(crate) struct ScopePolicy {
    /// Needed for any call.
    required: Vec<String>,
    /// Tool-name patterns (compiled together) and each one's scope.
    tools: globset::GlobSet,
    tool_scopes: Vec<String>,
}

impl ScopePolicy {
    /// The policy of `resource`'s settings; a bad pattern or scope is an error.
    pub(crate) fn of(resource: &OAuthResource) -> Result<Self, OAuthResourceError> {
        let scopes = resource
            .scopes
            .iter()
            .chain(resource.tool_scopes.iter().map(|(_, s)| s));
        if let Some(bad) = scopes.into_iter().find(|s| !is_scope_token(s)) {
            return Err(OAuthResourceError::InvalidScope(bad.clone()));
        }
        let tools = crate::tool::name::compile_name_globs(
            resource.tool_scopes.iter().map(|(p, _)| p.as_str()),
        )
        .map_err(|e| OAuthResourceError::InvalidToolPattern {
            pattern: e.pattern,
            message: e.message,
        })?;
        Ok(Self {
            required: resource.scopes.clone(),
            tools,
            tool_scopes: resource
                .tool_scopes
                .iter()
                .map(|(_, s)| s.clone())
                .collect(),
        })
    }

    /// Every scope this server knows of (`scopes_supported`), sorted.
    pub(crate) fn all_scopes(&self) -> Vec<String> {
        let set: BTreeSet<&String> = self.required.iter().chain(&self.tool_scopes).collect();
        set.into_iter().cloned().collect()
    }

    /// The scopes any call needs.
    pub(crate) fn required(&self) -> &[String] {
        &self.required
    }

    /// The scopes calling `tool` needs (the required ones first).
    pub(crate) fn for_tool(&self, tool: &str) -> Vec<&str> {
        let mut out: Vec<&str> = self.required.iter().map(String::as_str).collect();
        for i in self.tools.matches(tool) {
            if let Some(scope) = self.tool_scopes.get(i)
                && !out.contains(&scope.as_str())
            {
                out.push(scope);
            }
        }
        out
    }
}

/// The caller an access token vouched for.
#[derive(Clone)]
pub(crate) struct Caller {
    /// The token's issuer (`iss`).
    pub(crate) issuer: Arc<str>,
    /// The token's subject (`sub`).
    pub(crate) subject: Arc<str>,
    /// The scopes it was granted.
    pub(crate) scopes: Arc<BTreeSet<String>>,
    /// What the scopes open.
    pub(crate) policy: Arc<ScopePolicy>,
}

impl fmt::Debug for Caller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// One string naming the caller across issuers: `<issuer>#<subject>`.
    pub(crate) fn key(&self) -> Arc<str> {
        format!("{}#{}", self.issuer, self.subject).into()
    }

    /// The scopes the caller lacks among `needed` (empty: it may go ahead).
    pub(crate) fn lacks<'a>(&self, needed: &[&'a str]) -> Vec<&'a str> {
        needed
            .iter()
            .copied()
            .filter(|s| !self.scopes.contains(*s))
            .collect()
    }

    /// Whether the caller may see and call `tool`.
    pub(crate) fn may_call(&self, tool: &str) -> bool {
        self.lacks(&self.policy.for_tool(tool)).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(scopes: &[&str]) -> Caller {
        let policy = ScopePolicy::of(
            &OAuthResource::new("https://idp.example", "https://rs.example/mcp")
                .scope("use")
                .tool_scope("research*", "deep")
                .tool_scope("*_admin", "admin"),
        )
        .unwrap();
        Caller {
            issuer: "https://idp.example".into(),
            subject: "alice".into(),
            scopes: Arc::new(scopes.iter().map(|s| (*s).to_owned()).collect()),
            policy: Arc::new(policy),
        }
    }

    #[test]
    fn tools_need_the_required_scopes_and_those_of_each_matching_pattern() {
        let c = caller(&["use"]);
        assert!(c.may_call("ask"));
        assert!(!c.may_call("research"));
        assert_eq!(
            c.policy.for_tool("research_admin"),
            ["use", "deep", "admin"]
        );
        assert_eq!(c.lacks(&c.policy.for_tool("research")), ["deep"]);
        assert!(caller(&["use", "deep"]).may_call("research"));
        assert!(!caller(&["deep"]).may_call("research"));
        assert_eq!(c.policy.all_scopes(), ["admin", "deep", "use"]);
        assert_eq!(&*c.key(), "https://idp.example#alice");
    }

    #[test]
    fn a_scope_with_a_space_is_refused() {
        let r = OAuthResource::new("https://i", "https://a").scope("a b");
        assert!(matches!(
            ScopePolicy::of(&r),
            Err(OAuthResourceError::InvalidScope(_))
        ));
    }
}
