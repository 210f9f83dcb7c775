#!/usr/bin/env bash
# One long libFuzzer run of a target (docs/testing.md, "Coverage-guided
# fuzzing"): `fuzz/run.sh TARGET [RUNS]`, from anywhere. Builds the targets
# (cargo-fuzz needs nightly flags: RUSTC_BOOTSTRAP=1 lets the stable
# toolchain take them), seeds from the fixtures, then runs RUNS executions
# (default 10^6), one process, at low priority, adding what it finds to
# fuzz/corpus/TARGET. Set FUZZ_NO_BUILD=1 to reuse the last build.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
runs=${2:-1000000}
if [ "${FUZZ_NO_BUILD:-}" != 1 ]; then
  RUSTC_BOOTSTRAP=1 cargo fuzz build -a "$target"
fi
./seed.sh
mkdir -p "corpus/$target" artifacts
bin=target/x86_64-unknown-linux-gnu/release/$target
nice -n 10 "$bin" "corpus/$target" "seeds/$target" \
  -runs="$runs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="artifacts/$target-" -print_final_stats=1
