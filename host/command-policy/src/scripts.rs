//! Small readers of the scripts that `sed` and `awk` take on their command line, for the
//! commands of those languages that run programs or write files (see [`super::risky`]).
//!
//! They are scanners, not interpreters: they only need to find the commands, and whatever they
//! cannot read counts as risky (the caller then needs an allow pattern that names the script).

/// What in a `sed` script runs a program or writes a file: the `e`, `w` and `W` commands and
/// the `e` and `w` flags of `s`, as `"w"`, `"s///e"`…; `Some("unreadable")` when the scanner
/// cannot read the script. `None` when the script only edits the stream (or reads files).
pub fn sed_risk(script: &str) -> Option<&'static str> {
    Sed::new(script).script().err()
}

struct Sed {
    s: Vec<char>,
    i: usize,
}

impl Sed {
    fn new(script: &str) -> Self {
        Self {
            s: script.chars().collect(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.i += 1;
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    /// The rest of the line (file names, labels, text): up to a newline, or also up to `;`
    /// where GNU sed ends the argument there.
    fn rest_of_line(&mut self, semicolon_ends: bool) {
        while let Some(c) = self.peek() {
            if c == '\n' || (semicolon_ends && (c == ';' || c == '}')) {
                break;
            }
            self.i += 1;
        }
    }

    fn script(&mut self) -> Result<(), &'static str> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.i += 1;
            }
            let Some(_) = self.peek() else {
                return Ok(());
            };
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(',') {
                self.i += 1;
                self.skip_blanks();
                self.address()?;
                self.skip_blanks();
            }
            while self.peek() == Some('!') {
                self.i += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    /// A line number, `$`, `first~step`, `+N`, `~N`, `/regex/` or `\cregexc`, with `I`/`M`.
    fn address(&mut self) -> Result<(), &'static str> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() || c == '+' || c == '~' => {
                self.i += 1;
                while matches!(self.peek(), Some(c) if c.is_ascii_digit() || c == '~') {
                    self.i += 1;
                }
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.delimited('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.i += 1;
                let delimiter = self.next().ok_or("unreadable")?;
                self.delimited(delimiter)?;
                self.regex_flags();
            }
            _ => {}
        }
        Ok(())
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    /// Text up to an unescaped `delimiter`, which is consumed.
    fn delimited(&mut self, delimiter: char) -> Result<(), &'static str> {
        loop {
            match self.next() {
                None => return Err("unreadable"),
                Some('\\') => {
                    self.next().ok_or("unreadable")?;
                }
                Some(c) if c == delimiter => return Ok(()),
                Some('\n') if delimiter != '\n' => return Err("unreadable"),
                Some(_) => {}
            }
        }
    }

    /// `a`, `i`, `c` text: one line, continued while a line ends with a backslash.
    fn text(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.i += 1;
                }
                '\n' => break,
                _ => {}
            }
        }
    }

    fn command(&mut self) -> Result<(), &'static str> {
        let c = self.next().ok_or("unreadable")?;
        match c {
            '{' | '}' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
            | 'z' | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                self.skip_blanks();
                while matches!(self.peek(), Some(c) if c.is_ascii_digit()) {
                    self.i += 1;
                }
            }
            '#' | ':' => self.rest_of_line(c == ':'),
            'b' | 't' | 'T' | 'v' => self.rest_of_line(true),
            'r' | 'R' => self.rest_of_line(false),
            'a' | 'i' | 'c' => self.text(),
            'w' => return Err("w"),
            'W' => return Err("W"),
            'e' => return Err("e"),
            's' => {
                let delimiter = self.next().ok_or("unreadable")?;
                if delimiter == '\n' || delimiter == '\\' {
                    return Err("unreadable");
                }
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
                loop {
                    match self.peek() {
                        Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.i += 1,
                        Some(c) if c.is_ascii_digit() => self.i += 1,
                        Some('e') => return Err("s///e"),
                        Some('w') => return Err("s///w"),
                        Some(' ' | '\t' | '\n' | ';' | '}' | '#') | None => break,
                        Some(_) => return Err("unreadable"),
                    }
                }
            }
            'y' => {
                let delimiter = self.next().ok_or("unreadable")?;
                if delimiter == '\n' || delimiter == '\\' {
                    return Err("unreadable");
                }
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
            }
            _ => return Err("unreadable"),
        }
        Ok(())
    }
}

/// What in an awk program runs a program, writes a file or loads code: `system(…)`, a pipe
/// (`print | "cmd"`, `"cmd" | getline`, `|&`), output redirection in `print`/`printf`
/// (`> file`, `>> file`), `@load` and `@include`; `Some("unreadable")` for an unterminated
/// string or regular expression. Comparisons (`$1 > 5`) are not redirections.
pub fn awk_risk(program: &str) -> Option<&'static str> {
    let s: Vec<char> = program.chars().collect();
    let mut i = 0;
    // Whether the last token was an operand, which makes a `/` a division.
    let mut after_operand = false;
    // Inside a print or printf statement: the parenthesis depth it started at.
    let mut print_depth: Option<usize> = None;
    let mut depth = 0usize;
    while i < s.len() {
        let c = s[i];
        match c {
            '#' => {
                while i < s.len() && s[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' => {
                i += 1;
                loop {
                    match s.get(i) {
                        None | Some('\n') => return Some("unreadable"),
                        Some('\\') => i += 2,
                        Some('"') => break,
                        Some(_) => i += 1,
                    }
                }
                after_operand = true;
            }
            '/' if !after_operand => {
                i += 1;
                let mut bracket = false;
                loop {
                    match s.get(i) {
                        None | Some('\n') => return Some("unreadable"),
                        Some('\\') => i += 2,
                        Some('[') => {
                            bracket = true;
                            i += 1;
                        }
                        Some(']') => {
                            bracket = false;
                            i += 1;
                        }
                        Some('/') if !bracket => break,
                        Some(_) => i += 1,
                    }
                }
                after_operand = true;
            }
            '@' => {
                let word: String = s[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                if word == "load" || word == "include" || word == "namespace" {
                    return Some(if word == "load" { "@load" } else { "@include" });
                }
                // gawk's indirect function calls (`@name()`) run a function the program names
                // at run time.
                return Some("unreadable");
            }
            '|' => {
                if s.get(i + 1) == Some(&'|') {
                    i += 2;
                    after_operand = false;
                    continue;
                }
                return Some("|");
            }
            '>' if print_depth == Some(depth) => return Some(">"),
            '(' | '[' => {
                depth += 1;
                after_operand = false;
            }
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                after_operand = true;
            }
            ';' | '\n' | '{' | '}' => {
                if print_depth.is_some_and(|d| depth <= d) {
                    print_depth = None;
                }
                after_operand = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == '_') {
                    i += 1;
                }
                let word: String = s[start..i].iter().collect();
                match word.as_str() {
                    "system" => return Some("system"),
                    "print" | "printf" => {
                        print_depth = Some(depth);
                        after_operand = false;
                    }
                    "getline" => after_operand = true,
                    _ => after_operand = true,
                }
                continue;
            }
            c if c.is_ascii_digit() || c == '$' => after_operand = c != '$',
            c if c.is_whitespace() => {}
            _ => after_operand = false,
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_scripts_that_only_edit() {
        for script in [
            "s/a/b/g",
            "s|a|b|2p",
            "s,a\\,b,c,",
            "1d;$d",
            "/x/,/y/{s/a/b/;p}",
            "/foo/I!d",
            "\\%x%d",
            "y/abc/xyz/",
            "1~2n",
            "0,/re/s//X/",
            ":a;N;$!ba;s/\\n/ /g",
            "a hello; w not a command",
            "i\\\nline one\\\nline two",
            "r other.txt",
            "s/x/y/;# w comment",
            "q5",
            "l 40",
            "$!N",
            "s/a/e/",
        ] {
            assert_eq!(sed_risk(script), None, "{script:?}");
        }
    }

    #[test]
    fn sed_scripts_that_run_or_write() {
        for (script, risk) in [
            ("w out.txt", "w"),
            ("1W out.txt", "W"),
            ("e rm -rf x", "e"),
            ("1e", "e"),
            ("s/a/b/e", "s///e"),
            ("s/a/b/gw out", "s///w"),
            ("s|x|rm y|e", "s///e"),
            ("/x/{p;w out\n}", "w"),
            ("1d;e touch x", "e"),
            ("2!e", "e"),
            ("b end;w x", "w"),
            ("s/a/b", "unreadable"),
            ("s/a/b/ge", "s///e"),
            ("k", "unreadable"),
            ("s/a/b/x", "unreadable"),
            ("$!{$!w x\n}", "w"),
            ("y/a/b", "unreadable"),
        ] {
            assert_eq!(sed_risk(script), Some(risk), "{script:?}");
        }
    }

    #[test]
    fn awk_programs() {
        for program in [
            "{print $1}",
            "$3 > 100 {print}",
            "{ if ($1 > 5) print $2 }",
            "{print ($1 > 2)}",
            "/a|b/ {n++} END {print n}",
            "{ a = 4 / 2; print a }",
            "BEGIN {FS=\":\"} {print $1 \"|\" $2}",
            "$1 == \"x\" || $2 > 3",
            "{ print $1; if (x > 1) y = 2 }",
        ] {
            assert_eq!(awk_risk(program), None, "{program:?}");
        }
        for (program, risk) in [
            ("BEGIN {system(\"rm x\")}", "system"),
            ("{print | \"sh\"}", "|"),
            ("BEGIN {\"id\" | getline x}", "|"),
            ("{print > \"out.txt\"}", ">"),
            ("{printf \"%s\", $1 >> \"out\"}", ">"),
            ("{ print $1 > $2 }", ">"),
            ("@load \"filefuncs\"", "@load"),
            ("@include \"x.awk\"", "@include"),
            ("{print \"unterminated}", "unreadable"),
            ("{ print |& \"cmd\" }", "|"),
        ] {
            assert_eq!(awk_risk(program), Some(risk), "{program:?}");
        }
    }
}
