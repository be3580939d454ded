use super::*;

fn words(line: &str) -> Vec<Word> {
    line.split(' ').map(Word::literal).collect()
}

fn inner_of(line: &str) -> Inner<'static> {
    let all: &'static [Word] = Vec::leak(words(line));
    inner(all[0].text(), &all[1..])
}

fn command(line: &str) -> Inner<'static> {
    Inner::Command {
        words: Vec::leak(words(line)),
        appends: false,
    }
}

#[test]
fn finds_the_command_behind_options() {
    assert_eq!(inner_of("sudo -u root -E rm -rf x"), command("rm -rf x"));
    assert_eq!(inner_of("sudo -uroot rm x"), command("rm x"));
    assert_eq!(inner_of("env -i A=1 -- rm x"), command("rm x"));
    assert_eq!(inner_of("env -u HOME A=1 rm x"), command("rm x"));
    assert_eq!(inner_of("timeout -s KILL 5 rm x"), command("rm x"));
    assert_eq!(inner_of("timeout --signal=KILL 5 rm x"), command("rm x"));
    assert_eq!(inner_of("nice -n 5 rm x"), command("rm x"));
    assert_eq!(inner_of("nice -5 rm x"), command("rm x"));
    assert_eq!(inner_of("chroot /srv rm x"), command("rm x"));
    assert_eq!(
        inner_of("xargs -0 -n 1 rm"),
        Inner::Command {
            words: Vec::leak(words("rm")),
            appends: true
        }
    );
    assert_eq!(inner_of("timeout 5"), Inner::Nothing);
    assert_eq!(inner_of("ls -la"), Inner::Nothing);
    assert_eq!(inner_of("command -v rm"), Inner::Nothing);
}

#[test]
fn follows_code_strings() {
    let code = |s: &str| Inner::Code(Some(s.to_string()));
    assert_eq!(inner_of("bash -c rm"), code("rm"));
    assert_eq!(inner_of("bash -lc rm"), code("rm"));
    assert_eq!(inner_of("sh -e -o pipefail -c rm"), code("rm"));
    assert_eq!(inner_of("bash script.sh"), Inner::Nothing);
    assert_eq!(inner_of("bash /dev/stdin"), Inner::Stdin { posix: true });
    assert_eq!(inner_of("source /dev/fd/3"), Inner::Opaque);
    assert_eq!(
        inner_of("hash -p /bin/rm ls"),
        Inner::LatentCode("'/bin/rm' \"$@\"".to_string())
    );
    assert_eq!(inner_of("bash"), Inner::Stdin { posix: true });
    assert_eq!(inner_of("eval rm -rf x"), code("rm -rf x"));
    assert_eq!(inner_of("sudo -s rm -rf x"), code("rm -rf x"));
    assert_eq!(inner_of("su root -c rm"), code("rm"));
    assert_eq!(inner_of("flock /tmp/l -c rm"), code("rm"));
    assert_eq!(inner_of("watch -n 1 rm x"), code("rm x"));
    assert_eq!(inner_of("watch -x rm x"), command("rm x"));
    assert_eq!(inner_of("trap rm EXIT"), code("rm"));
    assert_eq!(inner_of("fish -c rm"), Inner::Opaque);
    assert_eq!(inner_of("env -S rm"), Inner::Opaque);
    assert_eq!(
        inner_of("alias r=rm"),
        Inner::LatentCode("rm \"$@\"".to_string())
    );
}

#[test]
fn finds_exec_clauses() {
    let Inner::Commands(list) = inner_of("find . -name x -exec rm -f {} ; -print") else {
        panic!("no commands");
    };
    assert_eq!(list.len(), 1);
    assert_eq!(list[0][0].text(), "rm");
    assert_eq!(list[0][2].template, vec![Glob::Any]);
}
