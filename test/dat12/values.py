#!/usr/bin/env python3
# Every constant the DAT 1.2 headers share by name with libdat2's 2.0
# headers has 2.0's value: what a 1.2 program passes goes to libdat2
# unchanged, and what libdat2 returns compares equal to the 1.2 name.
# The names are every enumerator and object-like DAT_ macro of
# include/dat/*.h that include/dat2/*.h also defines; the values come from
# two generated programs, one compiled with each header set. A name whose
# value is meant to differ is listed below with the reason.
import os
import re
import subprocess
import sys
import tempfile

top = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
inc = os.path.join(top, "include")

# Same name, another value on purpose (see <dat/dat.h>, dapl-ofi(7)).
DIFFER = {
    "DAT_VERSION_MAJOR": "the 1.2 API is 1.2",
    "DAT_VERSION_MINOR": "the 1.2 API is 1.2",
    "DAT_IA_FIELD_ALL": "1.2 has no zb_supported or extension fields",
    "DAT_IA_ALL": "1.2 has no zb_supported or extension fields",
    "DAT_EP_FIELD_ALL": "1.2 has no comm field",
    "DAT_LMR_FIELD_ALL": "1.2 has no va_type field",
    "DAT_RMR_FIELD_ALL": "1.2 has no rmr_scope or va_type field",
    "DAT_PROVIDER_FIELD_ALL": "1.2 lacks five 2.0 provider attributes",
    "DAT_CNO_FIELD_ALL": "1.2's CNO fields are ia_handle and agent",
}
# Defined but not integer constants (types, keywords, compound literals),
# or broken in the 2.0 headers (a DAT 1.0 alias of a name 2.0 lacks).
SKIP = {"DAT_API", "DAT_EXPORT", "DAT_RMR_BIND_COMPLETION_STATUS",
        "DAT_OS_WAIT_PROXY_AGENT_NULL", "DAT_IA_FIELD_IA_MAX_DTO_PER_OP"}


def names(directory):
    """Enumerators and object-like DAT_ macros of a header directory."""
    found = set()
    for f in sorted(os.listdir(directory)):
        if not f.endswith(".h"):
            continue
        text = open(os.path.join(directory, f)).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        found |= set(re.findall(r"^#define\s+(DAT_\w+)[ \t]", text, re.M))
        for body in re.findall(r"\benum\s+\w*\s*\{(.*?)\}", text, re.S):
            body = re.sub(r"^\s*#.*$", "", body, flags=re.M)
            for item in body.split(","):
                m = re.match(r"\s*(DAT_\w+)", item)
                if m:
                    found.add(m.group(1))
    return found


def values(header, extra, candidates, tmp):
    src = os.path.join(tmp, "v.c")
    exe = os.path.join(tmp, "v")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\n#include <%s>\nint main(void)\n{\n"
                % header)
        for n in candidates:
            f.write('\tprintf("%%s %%llu\\n", "%s", '
                    "(unsigned long long)(%s));\n" % (n, n))
        f.write("\treturn 0;\n}\n")
    subprocess.run(["cc", "-std=gnu11", "-I", inc] + extra +
                   [src, "-o", exe], check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True)
    return dict(line.split() for line in out.stdout.splitlines())


def main():
    ours = names(os.path.join(inc, "dat"))
    theirs = names(os.path.join(inc, "dat2"))
    shared = sorted((ours & theirs) - SKIP)
    fail = 0
    for n in sorted(DIFFER):
        if n not in shared:
            print("FAIL: %s is listed as differing but not shared" % n)
            fail = 1
    with tempfile.TemporaryDirectory() as tmp:
        v12 = values("dat/udat.h", [], shared, tmp)
        v20 = values("dat2/udat.h", ["-D_GNU_SOURCE"], shared, tmp)
    same = 0
    for n in shared:
        if n in DIFFER:
            if v12[n] == v20[n]:
                print("FAIL: %s is listed as differing but is %s in both"
                      % (n, v12[n]))
                fail = 1
            else:
                print("ok: %s differs (%s): 1.2 %s, 2.0 %s"
                      % (n, DIFFER[n], v12[n], v20[n]))
        elif v12[n] != v20[n]:
            print("FAIL: %s: 1.2 headers %s, libdat2's %s"
                  % (n, v12[n], v20[n]))
            fail = 1
        else:
            same += 1
    only12 = sorted(ours - theirs)
    print("ok: %d shared names have libdat2's value" % same)
    print("1.2-only names (%d): %s" % (len(only12), " ".join(only12)))
    if len(shared) < 300:
        print("FAIL: only %d shared names found" % len(shared))
        fail = 1
    return fail


if __name__ == "__main__":
    sys.exit(main())
