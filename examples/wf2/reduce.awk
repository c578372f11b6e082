#!/usr/bin/mawk -f
# Wide Finder 2, reduce side, in awk: the same rules and output as reduce.py.
#
#   wf feed --combine 'mawk -f examples/wf2/combine.awk' LOGS... -- mawk -f examples/wf2/reduce.awk
#
# Prints partial counts as `table<TAB>key<TAB>value` lines. Differences from the
# Python pair: awk numbers are doubles, so byte counts above 2^53 are not exact
# (far beyond real logs; sums still saturate at 2^64), and keys are printed as
# raw bytes (the Python pair shows invalid UTF-8 as U+FFFD, like `wf wf2`).
BEGIN {
    # Runs of ASCII whitespace; a leading run gives an empty $1 (field 0), like
    # Ruby's split(/\s+/). A trailing run gives an empty last field: dropped below.
    FS = "[ \t\r\n\f\v]+"
    MAX = 18446744073709551615
    ART = "^/ongoing/When/[0-9][0-9][0-9]x/[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/[^ .]+$"
}
index($0, "\"GET") == 0 { next }
{
    n = NF
    if (n > 0 && $n == "") n--
    if (n < 9 || $6 != "\"GET") next
    uri = $7
    st = $9
    if (st == "200") {
        b = 0
        if (n >= 10 && match($10, /^[0-9]+/)) {
            b = substr($10, 1, RLENGTH) + 0
            if (b > MAX) b = MAX
        }
    } else if (st == "304") {
        b = 0
    } else if (st == "404") {
        e404[uri]++
        next
    } else next
    bytes[uri] += b
    if (bytes[uri] > MAX) bytes[uri] = MAX
    if (uri ~ ART) {
        hits[uri]++
        clients[$1]++
        if (n >= 11 && $11 != "\"-\"" && index($11, "\"http://www.tbray.org/ongoing/") != 1)
            refs[substr($11, 2, length($11) - 2)]++
    }
}
END {
    for (k in hits) printf "uri_hits\t%s\t%d\n", k, hits[k]
    for (k in bytes) printf "uri_bytes\t%s\t%.0f\n", k, bytes[k]
    for (k in e404) printf "404s\t%s\t%d\n", k, e404[k]
    for (k in clients) printf "clients\t%s\t%d\n", k, clients[k]
    for (k in refs) printf "referrers\t%s\t%d\n", k, refs[k]
}
