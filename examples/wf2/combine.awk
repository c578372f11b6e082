#!/usr/bin/mawk -f
# Wide Finder 2, combine side, in awk: sums reduce.awk's (or reduce.py's)
# `table<TAB>key<TAB>value` lines and prints the report as `wf wf2` does
# (keys as raw bytes; run with LC_ALL=C so keys compare and count as bytes).
BEGIN { FS = "\t"; MAX = 18446744073709551615; if (TOP == "") TOP = 10 }
$1 == "uri_hits"  { add(H, $2, $3); next }
$1 == "uri_bytes" { add(B, $2, $3); next }
$1 == "404s"      { add(E, $2, $3); next }
$1 == "clients"   { add(C, $2, $3); next }
$1 == "referrers" { add(R, $2, $3); next }
{ printf "combine.awk: bad input line %d: %s\n", NR, $0 > "/dev/stderr"; bad = 1; exit 2 }
function add(a, k, v) { a[k] += v; if (a[k] > MAX) a[k] = MAX }
function count(a,    k, n) { n = 0; for (k in a) n++; return n }
# One pass, keeping the best TOP in order: value descending, then key ascending.
function show(a, title, mb,    k, n, i, j, x, tk, tv) {
    print title
    n = 0
    for (k in a) {
        x = a[k]
        if (n == TOP && (x < tv[n] || (x == tv[n] && k > tk[n]))) continue
        if (n < TOP) n++
        for (i = n; i > 1 && (x > tv[i - 1] || (x == tv[i - 1] && k < tk[i - 1])); i--) {
            tk[i] = tk[i - 1]; tv[i] = tv[i - 1]
        }
        tk[i] = k; tv[i] = x
    }
    for (i = 1; i <= n; i++) {
        label = length(tk[i]) > 60 ? substr(tk[i], 1, 60) "..." : tk[i]
        if (mb) printf " %9.1fM: %s\n", tv[i] / 1048576, label
        else printf " %10d: %s\n", tv[i], label
    }
    print ""
}
END {
    if (bad) exit 2
    printf "%d resources, %d 404s, %d clients\n\n", count(H), count(E), count(C)
    show(H, "Top URIs by hit:", 0)
    show(B, "Top URIs by bytes:", 1)
    show(E, "Top 404s:", 0)
    show(C, "Top client addresses:", 0)
    show(R, "Top referrers:", 0)
}
