//! A linear look at a YAML text before it is parsed: how deeply its flow
//! collections (`[…]`, `{…}`) nest.
//!
//! The YAML scanner spends time proportional to the flow depth on every token
//! (it re-checks one pending key per level), so a 200 KB file of nested
//! brackets keeps it busy for half a minute. This pass follows the scanner's
//! own rules for what opens a flow collection — comments, quoted, plain and
//! block scalars, and the block indentation that decides where a scalar ends —
//! so brackets inside strings and prose do not count, and stops at the first
//! level over the limit.

/// How deeply flow collections may nest in a spec file. Real specs need two
/// or three levels; the YAML parser gives up at 128 anyway.
pub(crate) const MAX_FLOW_NESTING: usize = 64;

/// The line (from 1) where flow collections first nest deeper than `limit`,
/// or `None` when they never do.
pub(crate) fn too_deep(text: &str, limit: usize) -> Option<usize> {
    Scanner::new(text).run(limit)
}

/// Where a key might start, as the YAML scanner remembers it.
#[derive(Clone, Copy)]
struct Key {
    line: usize,
    index: usize,
    column: usize,
}

struct Scanner {
    chars: Vec<char>,
    index: usize,
    line: usize,
    column: usize,
    flow: usize,
    indent: isize,
    indents: Vec<isize>,
    key_allowed: bool,
    /// One pending key per flow level (the block level first).
    keys: Vec<Option<Key>>,
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Blank, line break or the end (`\0` stands for the end).
fn is_blankz(c: char) -> bool {
    is_blank(c) || is_break(c) || c == '\0'
}

impl Scanner {
    fn new(text: &str) -> Self {
        Self {
            chars: text
                .strip_prefix('\u{feff}')
                .unwrap_or(text)
                .chars()
                .collect(),
            index: 0,
            line: 0,
            column: 0,
            flow: 0,
            indent: -1,
            indents: Vec::new(),
            key_allowed: true,
            keys: vec![None],
        }
    }

    fn peek(&self, ahead: usize) -> char {
        self.chars.get(self.index + ahead).copied().unwrap_or('\0')
    }

    fn advance(&mut self) {
        let c = self.peek(0);
        if c == '\0' {
            return;
        }
        self.index += 1;
        if is_break(c) {
            if c == '\r' && self.peek(0) == '\n' {
                self.index += 1;
            }
            self.line += 1;
            self.column = 0;
        } else {
            self.column += 1;
        }
    }

    fn at_document_marker(&self) -> bool {
        self.column == 0
            && ((self.peek(0) == '-' && self.peek(1) == '-' && self.peek(2) == '-')
                || (self.peek(0) == '.' && self.peek(1) == '.' && self.peek(2) == '.'))
            && is_blankz(self.peek(3))
    }

    fn run(mut self, limit: usize) -> Option<usize> {
        loop {
            self.skip_to_token();
            let c = self.peek(0);
            if c == '\0' {
                return None;
            }
            if self.flow == 0 {
                self.unroll(self.column as isize);
            }
            let blank_next = is_blankz(self.peek(1));
            match c {
                '%' if self.column == 0 => self.skip_line(),
                _ if self.at_document_marker() => {
                    self.unroll(-1);
                    self.remove_key();
                    self.key_allowed = false;
                    for _ in 0..3 {
                        self.advance();
                    }
                }
                '[' | '{' => {
                    self.save_key();
                    self.flow += 1;
                    if self.flow > limit {
                        return Some(self.line + 1);
                    }
                    self.keys.push(None);
                    self.key_allowed = true;
                    self.advance();
                }
                ']' | '}' => {
                    if self.flow > 0 {
                        self.flow -= 1;
                        self.keys.pop();
                    }
                    self.remove_key();
                    self.key_allowed = false;
                    self.advance();
                }
                ',' => {
                    self.remove_key();
                    self.key_allowed = true;
                    self.advance();
                }
                '-' if blank_next => {
                    if self.flow == 0 {
                        self.roll(self.column);
                    }
                    self.remove_key();
                    self.key_allowed = true;
                    self.advance();
                }
                '?' if self.flow > 0 || blank_next => {
                    if self.flow == 0 {
                        self.roll(self.column);
                    }
                    self.remove_key();
                    self.key_allowed = self.flow == 0;
                    self.advance();
                }
                ':' if self.flow > 0 || blank_next => {
                    match self.take_key() {
                        Some(key) => {
                            if self.flow == 0 {
                                self.roll(key.column);
                            }
                            self.key_allowed = false;
                        }
                        None => {
                            if self.flow == 0 {
                                self.roll(self.column);
                            }
                            self.key_allowed = self.flow == 0;
                        }
                    }
                    self.advance();
                }
                '*' | '&' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.advance();
                    while self.peek(0).is_alphanumeric() || matches!(self.peek(0), '-' | '_') {
                        self.advance();
                    }
                }
                '!' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.advance();
                    // Stops at a flow indicator too: a bracket the scanner
                    // would take as part of the tag is then counted, never
                    // missed.
                    while !self.ends_tag() {
                        self.advance();
                    }
                }
                '|' | '>' if self.flow == 0 => {
                    self.remove_key();
                    self.key_allowed = true;
                    self.block_scalar();
                }
                '\'' | '"' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.quoted(c);
                }
                _ => {
                    self.save_key();
                    self.key_allowed = false;
                    self.plain();
                }
            }
        }
    }

    /// Blanks, comments and line breaks up to the next token.
    fn skip_to_token(&mut self) {
        loop {
            while is_blank(self.peek(0)) || (self.column == 0 && self.peek(0) == '\u{feff}') {
                self.advance();
            }
            if self.peek(0) == '#' {
                self.skip_line();
            }
            if !is_break(self.peek(0)) {
                return;
            }
            self.advance();
            if self.flow == 0 {
                self.key_allowed = true;
            }
        }
    }

    /// Up to (not over) the line break.
    fn skip_line(&mut self) {
        while !is_break(self.peek(0)) && self.peek(0) != '\0' {
            self.advance();
        }
    }

    /// A tag ends at a blank, and in a flow collection at a flow indicator.
    fn ends_tag(&self) -> bool {
        let c = self.peek(0);
        is_blankz(c) || (self.flow > 0 && matches!(c, ',' | '[' | ']' | '{' | '}'))
    }

    fn roll(&mut self, column: usize) {
        let column = column as isize;
        if self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
        }
    }

    fn unroll(&mut self, column: isize) {
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn save_key(&mut self) {
        if self.key_allowed {
            let key = Key {
                line: self.line,
                index: self.index,
                column: self.column,
            };
            if let Some(slot) = self.keys.last_mut() {
                *slot = Some(key);
            }
        }
    }

    fn remove_key(&mut self) {
        if let Some(slot) = self.keys.last_mut() {
            *slot = None;
        }
    }

    /// The pending key of this level, if it is still possible (same line,
    /// within 1024 characters).
    fn take_key(&mut self) -> Option<Key> {
        let (line, index) = (self.line, self.index);
        self.keys
            .last_mut()
            .and_then(Option::take)
            .filter(|k| k.line == line && k.index + 1024 >= index)
    }

    fn quoted(&mut self, quote: char) {
        self.advance();
        loop {
            let c = self.peek(0);
            if c == '\0' || self.at_document_marker() {
                return;
            }
            if quote == '\'' && c == '\'' {
                self.advance();
                if self.peek(0) != '\'' {
                    return;
                }
            } else if quote == '"' && c == '\\' {
                self.advance();
            } else if quote == '"' && c == '"' {
                self.advance();
                return;
            }
            self.advance();
        }
    }

    fn plain(&mut self) {
        let min_column = usize::try_from(self.indent + 1).unwrap_or(0);
        let mut leading_blanks = false;
        loop {
            if self.at_document_marker() || self.peek(0) == '#' {
                break;
            }
            while !is_blankz(self.peek(0)) {
                let c = self.peek(0);
                if (c == ':' && is_blankz(self.peek(1)))
                    || (self.flow > 0 && matches!(c, ',' | '[' | ']' | '{' | '}'))
                {
                    break;
                }
                self.advance();
            }
            let c = self.peek(0);
            if !(is_blank(c) || is_break(c)) {
                break;
            }
            while is_blank(self.peek(0)) || is_break(self.peek(0)) {
                leading_blanks |= is_break(self.peek(0));
                self.advance();
            }
            if self.flow == 0 && self.column < min_column {
                break;
            }
        }
        if leading_blanks {
            self.key_allowed = true;
        }
    }

    fn block_scalar(&mut self) {
        self.advance();
        let mut increment = 0usize;
        for _ in 0..2 {
            match self.peek(0) {
                '+' | '-' => self.advance(),
                c @ '1'..='9' => {
                    increment = c as usize - '0' as usize;
                    self.advance();
                }
                _ => {}
            }
        }
        while is_blank(self.peek(0)) {
            self.advance();
        }
        if self.peek(0) == '#' {
            self.skip_line();
        }
        if is_break(self.peek(0)) {
            self.advance();
        }
        let mut indent = if increment == 0 {
            0
        } else {
            usize::try_from(self.indent).map_or(increment, |i| i + increment)
        };
        let mut max_indent = 0;
        loop {
            while (indent == 0 || self.column < indent) && self.peek(0) == ' ' {
                self.advance();
            }
            max_indent = max_indent.max(self.column);
            if !is_break(self.peek(0)) {
                break;
            }
            self.advance();
        }
        if indent == 0 {
            let floor = usize::try_from(self.indent + 1).unwrap_or(0).max(1);
            indent = max_indent.max(floor);
        }
        while self.column == indent && self.peek(0) != '\0' {
            self.skip_line();
            if self.peek(0) == '\0' {
                break;
            }
            self.advance();
            loop {
                while self.column < indent && self.peek(0) == ' ' {
                    self.advance();
                }
                if !is_break(self.peek(0)) {
                    break;
                }
                self.advance();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    fn depth_ok(text: &str, limit: usize) -> bool {
        too_deep(text, limit).is_none()
    }

    #[test]
    fn counts_flow_collections_in_any_position() {
        assert!(depth_ok("a: [[1]]\n", 2));
        assert!(!depth_ok("a: [[[1]]]\n", 2));
        assert!(!depth_ok("a: {b: [{c: 1}]}\n", 2));
        assert!(!depth_ok("- [[[x]]]\n", 2));
        assert!(!depth_ok("[[[x]]]: y\n", 2));
        assert!(!depth_ok("a: &x !t [[[1]]]\n", 2));
        assert_eq!(too_deep("a: 1\nb:\n  - [[\n  [1]]]\n", 2), Some(4));
        // Siblings do not add up.
        assert!(depth_ok(&"a: [[1], [2], [[3]]]\n".repeat(50), 3));
    }

    #[test]
    fn brackets_in_strings_comments_and_block_scalars_do_not_count() {
        let text = "prompt: \"[[[[ \\\" [[[[\"\nb: '[[[['' [[[['\n# [[[[[[\nc: x [[[[ # [[[[\n\
                    d: |\n  [[[[[[\n    {{{{{\n  [[[[\ne: >2\n   [[[[\nf: see [x]\n  [[[[ prose\n\
                    g: [a, '[[[[', \"{{{{\"]\n";
        assert!(depth_ok(text, 1), "{:?}", too_deep(text, 1));
    }

    #[test]
    fn what_ends_a_scalar_is_what_the_parser_ends_it_with() {
        // A block scalar ends at a less indented line; what follows counts.
        assert!(!depth_ok("a: |\n  text\nb: [[[1]]]\n", 2));
        // A plain scalar's continuation must be indented past its key.
        assert!(!depth_ok("a:\n  b: text\n  c: [[[1]]]\n", 2));
        assert!(!depth_ok("- a: x\n  b: [[[1]]]\n", 2));
        // A quote inside a plain scalar does not start a string.
        assert!(!depth_ok("a: it's\nb: [[[1]]]\nc: '\n", 2));
        // In a flow collection, `,` ends a plain scalar and a quote may follow.
        assert!(depth_ok("a: [x, '[[[[', y]\n", 1));
        // A document marker ends a quoted scalar.
        assert!(!depth_ok("a: '\n---\nb: [[[1]]]\n", 2));
    }

    #[test]
    fn hostile_inputs_are_caught_early() {
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(too_deep(&deep, 64), Some(1));
        let maps = format!("a: {}\n", "{a: ".repeat(50_000));
        assert_eq!(too_deep(&maps, 64), Some(1));
        let mixed = format!("a: {}\n", "[ \"]\" ".repeat(100));
        assert!(too_deep(&mixed, 64).is_some());
    }
}
