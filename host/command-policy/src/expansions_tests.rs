use super::*;

#[test]
fn numbers_and_operators_only() {
    for expr in [
        "1024*1024",
        "0x10 + 2#101",
        "64#@_ - 010",
        "(1 + 2) * 3 ? 4 : 5",
        "1 << 2 | 3 && !0",
        "$# + 1",
        "$? == 0",
        "${#HOME} > 3",
        "",
        "\"1\" + 2",
    ] {
        assert!(numeric_only(expr), "{expr:?}");
    }
    for expr in [
        "y", "i + 1", "a[1]", "$x", "$(ls)", "${x}", "${#a[i]}", "'1'", "1\\+2", "x = 1", "`ls`",
        "$1",
    ] {
        assert!(!numeric_only(expr), "{expr:?}");
    }
}

fn words(line: &str) -> Vec<Word> {
    line.split(' ').map(Word::literal).collect()
}

#[test]
fn builtins_that_evaluate_names() {
    for line in [
        "let y",
        "let i++",
        "declare -i x=1",
        "local -i x",
        "typeset -ri x=5",
        "declare -n r=x",
        "declare a[i]=1",
        "declare a=([k]=1)",
        "read a[i]",
        "read -a a[i]",
        "printf -v a[i] x",
        "printf -va[i] x",
        "test -v a[i]",
        "[ -v a[i] ]",
        "wait -n -p a[i]",
        "unset a[i]",
        "getopts ab a[i]",
        "export PS4=$x",
        "declare PROMPT_COMMAND=ls",
        "read PS4",
        "printf -v PS4 x",
    ] {
        assert!(builtin(&words(line)).is_some(), "{line}");
    }
    for line in [
        "let 1+2",
        "declare -i",
        "declare -a x",
        "declare x=1",
        "declare a[1]=x",
        "export PATH=/bin",
        "export -n x",
        "read -r line",
        "read -p prompt: -t 5 x",
        "printf -v x %s y",
        "printf %s a[i]",
        "test -v x",
        "[ a[i] = x ]",
        "unset x y",
        "unset a[0]",
        "mapfile -t lines",
        "local x=1",
        "export PS4=+",
        "unset PS4",
    ] {
        assert_eq!(builtin(&words(line)), None, "{line}");
    }
}

#[test]
fn prompt_variables() {
    assert!(prompt_assignment("PS4=$(rm x)").is_some());
    assert!(prompt_assignment("PS1=\\$").is_some());
    assert!(prompt_assignment("PROMPT_COMMAND=ls").is_some());
    assert!(prompt_assignment("PS4=+ ").is_none());
    assert!(prompt_assignment("X=$(ls)").is_none());
}
