//! Plain tables on stdout ([`comfy_table`]): a header row, columns as wide
//! as their widest cell by display width (long tool names, non-ASCII), two
//! spaces apart, no borders and no trailing spaces, so they read well and
//! `grep`/`awk` well. Never wrapped: a pipe gets whole lines.

use comfy_table::Table;

/// A table with these column names.
pub fn new(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(header.to_vec());
    table
}

/// The table's text: one line per row, no trailing spaces, no final newline.
pub fn render(table: &mut Table) -> String {
    let last = table.column_iter().count().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if i == last { 0 } else { 2 }));
    }
    table.trim_fmt()
}
