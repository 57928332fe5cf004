#!/bin/sh
# After run_queue4.sh: the curve's last point, 512 playouts per move at 2 players (first 200 deals of seed 7).
cd "$(dirname "$0")/.."
while pgrep -f "run_queue4.sh" > /dev/null; do sleep 5; done
nice -n 15 python -m training.match --agent search:playouts=512 --players 2 --games 200 --seed 7 --out reports_search/search_p512_2p.json > reports_search/search_p512_2p.txt 2>&1
