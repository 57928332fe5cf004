#!/bin/sh
# After run_queue.sh: the search at 4 players, one budget.
cd "$(dirname "$0")/.."
while pgrep -f "reports_search/run_queue.sh" > /dev/null; do sleep 10; done
nice -n 15 python -m training.match --agent search:playouts=32 --players 4 --games 300 --seed 7 --out reports_search/search_p32_4p.json > reports_search/search_p32_4p.txt 2>&1
