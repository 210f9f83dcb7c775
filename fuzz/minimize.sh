#!/usr/bin/env bash
# Minimizes the kept corpus of each target (or of the targets named):
# libFuzzer's -merge=1 keeps the files that add coverage beyond the seeds
# (which seed.sh derives from the fixtures, so they are not kept twice),
# each cut to MAX_LEN bytes (default 4096), so that the corpus in git stays
# small. Run after a fuzzing run, with the targets built.
set -euo pipefail
cd "$(dirname "$0")"
max_len=${MAX_LEN:-4096}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(program_text ron_source ron_target ron_source_unf ron_target_unf value_literal json_value npy_file gradbench_protocol)
fi
./seed.sh
for t in "${targets[@]}"; do
  bin=target/x86_64-unknown-linux-gnu/release/$t
  work=$(mktemp -d)
  mkdir -p "$work/merged"
  "$bin" -merge=1 -max_len=65536 "$work/merged" "seeds/$t" >"$work/log" 2>&1
  ls "$work/merged" | sort >"$work/seeds"
  "$bin" -merge=1 -max_len="$max_len" "$work/merged" "corpus/$t" >>"$work/log" 2>&1
  rm -rf "corpus/$t"
  mkdir -p "corpus/$t"
  ls "$work/merged" | sort | comm -23 - "$work/seeds" | while read -r f; do
    cp "$work/merged/$f" "corpus/$t/"
  done
  echo "$t: $(ls "corpus/$t" | wc -l) files, $(cat "corpus/$t"/* 2>/dev/null | wc -c) bytes"
  rm -rf "$work"
done
