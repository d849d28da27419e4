//! The Python literals a `.npy` header is written in (strings, integers, `True`, `False`,
//! `None`, tuples, lists, dicts), nested at most `MAX_DEPTH` levels deep, and the
//! text of a literal as an error line shows it.

/// The Python literals a `.npy` header may hold.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Literal {
    Str(String),
    /// `value`: `None` when the number does not fit in 64 bits.
    Int {
        negative: bool,
        value: Option<u64>,
    },
    Bool(bool),
    None,
    /// A tuple or a list.
    Seq(Vec<Literal>),
    Dict(Vec<(Literal, Literal)>),
}

/// Text from a header, as an error line may show it: control characters escaped (a header
/// cannot break the line or drive the terminal), at most 60 characters.
pub(super) fn shown(text: &str) -> String {
    let mut chars = text.chars();
    let mut short: String = chars
        .by_ref()
        .take(60)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_debug().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if chars.next().is_some() {
        short.push('…');
    }
    short
}

/// Nesting deeper than this is refused (a header's structured types nest a few levels).
const MAX_DEPTH: usize = 32;

impl Literal {
    pub(super) fn parser(text: &str) -> LiteralParser<'_> {
        LiteralParser {
            text: text.as_bytes(),
            at: 0,
        }
    }

    /// As Python writes it, for an error line (see [`shown`]).
    pub(super) fn text(&self) -> String {
        let full = match self {
            Literal::Str(s) => format!("'{s}'"),
            Literal::Int { negative, value } => format!(
                "{}{}",
                if *negative { "-" } else { "" },
                value.map_or("a number of 20 digits or more".to_string(), |v| v
                    .to_string())
            ),
            Literal::Bool(true) => "True".into(),
            Literal::Bool(false) => "False".into(),
            Literal::None => "None".into(),
            Literal::Seq(items) => format!(
                "[{}]",
                items
                    .iter()
                    .map(Literal::text)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Literal::Dict(_) => "a dict".into(),
        };
        shown(&full)
    }
}

pub(super) struct LiteralParser<'t> {
    text: &'t [u8],
    at: usize,
}

impl LiteralParser<'_> {
    fn skip_space(&mut self) {
        while self
            .text
            .get(self.at)
            .is_some_and(|c| c.is_ascii_whitespace())
        {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.text.get(self.at).copied()
    }

    fn unexpected(&self) -> String {
        match self.text.get(self.at) {
            Some(&c) if c.is_ascii_graphic() => {
                format!("unexpected `{}` at byte {}", c as char, self.at)
            }
            Some(c) => format!("unexpected byte {c:#04x} at byte {}", self.at),
            None => "it ends too early".to_string(),
        }
    }

    /// Nothing but white space is left.
    pub(super) fn end(&mut self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(format!("{} after the dict", self.unexpected())),
        }
    }

    pub(super) fn value(&mut self, depth: usize) -> Result<Literal, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested more than {MAX_DEPTH} levels deep"));
        }
        match self.peek() {
            Some(b'{') => {
                self.at += 1;
                let mut entries = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        return Ok(Literal::Dict(entries));
                    }
                    let key = self.value(depth + 1)?;
                    if self.peek() != Some(b':') {
                        return Err(self.unexpected());
                    }
                    self.at += 1;
                    let value = self.value(depth + 1)?;
                    entries.push((key, value));
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {}
                        _ => return Err(self.unexpected()),
                    }
                }
            }
            Some(open @ (b'(' | b'[')) => {
                let close = if open == b'(' { b')' } else { b']' };
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(close) {
                        self.at += 1;
                        return Ok(Literal::Seq(items));
                    }
                    items.push(self.value(depth + 1)?);
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(c) if c == close => {}
                        _ => return Err(self.unexpected()),
                    }
                }
            }
            Some(quote @ (b'\'' | b'"')) => {
                self.at += 1;
                let mut text = Vec::new();
                loop {
                    match self.text.get(self.at) {
                        None => return Err("a string is not closed".into()),
                        Some(&c) if c == quote => break,
                        Some(b'\\') => {
                            self.at += 1;
                            match self.text.get(self.at) {
                                Some(&c) => text.push(c),
                                None => return Err("a string is not closed".into()),
                            }
                        }
                        Some(&c) => text.push(c),
                    }
                    self.at += 1;
                }
                self.at += 1;
                Ok(Literal::Str(String::from_utf8_lossy(&text).into_owned()))
            }
            Some(b'0'..=b'9' | b'-' | b'+') => {
                let negative = self.text[self.at] == b'-';
                if matches!(self.text[self.at], b'-' | b'+') {
                    self.at += 1;
                }
                let digits = self.at;
                let mut value = Some(0u64);
                while let Some(&c) = self.text.get(self.at).filter(|c| c.is_ascii_digit()) {
                    value = value
                        .and_then(|v| v.checked_mul(10))
                        .and_then(|v| v.checked_add(u64::from(c - b'0')));
                    self.at += 1;
                }
                if self.at == digits {
                    return Err(self.unexpected());
                }
                // Python 2's long integers: `3L`.
                if matches!(self.text.get(self.at), Some(b'L' | b'l')) {
                    self.at += 1;
                }
                Ok(Literal::Int { negative, value })
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.at;
                while self
                    .text
                    .get(self.at)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    self.at += 1;
                }
                match &self.text[start..self.at] {
                    b"True" => Ok(Literal::Bool(true)),
                    b"False" => Ok(Literal::Bool(false)),
                    b"None" => Ok(Literal::None),
                    word => Err(format!(
                        "unexpected word `{}` at byte {start}",
                        String::from_utf8_lossy(word)
                    )),
                }
            }
            _ => Err(self.unexpected()),
        }
    }
}
