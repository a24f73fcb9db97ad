//! Icons a client may show next to a tool, a resource, a prompt or a
//! server (MCP's `icons`, SEP-973).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An icon: an `https:` URL or a `data:` URI of an image, with hints for
/// picking one of several.
///
/// ```
/// use lousho::tool::{Icon, IconTheme};
/// let icon = Icon::new("https://example.com/search.svg")
///     .mime_type("image/svg+xml")
///     .sizes(["any"])
///     .theme(IconTheme::Light);
/// assert_eq!(icon.src, "https://example.com/search.svg");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct Icon {
    /// Where the image is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its MIME type (`image/png`, `image/svg+xml`), when the URL does not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes it is made for: `48x48`, or `any` for a scalable image.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The theme it suits: `light` or `dark` (none: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

/// The background an [`Icon`] is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum IconTheme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}

impl Icon {
    /// An icon at `src`.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// With its MIME type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// With the sizes it is made for (`48x48`, `any`).
    #[must_use]
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// With the theme it suits.
    #[must_use]
    pub fn theme(mut self, theme: IconTheme) -> Self {
        self.theme = Some(theme);
        self
    }
}
