#!/bin/sh
# After run_queue3.sh: 128 playouts at 4 players (same deals as the 32-playout run).
cd "$(dirname "$0")/.."
while pgrep -f "run_queue3.sh" > /dev/null; do sleep 5; done
nice -n 15 python -m training.match --agent search:playouts=128 --players 4 --games 300 --seed 7 --out reports_search/search_p128_4p.json > reports_search/search_p128_4p.txt 2>&1
