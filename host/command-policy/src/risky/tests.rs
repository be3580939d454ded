use super::*;

fn words(line: &str) -> Vec<Word> {
    line.split(' ').map(Word::literal).collect()
}

fn options(line: &str) -> Vec<String> {
    find(&words(line)).into_iter().map(|r| r.option).collect()
}

#[test]
fn git_options() {
    assert_eq!(options("git -c alias.x=!rm x"), ["-c"]);
    assert_eq!(options("git -calias.x=!rm x"), ["-c"]);
    assert_eq!(
        options("git --config-env=core.pager=P log"),
        ["--config-env"]
    );
    assert_eq!(options("git --exec-path=/tmp log"), ["--exec-path"]);
    assert!(options("git --exec-path").is_empty());
    assert_eq!(options("git log --output=x"), ["--output"]);
    assert_eq!(options("git log --outp=x"), ["--output"]);
    assert_eq!(options("git diff --output x"), ["--output"]);
    assert_eq!(options("git format-patch -o dir"), ["-o"]);
    assert_eq!(
        options("git format-patch --output-directory dir"),
        ["--output-directory"]
    );
    assert_eq!(options("git archive -o x.tar HEAD"), ["-o"]);
    assert_eq!(options("git archive --exec=x --remote=. HEAD"), ["--exec"]);
    assert_eq!(options("git clone -u x url"), ["-u"]);
    assert_eq!(options("git clone --upload-pack=x url"), ["--upload-pack"]);
    assert_eq!(options("git clone --template=t url"), ["--template"]);
    assert_eq!(
        options("git fetch --upload-pack x origin"),
        ["--upload-pack"]
    );
    assert_eq!(options("git ls-remote -u x url"), ["-u"]);
    assert_eq!(
        options("git push --receive-pack=x origin"),
        ["--receive-pack"]
    );
    assert_eq!(options("git rebase --exec make main"), ["--exec"]);
    assert_eq!(options("git rebase -x make main"), ["-x"]);
    assert_eq!(options("git rebase -ix make main"), ["-x"]);
    assert_eq!(options("git bisect run make"), ["bisect run"]);
    assert_eq!(options("git submodule foreach ls"), ["submodule foreach"]);
    assert_eq!(
        options("git submodule --quiet foreach ls"),
        ["submodule foreach"]
    );
    assert_eq!(options("git difftool -x diff"), ["-x"]);
    assert_eq!(options("git difftool --extcmd=diff"), ["--extcmd"]);
    assert_eq!(options("git grep -Oless x"), ["-O"]);
    assert_eq!(
        options("git grep --open-files-in-pager x"),
        ["--open-files-in-pager"]
    );
    assert_eq!(
        options("git filter-branch --tree-filter x"),
        ["filter-branch"]
    );
    assert_eq!(options("git clone ext::sh%-c%x dir"), ["ext::"]);
    assert_eq!(options("git fetch fd::3"), ["fd::"]);
    assert_eq!(options("git config user.name x"), ["config (a write)"]);
    assert_eq!(
        options("git config --unset user.name"),
        ["config (a write)"]
    );
    assert_eq!(
        options("git config --global core.pager x"),
        ["config (a write)"]
    );
    for safe in [
        "git status",
        "git log --oneline -n 5",
        "git push -u origin main",
        "git add -u",
        "git grep -o x",
        "git ls-files -o",
        "git clone -o upstream url",
        "git fetch -u origin",
        "git config --get user.name",
        "git config user.name",
        "git config --list",
        "git config -l",
        "git config get user.name",
        "git -C sub status",
        "git --git-dir=.git log",
        "git --no-pager log",
        "git commit -m -c",
        "git rebase -i main",
        "git diff --no-index -- --output=x f",
    ] {
        assert!(options(safe).is_empty(), "{safe}: {:?}", options(safe));
    }
}

#[test]
fn git_config_values_that_are_code() {
    let code = |line: &str| find(&words(line)).into_iter().find_map(|r| r.code);
    assert_eq!(code("git -c alias.x=!rm x"), Some("rm".to_string()));
    assert_eq!(code("git -ccore.pager=less log"), Some("less".to_string()));
    assert_eq!(
        code("git -c core.sshCommand=ssh fetch"),
        Some("ssh".to_string())
    );
    assert_eq!(code("git -c alias.x=log x"), None);
    assert_eq!(code("git -c user.name=x commit"), None);
}

#[test]
fn other_programs() {
    for (line, expected) in [
        ("find . -name x -exec ls {} ;", vec!["-exec"]),
        ("find . -delete", vec!["-delete"]),
        ("find . -fprint out", vec!["-fprint"]),
        (
            "find . -execdir a ; -okdir b ; -ok c ; -fls x -fprintf y z -fprint0 w",
            vec!["-execdir", "-okdir", "-ok", "-fls", "-fprintf", "-fprint0"],
        ),
        ("fd -x rm", vec!["-x"]),
        ("fd x --exec-batch rm", vec!["--exec-batch"]),
        ("sed -i s/a/b/ f", vec!["-i"]),
        ("sed -ni.bak s/a/b/ f", vec!["-i"]),
        ("sed --in-place s/a/b/ f", vec!["--in-place"]),
        ("sed s/a/b/ f --in-pl", vec!["--in-place"]),
        ("sed -f script f", vec!["-f"]),
        ("sed s/a/b/w f", vec!["sed script (s///w)"]),
        ("sed -e p -e w f", vec!["sed script (w)"]),
        ("sed --expression=1e f", vec!["sed script (e)"]),
        ("sed --expr 1e 1d", vec!["sed script (e)"]),
        ("awk --so BEGIN{system(x)} 1", vec!["awk program (system)"]),
        ("sed -n 1e f", vec!["sed script (e)"]),
        ("awk {system(x)} f", vec!["awk program (system)"]),
        ("gawk -f prog.awk f", vec!["-f"]),
        ("awk -l x {}", vec!["-l"]),
        ("mawk -W exec f", vec!["-W"]),
        ("awk -F: {print>x}", vec!["awk program (>)"]),
        ("tar --to-command=sh -xf a", vec!["--to-command"]),
        ("tar --to-com=sh -xf a", vec!["--to-command"]),
        (
            "tar -x --checkpoint-action=exec=sh -f a",
            vec!["--checkpoint-action"],
        ),
        ("tar -I sh -xf a", vec!["-I"]),
        ("tar -xIsh -f a", vec!["-I"]),
        ("tar xIf sh a", vec!["-I"]),
        ("tar -F sh -cf a", vec!["-F"]),
        ("tar --info-script=x -cf a", vec!["--info-script"]),
        (
            "tar --new-volume-script x -cf a",
            vec!["--new-volume-script"],
        ),
        ("tar --rsh-command=x -cf a", vec!["--rsh-command"]),
        ("rg --pre sh x", vec!["--pre"]),
        ("rg --pre=sh x", vec!["--pre"]),
        ("sort -o out in", vec!["-o"]),
        ("sort -uo out in", vec!["-o"]),
        ("sort --output=out in", vec!["--output"]),
        ("sort --compress-program=sh in", vec!["--compress-program"]),
        ("uniq in out", vec!["the file uniq writes"]),
        ("tee out", vec!["a file tee writes"]),
        ("tee -a a b", vec!["a file tee writes", "a file tee writes"]),
        ("dd if=a of=b", vec!["of="]),
        ("curl -o out url", vec!["-o"]),
        ("curl -O url", vec!["-O"]),
        ("curl -sSLo out url", vec!["-o"]),
        ("curl --output out url", vec!["--output"]),
        ("curl -K cfg", vec!["-K"]),
        ("wget -O out url", vec!["-O"]),
        ("wget --output-document=out url", vec!["--output-document"]),
        ("wget -e robots=off url", vec!["-e"]),
        ("rsync -e sh a b", vec!["-e"]),
        ("rsync -ave sh a b", vec!["-e"]),
        ("rsync --rsync-path=x a b", vec!["--rsync-path"]),
        ("ssh -o ProxyCommand=sh host", vec!["-o ProxyCommand"]),
        ("ssh -oLocalCommand=sh host", vec!["-o LocalCommand"]),
        ("ssh -F cfg host", vec!["-F"]),
        ("scp -S sh a b", vec!["-S"]),
        ("zip -TT sh a.zip f", vec!["-TT"]),
        ("zip --unzip-command sh a.zip f", vec!["--unzip-command"]),
        ("man -P sh ls", vec!["-P"]),
        ("man --pager=sh ls", vec!["--pager"]),
        ("man -Hfirefox ls", vec!["-H"]),
    ] {
        assert_eq!(options(line), expected, "{line}");
    }
    for safe in [
        "find . -name x -print",
        "fd -e rs x",
        "sed -n 1,5p f",
        "sed -e s/a/b/ -e p f",
        "sed --sandbox s/a/b/w f",
        "awk {print $1} f",
        "awk -F: -v x=1 {print} f",
        "gawk --sandbox {system(x)}",
        "tar -xzf a.tgz",
        "tar xzf a.tgz",
        "tar -tf a",
        "rg -e --pre x",
        "rg --pretty x",
        "sort -k 2 -t o f",
        "uniq in",
        "uniq -c in",
        "tee",
        "sort -- -o",
        "dd if=a bs=1",
        "curl -sSL url",
        "curl -d x url",
        "wget -q url",
        "rsync -av a b",
        "ssh -o BatchMode=yes host ls",
        "ssh -S ctl host",
        "zip -r a.zip d",
        "man ls",
        "ls -la",
    ] {
        assert!(options(safe).is_empty(), "{safe}: {:?}", options(safe));
    }
}

#[test]
fn fixed_characters_are_the_option() {
    let risky = find(&words("git -calias.x=y x"));
    assert_eq!(risky[0].fixed, vec![(1, 0..2)]);
    let risky = find(&words("sed -ni s/a/b/ f"));
    assert_eq!(risky[0].fixed, vec![(1, 0..3)]);
    let risky = find(&words("tar --to-command=sh -xf a"));
    assert_eq!(risky[0].fixed, vec![(1, 0..12)]);
    let risky = find(&words("git clone ext::sh dir"));
    assert_eq!(risky[0].fixed, vec![(2, 0..5)]);
}
