#!/usr/bin/env bash
# Seeds of every fuzz target from the fixtures, into fuzz/seeds/ (not kept
# in git: it is derived). Files over 64 KB (the targets' input limit) are
# left out.
set -euo pipefail
cd "$(dirname "$0")"
root=..
out=seeds
rm -rf "$out"
mkdir -p "$out"/{program_text,ron_source,ron_target,ron_source_unf,ron_target_unf,value_literal}
small() { [ "$(stat -c %s "$1")" -le 65536 ]; }
put() { if small "$1"; then cp "$1" "$2"; fi; }
for d in "$root"/fixtures/*/; do
  n=$(basename "$d")
  [ "$n" = err ] && continue
  [ -f "$d/program.ad" ] && put "$d/program.ad" "$out/program_text/$n.ad"
  [ -f "$d/10.source.ron" ] && put "$d/10.source.ron" "$out/ron_source/$n.ron"
  [ -f "$d/20.source-unf.ron" ] && put "$d/20.source-unf.ron" "$out/ron_source_unf/$n.ron"
  [ -f "$d/30.target-unf.ron" ] && put "$d/30.target-unf.ron" "$out/ron_target_unf/$n.ron"
  [ -f "$d/40.target.ron" ] && put "$d/40.target.ron" "$out/ron_target/$n.ron"
  [ -f "$d/50.opt.ron" ] && put "$d/50.opt.ron" "$out/ron_target/$n.opt.ron"
done
for f in "$root"/fixtures/err/*/*/program.ad; do
  n=$(echo "$f" | awk -F/ '{print $(NF-2) "_" $(NF-1)}')
  cp "$f" "$out/program_text/err_$n.ad"
done
for f in "$root"/fixtures/err/*/*/input.ron; do
  n=$(echo "$f" | awk -F/ '{print $(NF-1)}')
  for t in ron_source ron_target ron_source_unf ron_target_unf; do
    cp "$f" "$out/$t/err_$n.ron"
  done
done
v=$out/value_literal
printf 'R\n1.5' > "$v/real"
printf 'Int\n-3' > "$v/int"
printf 'Bool\ntrue' > "$v/bool"
printf '[n]R\n[1, 2.5, -0, 1e-300]' > "$v/vector"
printf '[n][m]R\n[[1, 2], [3, 4]]' > "$v/matrix"
printf '(R, [n]R)\n(0.5, [1, inf, nan])' > "$v/tuple"
printf '[n](R, R)\n[(1, 2), (3, -4e21)]' > "$v/array_of_tuples"
printf '[3][2]R\n[[1, 2], [3, 4], [5, 6]]' > "$v/fixed_sizes"
printf '((R, Int), Bool)\n((1, 2), false)' > "$v/nested"
