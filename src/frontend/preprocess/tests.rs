//! Unit tests of the preprocessor: replacement, conditionals, includes, provenance.

use super::*;
use crate::frontend::{parse_unit, DiagKind};

/// Files in memory.
struct Mem(Vec<(&'static str, &'static str)>);

impl Loader for Mem {
    fn load(&self, path: &Path) -> std::io::Result<String> {
        self.0
            .iter()
            .find(|(p, _)| normalize(Path::new(p)) == path)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }
}

fn run_with(
    text: &str,
    files: Vec<(&'static str, &'static str)>,
    opts: &PpOptions,
) -> Result<Unit, Diagnostic> {
    preprocess("dir/main.c", text, Lang::C, &[], opts, &Mem(files))
}

/// `main` (as `dir/main.c`) with the headers `files`, preprocessed, parsed and lowered.
fn parse_in_memory(main: &str, files: Vec<(&'static str, &'static str)>) -> crate::ir::Program {
    parse_unit(
        "dir/main.c",
        main,
        Lang::C,
        &[],
        &PpOptions::default(),
        &Mem(files),
    )
    .unwrap_or_else(|d| panic!("{d}\n{main}"))
}

fn run(text: &str) -> Unit {
    run_with(text, vec![], &PpOptions::default()).unwrap_or_else(|d| panic!("{d}\n{text}"))
}

fn err(text: &str, files: Vec<(&'static str, &'static str)>) -> Diagnostic {
    match run_with(text, files, &PpOptions::default()) {
        Ok(u) => panic!("expected an error, got\n{}", u.text),
        Err(d) => d,
    }
}

/// The tokens of the output, one space apart.
fn words(u: &Unit) -> String {
    let toks = lex::lex(&u.text).unwrap_or_default();
    toks.iter()
        .map(|t| t.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_file_without_directives_is_its_own_text() {
    let src = "int x; /* c */\nint main() { return x; }\n";
    let u = run(src);
    assert!(u.is_identity());
    // Directives are blanked in place: offsets before the first expansion are kept.
    let u = run("#include <stdatomic.h>\nint x;\n");
    assert_eq!(u.text.len(), "#include <stdatomic.h>\nint x;\n".len());
    assert_eq!(u.origin(23), (0, 23));
}

#[test]
fn object_and_function_like_macros() {
    let u = run("#define mo_rlx memory_order_relaxed\n#define LOAD(p) atomic_load_explicit(p, mo_rlx)\nint r = LOAD(&x);\n");
    assert_eq!(
        words(&u),
        "int r = atomic_load_explicit ( & x , memory_order_relaxed ) ;"
    );
    let u = run("#define STR(a) #a\n#define CAT(a, b) a ## b\n#define V(f, ...) f(0, ## __VA_ARGS__)\nSTR(x \"y\") CAT(fo, o) V(g) V(h, 1, 2)\n");
    assert_eq!(words(&u), "\"x \\\"y\\\"\" foo g ( 0 ) h ( 0 , 1 , 2 )");
    // Self-reference stops (hide sets); arguments are expanded first.
    let u = run("#define x x + 1\n#define F(a) a * 2\nF(x)\n");
    assert_eq!(words(&u), "x + 1 * 2");
    // A function-like macro's name alone is no use; arguments may follow the expansion.
    let u = run("#define F(a) [a]\n#define G F\nint F; G(3)\n");
    assert_eq!(words(&u), "int F ; [ 3 ]");
    // __LINE__ and __FILE__.
    let u = run("\n\nint l = __LINE__; const char *f = __FILE__;\n");
    assert_eq!(words(&u), "int l = 3 ; const char * f = \"dir/main.c\" ;");
}

#[test]
fn conditionals_with_full_expressions() {
    let src = "#define V 2\n#if V > 3 || defined(NOPE)\nint a;\n#elif (V << 2) == 8 && defined V\nint b;\n#else\nint c;\n#endif\n#ifdef V\n#undef V\n#endif\n#ifndef V\nint d;\n#endif\n";
    assert_eq!(words(&run(src)), "int b ; int d ;");
    // Unknown identifiers are 0, GCC's memory orders have their values.
    assert_eq!(
        words(&run(
            "#if UNKNOWN + __ATOMIC_ACQUIRE == 2\nint y;\n#endif\n"
        )),
        "int y ;"
    );
    // Directives inside a function.
    let u = run("int main() {\n#if 0\n  x = 1;\n#endif\n  return 0;\n}\n");
    assert_eq!(words(&u), "int main ( ) { return 0 ; }");
    let d = err("#if 1\n#else\n#else\n#endif\n", vec![]);
    assert_eq!((d.line, d.message.as_str()), (3, "`#else` after `#else`"));
    let d = err("#if 1 / 0\n#endif\n", vec![]);
    assert_eq!(d.message, "division by zero in `#if`");
}

#[test]
fn includes_guards_once_and_cycles() {
    let files = vec![
        (
            "dir/a.h",
            "#ifndef A_H\n#define A_H\n#include \"b.h\"\nint a;\n#endif\n",
        ),
        ("dir/b.h", "#pragma once\n#include \"a.h\"\nint b;\n"),
        ("inc/lib/c.h", "int c;\n"),
    ];
    let opts = PpOptions {
        include_dirs: vec!["inc".into()],
        ..PpOptions::default()
    };
    let u = run_with("#include \"a.h\"\n#include \"a.h\"\n#include \"b.h\"\n#include <lib/c.h>\n#include <stdio.h>\n", files.clone(), &opts).unwrap();
    assert_eq!(words(&u), "int b ; int a ; int c ;");
    assert_eq!(u.files.len(), 4);
    assert_eq!(u.files[2].name, "dir/b.h");
    // A cycle without guards.
    let cyc = vec![
        ("dir/x.h", "#include \"y.h\"\n"),
        ("dir/y.h", "\n#include \"x.h\"\n"),
    ];
    let d = err("#include \"x.h\"\n", cyc);
    assert_eq!((d.file.as_str(), d.line), ("dir/y.h", 2));
    assert_eq!(d.message, "include cycle: dir/x.h -> dir/y.h -> dir/x.h");
    let d = err("int x;\n#include \"nothere.h\"\n", vec![]);
    assert_eq!((d.line, d.column), (2, 1));
    assert!(
        d.message.starts_with("cannot find header \"nothere.h\""),
        "{}",
        d.message
    );
    let d = err("#include <lib/c.h>\n", files);
    assert!(
        d.message.starts_with("unknown system header <lib/c.h>"),
        "{}",
        d.message
    );
    let d = err("\n  #error stop here\n", vec![]);
    assert_eq!(
        (d.line, d.column, d.kind, d.message.as_str()),
        (2, 3, DiagKind::Error, "#error stop here")
    );
}

#[test]
fn spans_map_to_the_macro_use() {
    let src = "#define LOAD(p) atomic_load_explicit(p, 0)\nint r = LOAD(&x);\n";
    let u = run(src);
    let use_start = src.find("LOAD(&x)").unwrap_or(0);
    let out = u.text.find("atomic_load_explicit").unwrap_or(0);
    assert_eq!(u.start(out), (0, use_start));
    let out_end = u.text.rfind(')').unwrap_or(0) + 1;
    assert_eq!(u.end(out_end), (0, use_start + "LOAD(&x)".len()));
    assert_eq!(
        u.expansion_note(out).as_deref(),
        Some("in expansion of LOAD, defined at dir/main.c:1:1")
    );
    // A diagnostic at an argument names the argument.
    let amp = u.text.find("& x").unwrap_or(0);
    assert_eq!(u.diag_position(amp), (0, use_start + 5));
}

#[test]
fn programs_from_headers_have_spans_in_the_headers() {
    let files = vec![(
        "dir/algo.h",
        "#define mo_rel memory_order_release\n#define STORE(p, v) atomic_store_explicit(p, v, mo_rel)\natomic_int x;\nvoid *t(void *a) {\n  STORE(&x, 1);\n  return NULL;\n}\n",
    )];
    let main = "#include <pthread.h>\n#include <stdatomic.h>\n#include \"algo.h\"\nint main() {\n  pthread_t h;\n  pthread_create(&h, NULL, t, NULL);\n  pthread_join(h, NULL);\n  return 0;\n}\n";
    let p = parse_in_memory(main, files);
    assert_eq!(p.sources.headers.len(), 1);
    let h = &p.sources.headers[0];
    assert_eq!(h.name, "dir/algo.h");
    let store = p
        .stmts
        .iter()
        .find(|s| {
            s.span.start >= h.base
                && h.text
                    .get(s.span.start - h.base..)
                    .is_some_and(|t| t.starts_with("STORE"))
        })
        .map(|s| s.span);
    let store = store.unwrap_or_else(|| panic!("no statement at the STORE use: {:?}", p.stmts));
    assert_eq!((store.line, store.column), (5, 3));
    assert_eq!(
        p.sources.header(&store).map(|h| h.name.as_str()),
        Some("dir/algo.h")
    );
    // An error inside a header names the header, the use and the definition.
    let bad = vec![("dir/algo.h", "#define LOAD(p) atomic_load_explicit(p, memory_order_release)\nint main() {\n  int r = LOAD(&x);\n}\n")];
    let d = parse_unit(
        "dir/main.c",
        "atomic_int x;\n#include \"algo.h\"\n",
        Lang::C,
        &[],
        &PpOptions::default(),
        &Mem(bad),
    )
    .err()
    .unwrap_or_else(|| panic!("expected an error"));
    assert_eq!((d.file.as_str(), d.line, d.column), ("dir/algo.h", 3, 11));
    assert_eq!(
        d.message,
        "memory_order_release is not valid for a load (in expansion of LOAD, defined at dir/algo.h:1:1)"
    );
}

#[test]
fn line_directives_and_linemarkers_set_the_presumed_position() {
    // GCC's output: linemarkers with flags, a `# 0` line, a header's text inline.
    let src = "# 0 \"algo.c\"\n# 1 \"<built-in>\"\n# 1 \"algo.c\"\n# 1 \"algo.h\" 1 3 4\nint h = __LINE__;\n# 3 \"algo.c\" 2\nconst char *f = __FILE__; int l = __LINE__;\n";
    let u = run(src);
    assert_eq!(
        words(&u),
        "int h = 1 ; const char * f = \"algo.c\" ; int l = 3 ;"
    );
    let main = &u.files[0];
    let at = src.find("int h").unwrap_or(0);
    assert_eq!(main.presumed(at), ("algo.h", 1, 1));
    // `#line` with a macro-replaced number and no name keeps the last name.
    let u = run("#define BASE 40\n#line BASE\nint a;\n\nint b = __LINE__;\n");
    assert_eq!(words(&u), "int a ; int b = 42 ;");
    // Inside a skipped group it is ignored.
    let u = run("#if 0\n#line 1 \"x.c\"\n# 9 \"y.c\" 9\n#endif\nint c = __LINE__;\n");
    assert_eq!(words(&u), "int c = 5 ;");
    // A diagnostic is at the file's own position and names the presumed one.
    let d = err("#line 100 \"gen.c\"\n#error stop\n", vec![]);
    assert_eq!((d.file.as_str(), d.line, d.column), ("dir/main.c", 2, 1));
    assert_eq!(d.message, "#error stop (presumed gen.c:100:1)");
    for (bad, msg) in [
        ("#line\n", "#line: expects a line number (decimal digits)"),
        (
            "#line 0x10\n",
            "#line: expects a line number (decimal digits)",
        ),
        (
            "#line 4294967296\n",
            "#line: line number out of range (at most 2147483647)",
        ),
        ("#line 3 \"a.c\" 1\n", "#line: unexpected `1`"),
        (
            "# 3 L\"a.c\"\n",
            "linemarker: expects a file name in double quotes",
        ),
        (
            "# 3 5\n",
            "linemarker: expects a file name in double quotes",
        ),
    ] {
        assert_eq!(err(bad, vec![]).message, msg, "{bad}");
    }
}

#[test]
fn genmc_h_defines_its_annotations_and_refuses_what_is_not_modelled() {
    let src = "#include <genmc.h>\nif (__VERIFIER_final_CAS(cas(&x))) __VERIFIER_helping_CAS(cas(&y););\n__VERIFIER_optional(f());\n#if GENMC_ATTR_FINAL == 2 && defined(__VERIFIER_hp_alloc)\nint ok;\n#endif\n";
    let u = run(src);
    assert_eq!(
        words(&u),
        "if ( ( cas ( & x ) ) ) do { cas ( & y ) ; ; } while ( 0 ) ; \
         do { if ( __VERIFIER_opt_begin ( ) ) { f ( ) ; __VERIFIER_assume ( 0 ) ; } } while ( 0 ) ; \
         int ok ;"
    );
    // Provenance names fensyn's header, which is no header of the user's.
    let at = u.text.find("do").unwrap_or(0);
    assert_eq!(
        u.expansion_note(at).as_deref(),
        Some("in expansion of __VERIFIER_helping_CAS, defined by fensyn's <genmc.h>")
    );
    // The user may define them differently (GenMC's own header, copied).
    let u = run("#include <genmc.h>\n#define __VERIFIER_final_CAS(c) ({ c; })\n#include <genmc.h>\n__VERIFIER_final_CAS(1)\n");
    assert_eq!(words(&u), "( { 1 ; } )");
    let d = err(
        "#include <genmc.h>\n  void *p = __VERIFIER_hp_protect(hp, &x);\n",
        vec![],
    );
    assert_eq!((d.line, d.column, d.kind), (2, 13, DiagKind::Unsupported));
    // Without the header the names are the user's.
    assert_eq!(
        words(&run("__VERIFIER_final_CAS(1)\n")),
        "__VERIFIER_final_CAS ( 1 )"
    );
}

/// `(executions, blocked, buggy)` of a GenMC-style program under RC11.
fn explore_genmc(body: &str) -> (u64, u64, u64) {
    let main = format!("#include <stdatomic.h>\n#include <assert.h>\n#include <genmc.h>\natomic_int x;\nint main(void) {{\n{body}\n  return 0;\n}}\n");
    let p = parse_unit(
        "m.c",
        &main,
        Lang::C,
        &[],
        &PpOptions::default(),
        &Mem(vec![]),
    )
    .unwrap_or_else(|d| panic!("{d}\n{main}"));
    let r = crate::checker::check(&p, &crate::checker::CheckOptions::default());
    (r.stats.executions, r.stats.blocked, r.stats.buggy)
}

#[test]
fn genmc_annotations_keep_their_meaning() {
    // An optional block runs or not; the executions that ran it are blocked, but a bug in it
    // is still found: a failed assertion ends the execution (GenMC's `__VERIFIER_optional`).
    assert_eq!(
        explore_genmc(
            "  __VERIFIER_optional(atomic_store(&x, 1));\n  assert(atomic_load(&x) == 0);"
        ),
        (1, 1, 0)
    );
    assert_eq!(
        explore_genmc("  __VERIFIER_optional(assert(atomic_load(&x) == 1));"),
        (2, 0, 1)
    );
    // Markers and annotations do nothing; the CAS annotations are the CAS.
    let (e, b, bug) = explore_genmc(
        "  int zero = 0;\n  __VERIFIER_loop_begin();\n  __VERIFIER_spin_start();\n  __VERIFIER_annotate_write(GENMC_ATTR_LOCAL);\n  __VERIFIER_local_write(atomic_store(&x, 2););\n  __VERIFIER_spin_end(atomic_load(&x) == 2);\n  int ok = __VERIFIER_confirming_CAS(atomic_compare_exchange_strong(&x, &zero, 5));\n  assert(!ok && zero == 2 && __VERIFIER_speculative_read(atomic_load(&x)) == 2);",
    );
    assert_eq!((e, b, bug), (1, 0, 0));
}

#[test]
fn a_macro_redefined_differently_warns_and_the_later_definition_wins() {
    // barrier.h's `#define LOOP 10` after the test's `#define LOOP 5`: GCC warns, uses 10.
    let files = vec![("dir/barrier.h", "#define LOOP 10\nint k = LOOP;\n")];
    let text =
        "#define LOOP 5\nint a = LOOP;\n#include \"barrier.h\"\nint b = LOOP;\n#define LOOP 10\n";
    let u = run_with(text, files, &PpOptions::default()).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(words(&u), "int a = 5 ; int k = 10 ; int b = 10 ;");
    // One warning, at the redefinition's name; the same definition again is no warning.
    assert_eq!(u.warnings.len(), 1, "{:?}", u.warnings);
    let w = &u.warnings[0];
    assert_eq!((w.file.as_str(), w.line, w.column), ("dir/barrier.h", 1, 9));
    assert_eq!(w.kind, DiagKind::Warning);
    assert!(
        w.message
            .starts_with("`LOOP` redefined differently (first defined at dir/main.c:1:1)"),
        "{}",
        w.message
    );
    // Parsed, the warning is a note of the program, with its file.
    let files = vec![("dir/barrier.h", "#define N 3\n")];
    let main = "#include <assert.h>\n#define N 2\n#include \"barrier.h\"\nint main() {\n  assert(N == 3);\n  return 0;\n}\n";
    let p = parse_in_memory(main, files);
    let n = &p.notes[0];
    assert!(n.warning && n.file.as_deref() == Some("dir/barrier.h"));
    assert_eq!((n.span.line, n.span.column), (1, 9));
}

#[test]
fn a_lowering_warning_in_a_header_names_the_header() {
    // The compare-exchange with an `acq_rel` failure order is in the header: its warning is
    // at the header's line and column, under the header's name (not the main file's).
    let files = vec![(
        "dir/cas.h",
        "#include <stdatomic.h>\natomic_int x;\nint take(void) {\n  int e = 0;\n  return atomic_compare_exchange_strong_explicit(&x, &e, 1, memory_order_acq_rel,\n      memory_order_acq_rel);\n}\n",
    )];
    let main = "#include \"cas.h\"\nint main() {\n  return take();\n}\n";
    let p = parse_in_memory(main, files);
    let n = p.notes.iter().find(|n| n.warning).expect("a warning");
    assert!(n.message.contains("failure order"), "{}", n.message);
    assert_eq!(n.file.as_deref(), Some("dir/cas.h"));
    assert_eq!((n.span.line, n.span.column), (6, 7));
}
