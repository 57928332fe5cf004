#!/bin/bash
# The shipped Gnoming network with search against 2 x search, 3 players, as many small balanced blocks on many cores:
# each of CORES loops plays blocks of GAMES games (GAMES/3 deals x 3 line-ups, seat-rotated) back to back, block j of
# loop c with seed BASE + c + 16 j, and starts another only while it fits in SECONDS.  Each finished block's
# results.json is appended as one line to $OUT/blocks.jsonl (pool it: python -m grinch_env.evaluation.pool FILE).
# Run from the repository root with OUT set, e.g.
#   OUT=/tmp/blocks SKIP_INSTALL=1 bash docs/results/learner_netsearch/blocks.sh 2 30 6600 4700
# (without SKIP_INSTALL it first installs the wheels in .whl/ into /tmp/site: how it ran on a machine with no
# package index, see learner_search.md.)
# AGENTS and PLAYERS (environment) change the line-up, e.g. PLAYERS=5 AGENTS="...,search,search,search,search"
# with GAMES a multiple of 5.
# usage: blocks.sh CORES GAMES SECONDS [BASE]
cores=$1; games=$2; budget=$3; base=${4:-4300}
[ -n "$SKIP_INSTALL" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 MKL_NUM_THREADS=1
{ nproc; lscpu | grep -E "Model name|Thread|Core|Socket"; python3 -c "import torch,numpy,sys; print(sys.version, torch.__version__, numpy.__version__)"; } > $OUT/info.txt 2>&1
cat $OUT/info.txt
A=${AGENTS:-"checkpoints/learner_gnoming_league_373min:search=1,samples=8,top_k=3,horizon=round,search,search"}
players=${PLAYERS:-3}
start=$(date +%s)
core() {
  local c=$1 j=0 last=0
  while :; do
    local now=$(( $(date +%s) - start ))
    # start another block only if it fits: the last block's time plus an eighth
    if [ $j -gt 0 ] && [ $(( now + last + last / 8 )) -gt $budget ]; then break; fi
    local s=$(( base + c + 16 * j )) t0=$(date +%s)
    timeout $(( budget - now + 20 )) python3 -m grinch_env.evaluation --game gnoming --players $players --games $games --seed $s \
        --lockstep $games --agents "$A" --out /tmp/ns$s --no-progress > /tmp/ns$s.txt 2>&1
    local rc=$?
    last=$(( $(date +%s) - t0 ))
    echo "core $c seed $s rc $rc took $last s, at $(( $(date +%s) - start )) s" >> $OUT/done.txt
    if [ $rc = 0 ]; then
      flock /tmp/blocks.lock python3 -c "import json; print(json.dumps(json.load(open('/tmp/ns$s/results.json'))))" >> $OUT/blocks.jsonl
    else
      { echo "== seed $s FAILED rc $rc"; tail -20 /tmp/ns$s.txt; } >> $OUT/failed.txt
      break
    fi
    j=$(( j + 1 ))
  done
}
for ((c=0; c<cores; c++)); do core $c & done
wait
sort -t' ' -k4n $OUT/done.txt | tail -40
