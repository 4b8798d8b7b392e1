//! The cURL command reader of [`super::read`] and of the importer: one or more `curl`
//! commands (browsers' "Copy as cURL (bash)" included: ANSI-C quoted `$'...'` bodies), split
//! into words with `shell_words`, into [`ImportedRequest`]s with every header as written.

use super::ImportedRequest;

/// Whether `bytes` hold cURL commands: the first line that is neither empty nor a `#`
/// comment (a cURL file may open with `#!/bin/sh`, as the console's own exports do) starts
/// with `curl`.
pub(crate) fn is_curl(bytes: &[u8]) -> bool {
    bytes
        .split(|b| *b == b'\n')
        .map(|l| String::from_utf8_lossy(l).trim().to_string())
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with("curl"))
}

/// Parses one or more cURL commands (backslash line continuations allowed), reading `-X`,
/// `-H`, `-d`/`--data`/`--data-raw`/`--data-binary` and the URL; every header is kept
/// (signing headers too).
pub(crate) fn curl(text: &str) -> Result<Vec<ImportedRequest>, String> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    // A command runs from a line starting with `curl` until its quotes close, so a quoted
    // body may span lines (pretty-printed JSON) and keeps its newlines.
    let mut commands: Vec<String> = Vec::new();
    let mut pending: Option<String> = None;
    for line in joined.lines() {
        match pending.as_mut() {
            Some(p) => {
                p.push('\n');
                p.push_str(line);
            }
            None if line.trim_start().starts_with("curl") => {
                pending = Some(line.trim_start().to_string());
            }
            None => continue,
        }
        if pending
            .as_deref()
            .is_some_and(|p| shell_words::split(&ansi_c_quotes(p)).is_ok())
        {
            commands.extend(pending.take());
        }
    }
    commands.extend(pending);
    let mut out = Vec::new();
    for (i, line) in commands.iter().enumerate() {
        let words = shell_words::split(&ansi_c_quotes(line))
            .map_err(|e| format!("cURL command {}: {e}", i + 1))?;
        let mut method = None;
        let mut url = None;
        let mut headers = Vec::new();
        let mut body: Option<String> = None;
        let mut it = words.into_iter().skip(1);
        while let Some(w) = it.next() {
            match w.as_str() {
                "-X" | "--request" => method = it.next(),
                "-H" | "--header" => {
                    if let Some(h) = it.next()
                        && let Some((n, v)) = h.split_once(':')
                    {
                        headers.push((n.trim().to_string(), v.trim().to_string()));
                    }
                }
                "-d" | "--data" | "--data-raw" | "--data-binary" | "--data-ascii" => {
                    body = it.next();
                }
                "-o" | "-w" | "--max-time" | "-m" | "--output" | "--write-out" => {
                    it.next();
                }
                s if s.starts_with("http://") || s.starts_with("https://") => {
                    url = Some(s.to_string())
                }
                _ => {}
            }
        }
        let url = url.ok_or_else(|| format!("cURL command {} has no http(s) URL", i + 1))?;
        let method = method
            .unwrap_or_else(|| if body.is_some() { "POST" } else { "GET" }.into())
            .to_ascii_uppercase();
        out.push(ImportedRequest {
            name: format!("curl {} {method} {url}", i + 1),
            method,
            url,
            headers,
            body,
            ..ImportedRequest::default()
        });
    }
    if out.is_empty() {
        return Err("no cURL command found".into());
    }
    Ok(out)
}

/// `command` with bash's ANSI-C quoted strings (`$'{\n  "a": 1\n}'`, as browsers' "Copy as
/// cURL" writes bodies with newlines) turned into plain single-quoted strings holding the
/// text they stand for, so that [`shell_words`] reads them: `\n \t \r \a \b \e \f \v \\ \'
/// \" \?`, `\xHH`, octal `\NNN`, `\uHHHH` and `\UHHHHHHHH` (bash manual, "ANSI-C Quoting");
/// bytes that are not UTF-8 become U+FFFD. Other text, and `$'` inside quotes, is kept.
fn ansi_c_quotes(command: &str) -> std::borrow::Cow<'_, str> {
    if !command.contains("$'") {
        return std::borrow::Cow::Borrowed(command);
    }
    let mut out = String::with_capacity(command.len());
    let mut chars = command.chars().peekable();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => {
                out.push(c);
                out.extend(chars.next());
                continue;
            }
            '$' if !single && !double && chars.peek() == Some(&'\'') => {
                chars.next();
                let text = ansi_c_body(&mut chars);
                out.push('\'');
                out.push_str(&text.replace('\'', "'\\''"));
                out.push('\'');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The text of an ANSI-C quoted string after its `$'`, up to and including the closing `'`
/// ([`ansi_c_quotes`]).
fn ansi_c_body(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    fn digits(
        chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
        radix: u32,
        max: usize,
        init: u32,
    ) -> u32 {
        let mut v = init;
        for _ in 0..max {
            let Some(d) = chars.peek().and_then(|d| d.to_digit(radix)) else {
                break;
            };
            v = v.saturating_mul(radix).saturating_add(d);
            chars.next();
        }
        v
    }
    let mut bytes: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4];
    while let Some(c) = chars.next() {
        let escaped = match c {
            '\'' => break,
            '\\' => chars.next(),
            other => {
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
                continue;
            }
        };
        match escaped {
            Some('n') => bytes.push(b'\n'),
            Some('t') => bytes.push(b'\t'),
            Some('r') => bytes.push(b'\r'),
            Some('a') => bytes.push(7),
            Some('b') => bytes.push(8),
            Some('e' | 'E') => bytes.push(0x1b),
            Some('f') => bytes.push(0x0c),
            Some('v') => bytes.push(0x0b),
            Some(q @ ('\\' | '\'' | '"' | '?')) => bytes.push(q as u8),
            Some('x') => bytes.push((digits(chars, 16, 2, 0) & 0xff) as u8),
            Some(d @ '0'..='7') => {
                bytes.push((digits(chars, 8, 2, d.to_digit(8).unwrap_or(0)) & 0xff) as u8)
            }
            Some(u @ ('u' | 'U')) => {
                let v = digits(chars, 16, if u == 'u' { 4 } else { 8 }, 0);
                let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                bytes.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            Some(other) => {
                bytes.push(b'\\');
                bytes.extend_from_slice(other.encode_utf8(&mut buf).as_bytes());
            }
            None => bytes.push(b'\\'),
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
