//! What is wrong with an MCP server entry (`mcpServers.<name>` in a spec or
//! a host's config file). The messages name the key to fix; serde shows them
//! as the entry's parse error.

/// Why an entry does not describe a server.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EntryError {
    /// Both `command` and `url` are set.
    #[error("an entry has either `command` (stdio) or `url` (http), not both")]
    CommandAndUrl,
    /// Neither `command` nor `url` is set.
    #[error("missing field `command` (stdio) or `url` (http)")]
    NoCommandOrUrl,
    /// `type` names a transport whose address field is missing.
    #[error("missing field `{field}`: `type: {transport}` needs it")]
    Missing {
        /// `command` or `url`.
        field: &'static str,
        /// `stdio` or `http`.
        transport: &'static str,
    },
    /// A field of the other transport is set.
    #[error("field `{field}` is for {belongs_to} servers, not {transport}")]
    OtherTransport {
        /// The field.
        field: &'static str,
        /// The transport the field belongs to.
        belongs_to: &'static str,
        /// The entry's transport.
        transport: &'static str,
    },
    /// `stderrCaptureBytes` with `stderr: inherit`.
    #[error("field `stderrCaptureBytes` needs `stderr: capture`")]
    CaptureBytesWithoutCapture,
    /// `maxServerRequests: 0`.
    #[error("`maxServerRequests` must be at least 1")]
    NoServerRequests,
    /// A `tools.allow` / `tools.deny` pattern is not a glob.
    #[error(
        "`tools.{list}[{index}]` `{pattern}` is not a valid glob ({reason}); use a tool name or `*`, `?`, `[..]`, `{{a,b}}`"
    )]
    BadGlob {
        /// `allow` or `deny`.
        list: &'static str,
        /// The pattern's index in the list.
        index: usize,
        /// The pattern.
        pattern: String,
        /// What globset says is wrong.
        reason: String,
    },
    /// The `oauth` block does not fit its grant.
    #[error("`oauth`: {0}")]
    OAuth(#[from] OAuthSettingsError),
}

/// Why an `oauth` block does not fit its grant; each message names the key.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OAuthSettingsError {
    /// A key of the machine grants with the operator sign-in.
    #[error(
        "`{0}` is for `grant: client_credentials` or `enterprise_managed`; add the grant or remove the key"
    )]
    MachineKey(&'static str),
    /// A machine grant without `clientId`.
    #[error(
        "`grant: {0}` needs `clientId` (the client registered with the MCP server's authorization server)"
    )]
    NoClientId(&'static str),
    /// A sign-in key with a machine grant.
    #[error("`{key}` is for the operator sign-in; `grant: {grant}` has no browser step, remove it")]
    SignInKey {
        /// The key.
        key: &'static str,
        /// The grant.
        grant: &'static str,
    },
    /// More than one client credential.
    #[error(
        "`grant: {0}` takes one of `clientSecret`, `privateKeyPem` and `privateKeyFile`, not several"
    )]
    SeveralCredentials(&'static str),
    /// `signingAlgorithm` without a key.
    #[error("`signingAlgorithm` needs `privateKeyPem` or `privateKeyFile`")]
    AlgorithmWithoutKey,
    /// `idp` with `client_credentials`.
    #[error("`idp` is for `grant: enterprise_managed`; remove it")]
    IdpWithoutEnterpriseGrant,
    /// `client_credentials` without a credential.
    #[error(
        "`grant: client_credentials` needs `clientSecret`, `privateKeyPem` or `privateKeyFile`"
    )]
    NoCredential,
    /// `enterprise_managed` without `idp`.
    #[error(
        "`grant: enterprise_managed` needs `idp: {{ issuer, clientId, idToken | idTokenFile }}`"
    )]
    NoIdp,
    /// `idp` without `issuer` or `clientId`.
    #[error("`idp` needs `issuer` and `clientId`")]
    IdpIncomplete,
    /// `idp` with none or both of the token keys.
    #[error("`idp` needs one of `idToken` and `idTokenFile`")]
    IdpToken,
}
