#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""ABI layout probe generator for the DAT 2.0 public headers.

Used by layout-probe.sh; see the comment at the top of that script.

Two sub-commands:

  gen   --side NAME=INCDIR ... --workdir DIR [--cc CC] [--clang CLANG]
        Parses every header set with clang (JSON AST for types, fields,
        enumerators, functions; `-E -dD` for object-like macros), takes the
        UNION of the names found in all sets, and writes
          DIR/facts.json       the fact list the probe is rendered from
          DIR/probe.c          the probe program (for reading; `build`
                               renders its own copy per side)
          DIR/types-NAME.txt   canonical C types of typedefs, fields,
                               functions (from each set's clang AST)
        Facts that compile against no header set at all (e.g. sizeof of an
        incomplete struct) are dropped here; facts that compile against
        only some sets are kept, so a name missing on one side shows up as
        `<fact> = MISSING` on that side.

  build --facts DIR/facts.json --incdir INCDIR --out EXE [--cc CC]
        Renders the probe, compiles it with `CC -std=gnu11` against one
        header set, replacing every fact whose line fails to compile by a
        `<fact> = MISSING` line (iterating until it compiles), and links EXE.
        Fails only if the headers themselves do not compile.

Only clang and python3 (stdlib) are needed.  INCDIR is the directory that
holds dat2/ (e.g. /usr/include or $(top_srcdir)/include).  A header set is
"compiled against" with -I INCDIR first on the command line, except when
INCDIR is the compiler's own system directory /usr/include, which gets no -I.
"""

import argparse
import functools
import json
import os
import re
import subprocess
import sys

HEADERS = ["dat2/udat.h", "dat2/dat_registry.h", "dat2/dat_ib_extensions.h"]

# OFED's dat_ib_extensions.h uses struct sockaddr_in6 without including
# <netinet/in.h>; applications include these first (see the usage comment in
# OFED's dat_platform_specific.h), and so does every probe TU.
PRELUDE = """\
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
""" + "".join("#include <%s>\n" % h for h in HEADERS)

SYSTEM_INCDIR = "/usr/include"


def log(msg):
    sys.stderr.write("abi-probe: %s\n" % msg)


def incflags(incdir):
    if os.path.realpath(incdir) == os.path.realpath(SYSTEM_INCDIR):
        return []
    return ["-I", os.path.realpath(incdir)]


def run(cmd, cwd=None):
    env = dict(os.environ, LC_ALL="C", LANG="C")
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), \
        p.stderr.decode("utf-8", "replace")


@functools.lru_cache(maxsize=None)
def is_clang(cc):
    rc, out, _ = run(cc.split() + ["-dM", "-E", "-x", "c", "/dev/null"])
    return "__clang__" in out


def error_limit_flags(cc):
    return ["-ferror-limit=0"] if is_clang(cc) else ["-fmax-errors=0"]


# --------------------------------------------------------------------------
# Diagnostics -> source lines of the generated file

DIAG_RE = re.compile(r"^(.*?):(\d+):(?:\d+:)? (fatal error|error|warning|note): ")
INFUNC_RE = re.compile(r"In function '([A-Za-z_0-9]+)'")


def failing_lines(stderr, srcname):
    """Map compiler diagnostics to lines of srcname.

    Returns (set of line numbers, list of error texts that could not be
    attributed to any line of srcname)."""
    lines = set()
    orphans = []
    cur = None            # current error block: [set of lines, text]
    func = None           # gcc "In function 'f_123':" context

    def close():
        if cur is None:
            return
        if cur[0]:
            lines.update(cur[0])
        elif func is not None and func[1]:
            lines.add(func[1])
        else:
            orphans.append(cur[1])

    fn_lines = failing_lines.fn_lines
    for ln in stderr.splitlines():
        m = INFUNC_RE.search(ln)
        if m and ": In function" in ln:
            close()
            cur = None
            func = (m.group(1), fn_lines.get(m.group(1)))
            continue
        if ": At top level:" in ln:
            close()
            cur = None
            func = None
            continue
        m = DIAG_RE.match(ln)
        if not m:
            continue
        fname, lno, kind = m.group(1), int(m.group(2)), m.group(3)
        insrc = os.path.basename(fname) == srcname
        if kind in ("error", "fatal error"):
            close()
            cur = [set(), ln]
            if insrc:
                cur[0].add(lno)
        elif kind == "warning":
            close()
            cur = None
        elif cur is not None and insrc:
            cur[0].add(lno)
    close()
    return lines, orphans


failing_lines.fn_lines = {}


def compile_with_fallback(cmd_for, render, workdir, srcname, what,
                          max_rounds=40):
    """render(failed) -> (text, {line: fact index}, {funcname: line}).

    cmd_for(srcpath) -> argv.  Compiles, turns every fact whose line fails
    into a MISSING fallback, and repeats until it compiles.  Returns
    (failed fact indices, stdout, stderr) of the successful compile; raises
    RuntimeError when errors remain that belong to no fact line."""
    failed = set()
    src = os.path.join(workdir, srcname)
    for _ in range(max_rounds):
        text, linemap, fnlines = render(failed)
        with open(src, "w") as f:
            f.write(text)
        failing_lines.fn_lines = fnlines
        rc, out, err = run(cmd_for(src), cwd=workdir)
        if rc == 0:
            return failed, out, err
        bad, orphans = failing_lines(err, srcname)
        new = {linemap[l] for l in bad if l in linemap} - failed
        if not new:
            raise RuntimeError(
                "%s: %s does not compile and the errors are not in any fact "
                "line (broken headers?):\n%s" % (what, src,
                                                 "\n".join(orphans or
                                                           err.splitlines()[:60])))
        failed |= new
    raise RuntimeError("%s: gave up after %d compile rounds" % (what, max_rounds))


# --------------------------------------------------------------------------
# clang AST reading

def clang_ast(clang, incdir, workdir, tag, extra_src=""):
    src = os.path.join(workdir, "ast-%s.c" % tag)
    with open(src, "w") as f:
        f.write(PRELUDE + extra_src)
    cmd = [clang, "-std=gnu11", "-w", "-ferror-limit=0", "-fsyntax-only",
           "-Xclang", "-ast-dump=json"] + incflags(incdir) + [src]
    rc, out, err = run(cmd, cwd=workdir)
    if rc != 0:
        log("clang reports errors parsing the %s headers (%s); using what it "
            "could parse:\n%s" % (tag, incdir, "\n".join(err.splitlines()[:20])))
    try:
        return json.loads(out)
    except ValueError:
        log("clang produced no AST for the %s headers" % tag)
        return {"inner": []}


def annotate_files(root, cwd):
    """clang's JSON omits "file" when unchanged since the previous location
    printed, so walk everything in output order and record each node's file
    (of its expansion location) as node["_file"]."""
    state = {"file": None}

    def bare(loc):
        if "file" in loc:
            state["file"] = os.path.realpath(os.path.join(cwd, loc["file"]))

    def visit_loc(loc):
        if not isinstance(loc, dict):
            return
        if "spellingLoc" in loc or "expansionLoc" in loc:
            if "spellingLoc" in loc:
                bare(loc["spellingLoc"])
            if "expansionLoc" in loc:
                bare(loc["expansionLoc"])
        elif "offset" in loc or "line" in loc or "col" in loc or "file" in loc:
            bare(loc)

    def walk(node):
        if isinstance(node, dict):
            for k, v in list(node.items()):
                if k == "loc":
                    visit_loc(v)
                    node["_file"] = state["file"]
                elif k == "range":
                    if isinstance(v, dict):
                        visit_loc(v.get("begin"))
                        visit_loc(v.get("end"))
                elif isinstance(v, (dict, list)):
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(root)


GUARD_RE = re.compile(r"^_\w*_H_*$")
RECORD_RE = re.compile(r"^(?:(?:const|volatile) )*(struct|union) ([A-Za-z_]\w*)$")
ANON_RE = re.compile(r"\((?:unnamed|anonymous)(?: struct| union)? at ")


class HeaderSet(object):
    """Names declared by one header set (only decls in INCDIR/dat2/)."""

    def __init__(self, name, incdir, clang, workdir):
        self.name = name
        self.incdir = incdir
        self.dat2 = os.path.realpath(os.path.join(incdir, "dat2")) + os.sep
        self.typedefs = {}      # name -> node
        self.records_all = {}   # "struct tag" -> node (definition), any file
        self.records = {}       # the same, only those defined in dat2/
        self.enum_tags = set()  # "enum tag"
        self.enumerators = set()
        self.functions = set()
        self.variables = set()
        self.fields = {}        # access name -> list of field paths
        self.macros = set()     # object-like, non-empty
        self.defined = set()    # every macro but include guards
        ast = clang_ast(clang, incdir, workdir, name)
        annotate_files(ast, workdir)
        self._collect(ast)
        self._collect_macros(clang, workdir)

    def mine(self, node):
        f = node.get("_file")
        return f is not None and f.startswith(self.dat2)

    def _collect(self, ast):
        top = ast.get("inner", [])
        for n in top:
            k = n.get("kind")
            if k == "RecordDecl":
                self._record_decl(n, toplevel=True)
            if not self.mine(n):
                continue
            if k == "TypedefDecl":
                self.typedefs[n["name"]] = n
            elif k == "EnumDecl":
                if n.get("name"):
                    self.enum_tags.add("enum " + n["name"])
                for c in n.get("inner", []):
                    if c.get("kind") == "EnumConstantDecl":
                        self.enumerators.add(c["name"])
            elif k == "FunctionDecl":
                self.functions.add(n["name"])
            elif k == "VarDecl":
                self.variables.add(n["name"])
        # records by id (all, so typedefs of anonymous structs resolve)
        byid = {}

        def index(n):
            if n.get("kind") == "RecordDecl" and n.get("completeDefinition"):
                byid[n["id"]] = n
            for c in n.get("inner", []):
                if c.get("kind") == "RecordDecl":
                    index(c)
        for n in top:
            index(n)
        self.byid = byid

        # access name for each record: first typedef aliasing it directly,
        # else its tag.
        access = {}
        for tname in sorted(self.typedefs):
            rec = self._typedef_record(self.typedefs[tname])
            if rec is not None and self.mine(rec) and rec["id"] not in access:
                access[rec["id"]] = tname
        for tag, rec in sorted(self.records.items()):
            if self.mine(rec) and rec["id"] not in access:
                access[rec["id"]] = tag
        for rid, aname in access.items():
            paths = []
            self._fields(byid[rid], "", paths, set())
            self.fields[aname] = paths

    def _record_decl(self, n, toplevel):
        if n.get("name") and n.get("completeDefinition"):
            tag = "%s %s" % (n.get("tagUsed", "struct"), n["name"])
            self.records_all[tag] = n
            if self.mine(n):
                self.records[tag] = n
        for c in n.get("inner", []):
            if c.get("kind") == "RecordDecl":
                self._record_decl(c, False)

    def _typedef_record(self, td):
        t = td.get("inner", [None])[0]
        while t is not None and t.get("kind") in ("ElaboratedType", "ParenType"):
            t = (t.get("inner") or [None])[0]
        if t is None or t.get("kind") != "RecordType":
            return None
        qt = t.get("type", {}).get("qualType", "")
        m = RECORD_RE.match(qt)
        if m:
            return self.records_all.get("%s %s" % (m.group(1), m.group(2)))
        return self.byid.get(t.get("decl", {}).get("id"))

    def _field_record(self, ftype, last_anon):
        qt = ftype.get("desugaredQualType", ftype.get("qualType", ""))
        m = RECORD_RE.match(qt)
        if m:
            rec = self.records_all.get("%s %s" % (m.group(1), m.group(2)))
            return rec if rec is not None and self.mine(rec) else None
        if ANON_RE.search(qt) and "[" not in qt and "*" not in qt:
            return last_anon
        return None

    def _fields(self, rec, prefix, out, seen):
        if rec["id"] in seen:
            return
        seen = seen | {rec["id"]}
        last_anon = None
        for c in rec.get("inner", []):
            k = c.get("kind")
            if k == "RecordDecl":
                if not c.get("name") and c.get("completeDefinition"):
                    last_anon = c
                continue
            if k != "FieldDecl":
                continue
            name = c.get("name")
            sub = self._field_record(c.get("type", {}), last_anon)
            if name:
                path = prefix + name
                out.append((path, bool(c.get("isBitfield"))))
                if sub is not None:
                    self._fields(sub, path + ".", out, seen)
            elif sub is not None:       # anonymous struct/union member
                self._fields(sub, prefix, out, seen)

    def _collect_macros(self, clang, workdir):
        src = os.path.join(workdir, "macros-%s.c" % self.name)
        with open(src, "w") as f:
            f.write(PRELUDE)
        rc, out, err = run([clang, "-std=gnu11", "-w", "-E", "-dD"] +
                           incflags(self.incdir) + [src], cwd=workdir)
        cur = None
        marker = re.compile(r'^# \d+ "(.*)"')
        define = re.compile(r"^#define ([A-Za-z_]\w*)(\(?)\s*(.*)$")
        undef = re.compile(r"^#undef ([A-Za-z_]\w*)")
        for ln in out.splitlines():
            m = marker.match(ln)
            if m:
                cur = os.path.realpath(os.path.join(workdir, m.group(1)))
                continue
            m = define.match(ln)
            if m and cur and cur.startswith(self.dat2):
                if m.group(2) == "" and m.group(3).strip():
                    self.macros.add(m.group(1))
                if not GUARD_RE.match(m.group(1)):
                    self.defined.add(m.group(1))
                continue
            m = undef.match(ln)
            if m and cur and cur.startswith(self.dat2):
                self.macros.discard(m.group(1))
                self.defined.discard(m.group(1))


# --------------------------------------------------------------------------
# canonical type strings from clang's type trees

SUGAR = ("TypedefType", "ElaboratedType", "ParenType", "TypeOfType",
         "TypeOfExprType", "AttributedType", "MacroQualifiedType",
         "DecayedType", "AdjustedType", "UsingType", "BTFTagAttributedType")


def type_children(node):
    return [c for c in node.get("inner", []) if c.get("kind", "").endswith("Type")]


def canon(node, strip=False):
    k = node.get("kind")
    qt = node.get("type", {}).get("qualType", "?")
    kids = type_children(node)
    if k in SUGAR:
        if kids:
            return canon(kids[-1], strip)
        return qt
    if k == "QualType":
        inner = canon(kids[0], False) if kids else "?"
        if strip:
            return canon(kids[0], True) if kids else "?"
        return "%s %s" % (node.get("qualifiers", ""), inner)
    if k == "BuiltinType":
        return qt
    if k == "PointerType":
        return "ptr(%s)" % canon(kids[0])
    if k == "ConstantArrayType":
        return "array[%s](%s)" % (node.get("size", "?"), canon(kids[0]))
    if k == "IncompleteArrayType":
        return "array[](%s)" % canon(kids[0])
    if k == "FunctionProtoType":
        ret = canon(kids[0], True)
        params = [canon(p, True) for p in kids[1:]]
        if node.get("variadic"):
            params.append("...")
        return "fn(%s; %s)" % (ret, ", ".join(params) or "void")
    if k == "FunctionNoProtoType":
        return "fn_noproto(%s)" % canon(kids[0], True)
    if k in ("RecordType", "EnumType"):
        qt = re.sub(r"^(?:(?:const|volatile) )*", "", qt)
        if ANON_RE.search(qt) or "::" in qt:
            return qt.split(" ", 1)[0] + " <anonymous>"
        return qt
    return "%s{%s}" % (k, qt)


# --------------------------------------------------------------------------
# facts

def field_expr(aname, path):
    return "((%s *)0)->%s" % (aname, path)


def build_facts(sets):
    """Union of all names over all header sets -> list of fact dicts.

    kinds: u  (unsigned size/offset value), i (integer constant),
           s  (string macro), plus 'guard' for #ifdef-guarded macros."""
    facts = {}

    def add(key, kind, expr, guard=None):
        facts[key] = {"key": key, "kind": kind, "expr": expr, "guard": guard}

    typedefs = set().union(*[s.typedefs for s in sets])
    for t in typedefs:
        add("sizeof %s" % t, "u", "sizeof(%s)" % t)
        add("alignof %s" % t, "u", "_Alignof(%s)" % t)
    tags = set().union(*[set(s.records) for s in sets]) | \
        set().union(*[s.enum_tags for s in sets])
    for t in tags:
        add("sizeof %s" % t, "u", "sizeof(%s)" % t)
        add("alignof %s" % t, "u", "_Alignof(%s)" % t)
    for s in sets:
        for aname, paths in s.fields.items():
            for path, bitfield in paths:
                if bitfield:
                    continue    # offsetof/sizeof don't apply; none in OFED
                add("offsetof %s.%s" % (aname, path), "u",
                    "offsetof(%s, %s)" % (aname, path))
                add("sizeof %s.%s" % (aname, path), "u",
                    "sizeof(%s)" % field_expr(aname, path))
    for e in set().union(*[s.enumerators for s in sets]):
        add("enum %s" % e, "i", e)
    return facts


def type_keys(sets):
    keys = {}
    for t in set().union(*[s.typedefs for s in sets]):
        keys["ctype %s" % t] = t
    for s in sets:
        for aname, paths in s.fields.items():
            for path, _ in paths:
                keys["ctype %s.%s" % (aname, path)] = field_expr(aname, path)
    for f in set().union(*[s.functions for s in sets]):
        keys["func %s" % f] = f
    for v in set().union(*[s.variables for s in sets]):
        keys["var %s" % v] = v
    return keys


PROBE_HEAD = r"""/* Generated by test/abi/abi-probe.py -- do not edit. */
#include <string.h>
""" + PRELUDE + r"""
#define TN(e) _Generic((e), int: "int", unsigned int: "unsigned int", \
	long: "long", unsigned long: "unsigned long", long long: "long long", \
	unsigned long long: "unsigned long long", default: "other")
#define PU(k, e) printf("%s = %llu\n", k, (unsigned long long)(e))
#define PI(k, e) do { if ((e) < 0) printf("%s = %lld (%s)\n", k, \
	(long long)(e), TN(e)); else printf("%s = %llu (%s)\n", k, \
	(unsigned long long)(e), TN(e)); } while (0)
#define PS(k, e) ps(k, e)
#define STR(...) #__VA_ARGS__
#define XSTR(...) STR(__VA_ARGS__)
#define PD(k, ...) pd(k, #__VA_ARGS__, XSTR(__VA_ARGS__))
#define M(k) printf("%s = MISSING\n", k)
static void ps(const char *k, const char *s)
{
	printf("%s = \"", k);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s >= 0x20 && *s < 0x7f)
			putchar(*s);
		else
			printf("\\%03o", (unsigned char)*s);
	}
	printf("\"\n");
}
/* Macros that are not constants: compare that they exist. Expansions are
 * not layout (OFED's DAT_IA_HA_RELATED is an unusable object-like macro by
 * a stray space; ours is the function-like macro it was meant to be). */
static void pd(const char *k, const char *name, const char *exp)
{
	(void)name;
	(void)exp;
	printf("%s = defined\n", k);
}
"""


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_probe(facts, failed):
    """facts: list sorted by key.  Returns (text, {line: idx}, {fn: line})."""
    out = PROBE_HEAD.splitlines()
    linemap = {}
    fnlines = {}
    macro = {"u": "PU", "i": "PI", "s": "PS", "d": "PD"}
    for i, f in enumerate(facts):
        fn = "f_%d" % i
        miss = "static void %s(void) { M(%s); }" % (fn, c_str(f["key"]))
        if i in failed:
            out.append(miss)
            continue
        line = "static void %s(void) { %s(%s, %s); }" % (
            fn, macro[f["kind"]], c_str(f["key"]), f["expr"])
        if f.get("guard"):
            out.append("#ifdef %s" % f["guard"])
            out.append(line)
            linemap[len(out)] = i
            fnlines[fn] = len(out)
            out.append("#else")
            out.append(miss)
            out.append("#endif")
        else:
            out.append(line)
            linemap[len(out)] = i
            fnlines[fn] = len(out)
    out.append("int main(void)")
    out.append("{")
    for i in range(len(facts)):
        out.append("\tf_%d();" % i)
    out.append("\treturn 0;")
    out.append("}")
    return "\n".join(out) + "\n", linemap, fnlines


def probe_cmd(cc, incdir, exe=None):
    base = cc.split() + ["-std=gnu11", "-w"] + error_limit_flags(cc) + \
        incflags(incdir)
    if exe is None:
        return lambda src: base + ["-fsyntax-only", src]
    return lambda src: base + ["-o", exe, src]


def classify_macros(names, sets, cc, workdir):
    """-> {name: 'i' | 's' | 'p'}: integer constant expression, string
    literal, address constant (e.g. DAT_HANDLE_NULL)."""
    names = sorted(names)
    found = {"i": set(), "s": set(), "p": set()}
    for s in sets:
        for kind, tmpl in (("i", '_Static_assert(((%s) | 0) || 1, "");'),
                           ("s", 'static const char s_%d[] = %s "";'),
                           ("p", '_Static_assert(__builtin_constant_p((size_t)(void *)(%s)) + 0 * %d, "");')):
            def render(failed, kind=kind, tmpl=tmpl):
                out = PRELUDE.splitlines()
                lm = {}
                for i, n in enumerate(names):
                    if i in failed:
                        continue
                    out.append("#ifdef %s" % n)
                    out.append(tmpl % ((n,) if kind == "i" else
                                       (n, i) if kind == "p" else (i, n)))
                    lm[len(out)] = i
                    out.append("#endif")
                return "\n".join(out) + "\n", lm, {}
            try:
                failed, _, _ = compile_with_fallback(
                    probe_cmd(cc, s.incdir), render, workdir,
                    "classify-%s-%s.c" % (s.name, kind),
                    "macro classification (%s)" % s.name)
            except RuntimeError as e:
                log(str(e))
                continue
            found[kind] |= {n for i, n in enumerate(names) if i not in failed}
    # a name that is an integer constant on some set wins over string, ...
    kinds = {n: "p" for n in found["p"]}
    kinds.update({n: "s" for n in found["s"]})
    kinds.update({n: "i" for n in found["i"]})
    return kinds


def type_facts(sets, keys, clang, workdir):
    order = sorted(keys)
    res = {}
    for s in sets:
        def render(failed):
            out = PRELUDE.splitlines()
            lm = {}
            for i, k in enumerate(order):
                if i in failed:
                    continue
                out.append("typedef __typeof__(%s) abi_t_%d;" % (keys[k], i))
                lm[len(out)] = i
            return "\n".join(out) + "\n", lm, {}
        src = "types-%s.c" % s.name
        cmd = lambda p: [clang, "-std=gnu11", "-w", "-ferror-limit=0",
                         "-fsyntax-only", "-Xclang", "-ast-dump=json"] + \
            incflags(s.incdir) + [p]
        try:
            failed, out, _ = compile_with_fallback(cmd, render, workdir, src,
                                                   "type facts (%s)" % s.name)
            ast = json.loads(out)
        except (RuntimeError, ValueError) as e:
            log(str(e))
            failed, ast = set(range(len(order))), {"inner": []}
        got = {}
        for n in ast.get("inner", []):
            name = n.get("name", "")
            if n.get("kind") == "TypedefDecl" and name.startswith("abi_t_"):
                kids = type_children(n)
                got[int(name[6:])] = canon(kids[0]) if kids else "?"
        res[s.name] = {k: got.get(i, "MISSING") for i, k in enumerate(order)}
    return res


def cmd_gen(args):
    os.makedirs(args.workdir, exist_ok=True)
    workdir = os.path.realpath(args.workdir)
    sides = []
    broken = False
    for spec in args.side:
        name, _, incdir = spec.partition("=")
        if not incdir:
            sys.exit("--side wants NAME=INCDIR, got %r" % spec)
        sides.append((name, incdir))
        # the headers alone must compile, else nothing below makes sense
        src = os.path.join(workdir, "headers-%s.c" % name)
        with open(src, "w") as f:
            f.write(PRELUDE)
        rc, _, err = run(probe_cmd(args.cc, incdir)(src), cwd=workdir)
        if rc != 0:
            log("the %s headers (%s/dat2) do not compile (%s -std=gnu11):\n%s"
                % (name, incdir, args.cc, "\n".join(err.splitlines()[:60])))
            broken = True
    if broken:
        return 3
    sets = []
    for name, incdir in sides:
        s = HeaderSet(name, incdir, args.clang, workdir)
        log("%s (%s): %d typedefs, %d records, %d field paths, %d enumerators, "
            "%d functions, %d macros" % (
                name, incdir, len(s.typedefs), len(s.records),
                sum(len(p) for p in s.fields.values()), len(s.enumerators),
                len(s.functions), len(s.macros)))
        sets.append(s)

    facts = build_facts(sets)
    macros = set().union(*[s.macros for s in sets])
    kinds = classify_macros(macros, sets, args.cc, workdir)
    for n, kind in kinds.items():
        if kind == "i":
            facts["macro %s" % n] = {"key": "macro %s" % n, "kind": "i",
                                     "expr": "(%s)" % n, "guard": n}
        elif kind == "s":
            facts["str %s" % n] = {"key": "str %s" % n, "kind": "s",
                                   "expr": n, "guard": n}
        else:
            facts["addr %s" % n] = {"key": "addr %s" % n, "kind": "u",
                                    "expr": "(size_t)(%s)" % n, "guard": n}
    # every other macro (function-like, empty, or not a constant): compare
    # that it is defined at all
    for n in set().union(*[s.defined for s in sets]) - set(kinds):
        facts["defined %s" % n] = {"key": "defined %s" % n, "kind": "d",
                                   "expr": n, "guard": n}
    log("%d of %d object-like macros are integer/string/address constants" %
        (len(kinds), len(macros)))
    flist = [facts[k] for k in sorted(facts)]

    # drop facts that compile against no header set
    fails = []
    for s in sets:
        try:
            failed, _, _ = compile_with_fallback(
                probe_cmd(args.cc, s.incdir),
                lambda f: render_probe(flist, f), workdir,
                "filter-%s.c" % s.name, "probe filter (%s)" % s.name)
        except RuntimeError as e:
            log(str(e))
            failed = set(range(len(flist)))
        fails.append(failed)
    never = set.intersection(*fails) if fails else set()
    # a guarded macro "fails" only if its #ifdef branch did not compile
    flist = [f for i, f in enumerate(flist) if i not in never]
    log("%d probe facts (%d dropped: compile against no header set)" %
        (len(flist), len(never)))
    with open(os.path.join(workdir, "facts.json"), "w") as f:
        json.dump(flist, f, indent=0)
    with open(os.path.join(workdir, "probe.c"), "w") as f:
        f.write(render_probe(flist, set())[0])

    keys = type_keys(sets)
    tf = type_facts(sets, keys, args.clang, workdir)
    both_missing = [k for k in keys
                    if all(tf[s.name][k] == "MISSING" for s in sets)]
    for s in sets:
        with open(os.path.join(workdir, "types-%s.txt" % s.name), "w") as f:
            for k in sorted(keys):
                if k not in both_missing:
                    f.write("%s = %s\n" % (k, tf[s.name][k]))
    log("%d type facts" % (len(keys) - len(both_missing)))


def cmd_build(args):
    with open(args.facts) as f:
        flist = json.load(f)
    workdir = os.path.dirname(os.path.realpath(args.out))
    exe = os.path.realpath(args.out)
    srcname = os.path.basename(exe) + ".c"
    try:
        failed, _, _ = compile_with_fallback(
            probe_cmd(args.cc, args.incdir, exe),
            lambda f: render_probe(flist, f), workdir, srcname,
            "probe build against %s" % args.incdir)
    except RuntimeError as e:
        log(str(e))
        return 1
    log("built %s against %s: %d facts, %d MISSING (do not compile)" %
        (exe, args.incdir, len(flist), len(failed)))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    g = sub.add_parser("gen")
    g.add_argument("--side", action="append", required=True,
                   metavar="NAME=INCDIR")
    g.add_argument("--workdir", required=True)
    g.add_argument("--cc", default=os.environ.get("CC") or "cc")
    g.add_argument("--clang", default="clang")
    b = sub.add_parser("build")
    b.add_argument("--facts", required=True)
    b.add_argument("--incdir", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--cc", default=os.environ.get("CC") or "cc")
    args = ap.parse_args()
    if args.cmd == "gen":
        return cmd_gen(args) or 0
    if args.cmd == "build":
        return cmd_build(args)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
