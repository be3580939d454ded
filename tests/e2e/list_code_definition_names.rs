//! list_code_definition_names through the real plugin in an in-process host.
//!
//! One small source file per language with its whole expected text (each checked against
//! Cline's own parser and queries; the one difference is noted on the Rust test), then which
//! files of a directory are read, the file limits, and the errors.

use std::fs;
use std::path::Path;

use serde_json::{json, Value};
use tool_api::texts;
use toolhost::CallOutcome;
use toolhost_tests::{workdir, PluginDir};

use crate::in_process;

const TOOL: &str = "list_code_definition_names";

const NO_DEFINITIONS: &str = "No source code definitions found.";

fn plugins() -> PluginDir {
    let plugins = PluginDir::empty();
    plugins.add_library(TOOL);
    plugins
}

/// Writes `files` into `src/` of a fresh workspace, lists `src` and compares the whole text.
fn check(files: &[(&str, &str)], expected: &str) {
    let ws = workdir();
    for (name, text) in files {
        write(ws.path(), &format!("src/{name}"), text);
    }
    let outcome = call(ws.path(), json!({"path": "src"}));
    assert_eq!(outcome.model_text(), expected);
    assert!(!outcome.is_error());
}

/// Writes a file, creating its parent directories.
fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// One call in a fresh host over the workspace `ws`.
fn call(ws: &Path, params: Value) -> CallOutcome {
    let plugins = plugins();
    let (host, _ui) = in_process::host(plugins.path(), ws);
    host.call(TOOL, &params.to_string())
}

/// Rust: structs and functions, including methods and trait default methods. Deliberate
/// deviation: Cline prints each method line twice (two of its patterns match it); here once.
/// Enums and traits are not definitions in Cline's query.
#[test]
fn rust() {
    check(
        &[(
            "shapes.rs",
            r#"use std::fmt;

/// A point on the plane.
pub struct Point {
    x: i32,
    y: i32,
}

pub enum Shape {
    Dot(Point),
}

pub trait Area {
    fn area(&self) -> f64;
    fn name(&self) -> &str {
        "shape"
    }
}

impl Point {
    pub fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub fn origin() -> Point {
    Point::new(0, 0)
}
"#,
        )],
        "\
shapes.rs
|----
│pub struct Point {
|----
│    fn name(&self) -> &str {
|----
│    pub fn new(x: i32, y: i32) -> Self {
|----
│    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
|----
│pub fn origin() -> Point {
|----

",
    );
}

/// JavaScript: functions, classes, methods except the constructor, variables bound to
/// functions; a comment right above a definition joins its span (no `|----` before `add`).
#[test]
fn javascript() {
    check(
        &[(
            "app.js",
            r#"import { readFile } from 'fs';

// Adds two numbers.
function add(a, b) {
  return a + b;
}

export class Counter {
  constructor() {
    this.count = 0;
  }

  increment() {
    this.count += 1;
  }
}

const double = (n) => n * 2;
var legacy = function () {};
const LIMIT = 10;

function* ids() {
  yield 1;
}
"#,
        )],
        "\
app.js
|----
│function add(a, b) {
|----
│export class Counter {
|----
│  increment() {
|----
│const double = (n) => n * 2;
│var legacy = function () {};
|----
│function* ids() {
|----

",
    );
}

/// JSX files use the JavaScript grammar and query.
#[test]
fn jsx() {
    check(
        &[(
            "view.jsx",
            r#"import React from 'react';

export const Button = ({ label }) => {
  return <button>{label}</button>;
};

export function App() {
  return (
    <div>
      <Button label="ok" />
    </div>
  );
}

class Legacy extends React.Component {
  render() {
    return <span />;
  }
}
"#,
        )],
        "\
view.jsx
|----
│export const Button = ({ label }) => {
|----
│export function App() {
|----
│class Legacy extends React.Component {
│  render() {
|----

",
    );
}

/// TypeScript: classes (abstract too), method signatures, functions and overloads, modules;
/// interface names, type aliases and arrow functions are not listed, as in Cline.
#[test]
fn typescript() {
    check(
        &[(
            "server.ts",
            r#"export interface Options {
  port: number;
  listen(port: number): void;
}

export type Handler = (path: string) => void;

export abstract class Base {
  abstract close(): void;
}

export class Server extends Base {
  constructor(private opts: Options) {
    super();
  }

  close(): void {}
}

export function createServer(opts: Options): Server {
  return new Server(opts);
}

export function parse(a: string): string;
export function parse(a: any): any {
  return a;
}

module Legacy {
  export const version = 1;
}
"#,
        )],
        "\
server.ts
|----
│  listen(port: number): void;
|----
│export abstract class Base {
│  abstract close(): void;
|----
│export class Server extends Base {
│  constructor(private opts: Options) {
|----
│  close(): void {}
|----
│export function createServer(opts: Options): Server {
|----
│export function parse(a: string): string;
│export function parse(a: any): any {
|----
│module Legacy {
|----

",
    );
}

/// TSX: the TSX grammar with the TypeScript query.
#[test]
fn tsx() {
    check(
        &[(
            "panel.tsx",
            r#"import React from 'react';

interface Props {
  title: string;
  onOpen(): void;
}

export function Header({ title }: Props) {
  return <h1>{title}</h1>;
}

export class Panel extends React.Component<Props> {
  render() {
    return <div>{this.props.title}</div>;
  }
}

export const Footer = () => <footer />;
"#,
        )],
        "\
panel.tsx
|----
│  onOpen(): void;
|----
│export function Header({ title }: Props) {
|----
│export class Panel extends React.Component<Props> {
│  render() {
|----

",
    );
}

/// Python: classes and functions at any depth.
#[test]
fn python() {
    check(
        &[(
            "models.py",
            r#""""Models."""
import dataclasses


class Animal:
    """An animal."""

    def __init__(self, name):
        self.name = name

    @property
    def loud(self):
        return self.name.upper()


def make(name):
    def build():
        return Animal(name)
    return build()


async def fetch():
    pass
"#,
        )],
        "\
models.py
|----
│class Animal:
|----
│    def __init__(self, name):
|----
│    def loud(self):
|----
│def make(name):
│    def build():
|----
│async def fetch():
|----

",
    );
}

/// Go: type specs, functions and methods.
#[test]
fn go() {
    check(
        &[(
            "main.go",
            r#"package main

import "fmt"

// Point is a point.
type Point struct {
	X, Y int
}

type Reader interface {
	Read() int
}

// Norm returns the squared norm.
func (p *Point) Norm() int {
	return p.X*p.X + p.Y*p.Y
}

var origin = Point{}

func main() {
	fmt.Println(origin.Norm())
}
"#,
        )],
        "\
main.go
|----
│type Point struct {
|----
│type Reader interface {
|----
│func (p *Point) Norm() int {
|----
│func main() {
|----

",
    );
}

/// Java: classes, interfaces and methods (constructors and enums are not listed).
#[test]
fn java() {
    check(
        &[(
            "Greeter.java",
            r#"package demo;

public class Greeter {
    private final String name;

    public Greeter(String name) {
        this.name = name;
    }

    public String greet() {
        return "Hello " + name;
    }
}

interface Speaker {
    void speak();
}

enum Mood { HAPPY, SAD }
"#,
        )],
        "\
Greeter.java
|----
│public class Greeter {
|----
│    public String greet() {
|----
│interface Speaker {
│    void speak();
|----

",
    );
}

/// C and headers: structs with a body, named unions, function declarators (prototypes too)
/// and typedefs; the line printed is the name's (`push(` below its return type).
#[test]
fn c() {
    check(
        &[
            (
                "list.c",
                r#"#include <stdlib.h>
#include "list.h"

struct node {
    int value;
    struct node *next;
};

union number {
    int i;
    float f;
} zero;

static int count;

int
push(list_t *list, int value)
{
    return 0;
}
"#,
            ),
            (
                "list.h",
                r#"#ifndef LIST_H
#define LIST_H

typedef struct list list_t;

int push(list_t *list, int value);
int pop(list_t *list);

#endif
"#,
            ),
        ],
        "\
list.c
|----
│struct node {
|----
│union number {
|----
│push(list_t *list, int value)
|----

list.h
|----
│typedef struct list list_t;
|----
│int push(list_t *list, int value);
│int pop(list_t *list);
|----

",
    );
}

/// C++ and headers: classes, structs, qualified and member function declarators, typedefs.
#[test]
fn cpp() {
    check(
        &[
            (
                "shape.cpp",
                r#"#include "shape.hpp"

namespace geo {

double Shape::area() const {
    return 0.0;
}

struct Circle : Shape {
    double r;
    double area() const override { return 3.14 * r * r; }
};

}  // namespace geo

int main() {
    return 0;
}
"#,
            ),
            (
                "shape.hpp",
                r#"#pragma once

namespace geo {

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const;
};

typedef unsigned long size_type;

}  // namespace geo
"#,
            ),
        ],
        "\
shape.cpp
|----
│double Shape::area() const {
|----
│struct Circle : Shape {
|----
│    double area() const override { return 3.14 * r * r; }
|----
│int main() {
|----

shape.hpp
|----
│class Shape {
|----
│    virtual double area() const;
|----
│typedef unsigned long size_type;
|----

",
    );
}

/// Only the source files directly inside the directory, by name: other files, files without
/// definitions, `.clineignore`d files and subdirectories (even one named like a source file) are
/// left out. The UI gets the same text.
#[test]
fn a_mixed_directory() {
    let ws = workdir();
    write(ws.path(), ".clineignore", "src/secret.py\n");
    write(ws.path(), "src/gamma.rs", "pub struct Gamma;\n");
    write(ws.path(), "src/alpha.py", "def alpha():\n    pass\n");
    write(ws.path(), "src/beta.ts", "export function beta() {}\n");
    write(ws.path(), "src/secret.py", "def hidden():\n    pass\n");
    write(ws.path(), "src/empty.go", "package main\n");
    write(ws.path(), "src/README.md", "# Read me\n");
    write(ws.path(), "src/data.json", "{}\n");
    write(ws.path(), "src/Makefile", "all:\n\techo\n");
    write(ws.path(), "src/UPPER.PY", "def shout():\n    pass\n");
    write(ws.path(), "src/nested/deep.rs", "fn deep() {}\n");
    write(ws.path(), "src/lib.rs/inner.rs", "fn inner() {}\n");
    let expected = "\
alpha.py
|----
│def alpha():
|----

beta.ts
|----
│export function beta() {}
|----

gamma.rs
|----
│pub struct Gamma;
|----

";
    let plugins = plugins();
    let (host, ui) = in_process::host(plugins.path(), ws.path());
    let outcome = host.call(TOOL, r#"{"path":"src"}"#);
    assert_eq!(outcome.model_text(), expected);
    assert_eq!(
        outcome.description,
        "[list_code_definition_names for 'src']"
    );
    let shown: Vec<Value> = ui
        .of_kind("tool")
        .iter()
        .map(|text| serde_json::from_str(text).unwrap())
        .collect();
    assert_eq!(
        shown,
        [json!({
            "tool": "listCodeDefinitionNames",
            "path": "src",
            "content": expected,
            "operationIsLocatedInWorkspace": true,
        })]
    );
    // The subdirectory on its own.
    assert_eq!(
        host.call(TOOL, r#"{"path":"src/nested"}"#).model_text(),
        "deep.rs\n|----\n│fn deep() {}\n|----\n\n"
    );
}

/// At most 50 source files are read (the first by name), and only the first 200 files of the
/// directory are looked at.
#[test]
fn the_file_limits() {
    let ws = workdir();
    for i in 0..55 {
        write(
            ws.path(),
            &format!("many/m{i:02}.py"),
            &format!("def f{i:02}():\n    pass\n"),
        );
    }
    let expected: String = (0..50)
        .map(|i| format!("m{i:02}.py\n|----\n│def f{i:02}():\n|----\n\n"))
        .collect();
    assert_eq!(
        call(ws.path(), json!({"path": "many"})).model_text(),
        expected
    );

    for i in 0..200 {
        write(ws.path(), &format!("crowded/a{i:03}.txt"), "text\n");
    }
    write(ws.path(), "crowded/z.py", "def late():\n    pass\n");
    assert_eq!(
        call(ws.path(), json!({"path": "crowded"})).model_text(),
        NO_DEFINITIONS
    );
}

/// An empty directory, or one without definitions, is not an error.
#[test]
fn nothing_to_list() {
    let ws = workdir();
    fs::create_dir(ws.path().join("empty")).unwrap();
    write(ws.path(), "plain/notes.txt", "def not_code():\n");
    write(ws.path(), "plain/consts.py", "LIMIT = 3\n");
    for dir in ["empty", "plain"] {
        let outcome = call(ws.path(), json!({"path": dir}));
        assert_eq!(outcome.model_text(), NO_DEFINITIONS, "{dir}");
        assert!(!outcome.is_error(), "{dir}");
    }
}

/// A missing directory and a file are errors that count as mistakes.
#[test]
fn a_missing_directory_or_a_file_is_an_error() {
    let ws = workdir();
    write(ws.path(), "src/main.py", "def main():\n    pass\n");
    let plugins = plugins();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let cases = [
        (
            "gone",
            "This directory does not exist or you do not have permission to access it.",
        ),
        (
            "src/main.py",
            "The provided path is a file, not a directory. To view this file use read_file instead, or pass the parent directory to list_code_definition_names.",
        ),
    ];
    for (path, message) in cases {
        let before = host.task().mistakes();
        let outcome = host.call(TOOL, &json!({"path": path}).to_string());
        assert_eq!(outcome.model_text(), texts::tool_error(message), "{path}");
        assert_eq!(host.task().mistakes(), before + 1, "{path}");
    }
}

/// A missing or blank path is the missing-parameter error.
#[test]
fn the_path_is_required() {
    let ws = workdir();
    let missing = texts::tool_error(&texts::missing_param_error("path"));
    for params in [json!({}), json!({"path": ""}), json!({"path": "  "})] {
        assert_eq!(
            call(ws.path(), params.clone()).model_text(),
            missing,
            "{params}"
        );
    }
}

/// A `dir/` rule blocks the files inside but not the bare directory path, so the listing runs and
/// finds nothing, as in Cline. Deliberate deviation: a rule that matches the directory path itself
/// (`vault`) makes the host refuse the call with the `.clineignore` error (the tool declares
/// `path` as a path parameter); Cline would answer "No source code definitions found.".
#[test]
fn ignored_directories() {
    let ws = workdir();
    write(ws.path(), ".clineignore", "private/\nvault\n");
    write(ws.path(), "private/keys.py", "def key():\n    pass\n");
    write(ws.path(), "vault/keys.py", "def key():\n    pass\n");
    assert_eq!(
        call(ws.path(), json!({"path": "private"})).model_text(),
        NO_DEFINITIONS
    );
    assert_eq!(
        call(ws.path(), json!({"path": "vault"})).model_text(),
        texts::tool_error(&texts::clineignore_error("vault"))
    );
}
