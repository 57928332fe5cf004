#!/bin/sh
# After run_queue5.sh: more deals at 128 playouts, 4 then 2 players.
cd "$(dirname "$0")/.."
while pgrep -f "run_queue5.sh" > /dev/null; do sleep 5; done
nice -n 15 python -m training.match --agent search:playouts=128 --players 4 --games 600 --seed 8 --out reports_search/search_p128_4p_seed8.json > reports_search/search_p128_4p_seed8.txt 2>&1
nice -n 15 python -m training.match --agent search:playouts=128 --players 2 --games 600 --seed 9 --out reports_search/search_p128_2p_seed9.json > reports_search/search_p128_2p_seed9.txt 2>&1
