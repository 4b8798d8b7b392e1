#!/usr/bin/env python3
"""Usage: scripts/sandbox_cycles.py [-v] [DIR]

Checks that the modules of the sandbox (DIR, default src/sandbox) import each other without
cycles, so the layers stay handlers -> domain -> store. A module is a file directly under
DIR (`accounts.rs`), or a file of a module directory (`store/payments.rs` is
`store::payments`, `store/mod.rs` is `store`); `mod.rs` of DIR (the router and `App`) is
left out. An edge A -> B is any path naming B in A outside its `#[cfg(test)] mod tests`:
`use super::B`, `super::B::x`, `crate::sandbox::B`, `use super::{B, ...}`. Prints the
strongly connected components with more than one module and exits 1 if there is one;
`-v` also prints every module's edges.
"""
import os
import re
import sys


def unit_of(parts):
    """The module of a path below DIR (components, without `.rs`), or None for the root."""
    if not parts or parts[0] == "mod":
        return None
    if len(parts) > 1 and parts[1] != "mod":
        return parts[0] + "::" + parts[1]
    return parts[0]


def expand(path):
    """`a::b::{c, d::e}` -> [`a::b::c`, `a::b::d::e`] (nested groups too)."""
    g = re.search(r"\{(.*)\}$", path, re.S)
    if not g:
        return [path]
    head, inner, out, depth, cur = path[: g.start()], g.group(1), [], 0, ""
    for ch in inner:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    res = []
    for o in out:
        o = o.strip().split(" as ")[0].strip()
        if o:
            res += expand(head + o)
    return res


def graph(root):
    files = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                files[p] = os.path.relpath(p, root)[:-3].split(os.sep)
    mods = {tuple(r[:-1] if r[-1] == "mod" else r) for r in files.values()}
    units = {unit_of(r) for r in files.values()} - {None}

    def resolve(path):
        for n in range(len(path), 0, -1):
            if tuple(path[:n]) in mods:
                return unit_of(list(path[:n]))
        return None

    edges = {}
    for p, rel in files.items():
        u = unit_of(rel)
        if u is None:
            continue
        src = open(p, encoding="utf-8").read()
        i = src.find("#[cfg(test)]\nmod tests")
        src = re.sub(r"//[^\n]*", "", src if i < 0 else src[:i])
        here = rel[:-1] if rel[-1] == "mod" else rel
        targets = edges.setdefault(u, set())
        pat = r"\b((?:crate|super|self)(?:::(?:\{[^;]*?\}|[A-Za-z_][A-Za-z0-9_]*))+)"
        for m in re.finditer(pat, src, re.S):
            for t in expand(m.group(1)):
                segs = [s for s in t.split("::") if s]
                if segs[0] == "crate":
                    if len(segs) < 3 or segs[1] != "sandbox":
                        continue
                    path = segs[2:]
                else:
                    path, k = list(here), 0
                    while k < len(segs) and segs[k] in ("super", "self"):
                        if segs[k] == "super":
                            path = path[:-1]
                        k += 1
                    path += segs[k:]
                v = resolve(path)
                if v and v != u and v in units:
                    targets.add(v)
    return edges


def cycles(edges):
    """Tarjan's strongly connected components with more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            if len(c) > 1:
                out.append(sorted(c))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    here = os.path.dirname(os.path.abspath(__file__))
    root = args[0] if args else os.path.join(here, "..", "src", "sandbox")
    edges = graph(root)
    if "-v" in sys.argv:
        for v in sorted(edges):
            print(f"{v} -> {', '.join(sorted(edges[v]))}")
    print(f"{len(edges)} modules, {sum(len(e) for e in edges.values())} edges")
    found = cycles(edges)
    for c in found:
        inner = [f"{a}->{b}" for a in c for b in sorted(edges[a]) if b in c]
        print("CYCLE:", " ".join(c), "|", ", ".join(inner))
    if found:
        return 1
    print("no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
